// A model's identity by content: the SHA-256 of its tensors (names, types, shapes and bytes) as
// the loaders present them, whatever the file is called or where it lies. Training checkpoints
// record it, so that files trained for a model are found again for a copy of it under any path.
#pragma once
#include <string>

#include "model/model_file.h"

namespace medusa {

// In hex. Hashes every tensor byte (about a second a GB) the first time it is asked for a loaded
// model; asked again for the same loaded bytes, it answers from memory.
std::string model_sha256(const ModelFile& model);

}  // namespace medusa
