// Opening a model file of any supported format: above the loaders, which know only ModelFile.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa {

// Picks the loader by content (magic) and path: llama2.c .bin, .gguf, .safetensors / HF directory.
ModelFile load_model(const std::string& path);
// The same from bytes already in memory (fuzzers, tests); `name` is used in error messages.
ModelFile load_model_from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name);

}  // namespace medusa
