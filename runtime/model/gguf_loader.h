// GGUF v2/v3 files of the `llama` architecture: tensors of the types in model/block_format.h,
// hyper-parameters from metadata, and the embedded sentencepiece-style vocabulary.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/gguf_metadata.h"
#include "model/model_file.h"

namespace medusa {
ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);
// The same with the file's header already parsed (read_gguf_header_of_file), so it is not parsed
// twice; the tensors are checked against `bytes` all the same.
ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name, GgufHeader header);
// The canonical name (model_file.h) of a GGUF tensor name, "" for tensors the engine ignores.
std::string gguf_canonical_name(const std::string& gguf_name);
// A view of one tensor of a GGUF file's `bytes` (named as in the file, shape outermost first):
// its type must be one this engine runs and its data must lie inside the file, else FormatError
// naming `file` and the tensor.
Tensor gguf_tensor(const GgufHeader& header, const std::vector<uint8_t>& bytes, const GgufTensorInfo& info,
                   const std::string& file);
// The GGUF name of a canonical tensor name ("layers.3.w1" -> "blk.3.ffn_gate.weight"), "" when none.
std::string gguf_tensor_name(const std::string& canonical);
}  // namespace medusa
