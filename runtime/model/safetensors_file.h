// One .safetensors file (Hugging Face): an 8-byte header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the raw data. Used for model shards and for
// Medusa head files (medusa_lm_head.safetensors), and written back for trained heads.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/tensor.h"

namespace medusa {

struct SafetensorsLayout;  // a header's tensors, checked against a file size

// An integer tensor (I64, I32 or BOOL): index maps such as EAGLE-3's d2t and t2d.
struct IndexTensor {
    enum class Type { I64, I32, Bool };
    std::string name;
    Type type = Type::I64;
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    size_t nbytes = 0;
    int64_t numel() const;
    std::vector<int64_t> values() const;  // each element, widened
};

class SafetensorsFile {
public:
    // Checks the header against the file's size, then reads and validates the whole file, of at
    // most `max_bytes`; throws FormatError "<path>: <problem>".
    static SafetensorsFile open(const std::string& path, uint64_t max_bytes = UINT64_MAX);
    // The same for bytes in memory; `name` is used in error messages.
    static SafetensorsFile from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);

    const std::string& path() const { return path_; }
    // In file order (by data offset): the F32, F16 and BF16 tensors; integer tensors are apart.
    const std::vector<Tensor>& tensors() const { return tensors_; }
    const Tensor* find(const std::string& name) const;
    const IndexTensor* find_index(const std::string& name) const;
    const std::vector<IndexTensor>& index_tensors() const { return index_tensors_; }
    const Tensor& get(const std::string& name) const;  // throws FormatError naming the file
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // Keeps the bytes behind every Tensor::data alive.
    std::shared_ptr<const std::vector<uint8_t>> bytes() const { return bytes_; }

private:
    // The file whose header `layout` is, with its bytes: each tensor's data set.
    static SafetensorsFile with_data(SafetensorsLayout layout, std::shared_ptr<const std::vector<uint8_t>> bytes,
                                     const std::string& name);
    std::string path_;
    std::vector<Tensor> tensors_;
    std::vector<IndexTensor> index_tensors_;
    std::unordered_map<std::string, size_t> index_;  // name -> position in tensors_: an index of
                                                     // 240,000 entries is checked in linear time
    std::map<std::string, std::string> metadata_;
    std::shared_ptr<const std::vector<uint8_t>> bytes_;
};

// Only the "__metadata__" of the file at `path`, reading its header and nothing after it.
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// The file bytes for `tensors` (F32, F16 or BF16; each Tensor::data must hold nbytes), then
// the integer tensors `indices`, with string `metadata` under "__metadata__". Names must be unique.
std::vector<uint8_t> serialize_safetensors(const std::vector<Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata = {},
                                           const std::vector<IndexTensor>& indices = {});
// Writes serialize_safetensors(...) to `path` (through a temporary file, then renamed).
void write_safetensors(const std::string& path, const std::vector<Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// An integer tensor viewing values the caller owns (they must outlive it), for writing: I64
// views int64_t values, Bool one byte (0 or 1) per value.
IndexTensor i64_tensor(std::string name, const std::vector<int64_t>& v);
IndexTensor bool_tensor(std::string name, const std::vector<uint8_t>& v);

// Element size of F32/F16/BF16 and the safetensors dtype string ("F32", "F16", "BF16").
size_t safetensors_element_size(DType t);
const char* safetensors_dtype_name(DType t);

}  // namespace medusa
