// GGUF v2/v3 files of the `llama` architecture: F32, F16, BF16, Q8_0 and Q4_0 tensors,
// hyper-parameters from metadata, and the embedded sentencepiece-style vocabulary.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa {
ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);
}  // namespace medusa
