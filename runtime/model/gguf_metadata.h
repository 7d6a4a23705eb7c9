// The GGUF container: header, typed metadata and the tensor table, read and bounds-checked once
// for the model loader and the vocabulary loader.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/file_bytes.h"

namespace medusa {

enum GgufType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, U64 = 10,
    I64 = 11, F64 = 12
};

struct GgufValue {
    uint32_t type = U8;
    uint32_t item_type = U8;         // ARRAY only
    double number = 0;               // every scalar, widened
    std::string text;                // STRING
    std::vector<std::string> texts;  // ARRAY of STRING
    std::vector<double> numbers;     // ARRAY of scalars
};

// Typed access to the metadata; every error names the file and the key.
class GgufMetadata {
public:
    GgufMetadata(std::map<std::string, GgufValue> kv, std::string file) : kv_(std::move(kv)), file_(std::move(file)) {}
    // A scalar number, `fallback` when absent; throws when required and absent, or of the wrong kind.
    double number(const std::string& key, double fallback, bool required) const;
    int integer(const std::string& key, double fallback, bool required) const;
    float real(const std::string& key, double fallback) const;
    bool boolean(const std::string& key, bool fallback) const;
    std::string text(const std::string& key) const;  // "" when absent or not a string
    // The array, or null when absent; throws when it is not an array of strings (STRING) or numbers.
    const GgufValue* array(const std::string& key, uint32_t item_type) const;
    bool has(const std::string& key) const { return kv_.count(key) != 0; }
    bool is_array(const std::string& key) const {
        auto it = kv_.find(key);
        return it != kv_.end() && it->second.type == ARRAY;
    }
    const std::string& file() const { return file_; }

private:
    std::map<std::string, GgufValue> kv_;
    std::string file_;
};

struct GgufTensorInfo {
    std::string name;
    std::vector<uint64_t> dims;  // ne[0] innermost
    uint32_t type;
    uint64_t offset;             // from data_start
};

struct GgufHeader {
    GgufMetadata meta;
    std::vector<GgufTensorInfo> tensors;
    uint64_t data_start = 0;  // absolute offset of the tensor data
};

// Parses everything before the tensor data; throws FormatError "<name>: <problem>".
GgufHeader read_gguf_header(const std::vector<uint8_t>& bytes, const std::string& name);
// The same from the first `size` bytes of a file of `file_size` bytes: throws HeadTooShort when the
// header runs past them (model/file_bytes.h).
GgufHeader read_gguf_header(const uint8_t* data, size_t size, const std::string& name, uint64_t file_size);
// The header of the GGUF file at `path`, reading no more of it than the header needs: a
// vocabulary comes out of a model file of gigabytes without its tensors being read.
GgufHeader read_gguf_header_of_file(const std::string& path);

}  // namespace medusa
