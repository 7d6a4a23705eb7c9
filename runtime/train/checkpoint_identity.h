// What a training checkpoint was trained from. Resuming one on another model, or with another
// number of heads, would either fail deep inside the trainer or silently go on training parameters
// that fit nothing; so each checkpoint records the base model and the trained shape, and a resume
// that does not match them is refused, naming both.
#pragma once
#include <map>
#include <string>

#include "model/model_file.h"

namespace medusa::train {

struct CheckpointIdentity {
    std::string model;         // the base model's path, for messages
    std::string model_sha256;  // of its tensors (names, types, shapes and bytes), in hex
    std::string shape;         // of the trained parameters, in words: "4 heads of 1 block"

    bool empty() const { return model_sha256.empty(); }
};

// The identity of training `shape` on `model`: hashes every tensor byte (about a second a GB).
CheckpointIdentity checkpoint_identity(const ModelFile& model, const std::string& shape);

// As a checkpoint's safetensors metadata, and back.
void add_identity(const CheckpointIdentity& id, std::map<std::string, std::string>& metadata);
// What a checkpoint's metadata records (empty() when it records nothing: saved before identities were).
CheckpointIdentity recorded_identity(const std::map<std::string, std::string>& metadata);
// Throws FormatError "CHECKPOINT: ..." naming both models (or shapes) when `metadata` records
// another identity than `expected`. A checkpoint from before identities were recorded passes.
void check_identity(const std::map<std::string, std::string>& metadata, const CheckpointIdentity& expected,
                    const std::string& checkpoint);

}  // namespace medusa::train
