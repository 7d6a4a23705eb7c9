#include "train/checkpoint_identity.h"

#include "model/model_digest.h"

namespace medusa::train {

namespace {

constexpr const char* kModelKey = "base_model";
constexpr const char* kDigestKey = "base_model_sha256";
constexpr const char* kShapeKey = "trained_shape";

}  // namespace

CheckpointIdentity checkpoint_identity(const ModelFile& model, const std::string& shape) {
    return {model.path, model_sha256(model), shape};
}

void add_identity(const CheckpointIdentity& id, std::map<std::string, std::string>& metadata) {
    if (id.empty()) return;
    metadata[kModelKey] = id.model;
    metadata[kDigestKey] = id.model_sha256;
    metadata[kShapeKey] = id.shape;
}

CheckpointIdentity recorded_identity(const std::map<std::string, std::string>& metadata) {
    auto recorded = [&](const char* key) {
        const auto it = metadata.find(key);
        return it == metadata.end() ? std::string() : it->second;
    };
    return {recorded(kModelKey), recorded(kDigestKey), recorded(kShapeKey)};
}

void check_identity(const std::map<std::string, std::string>& metadata, const CheckpointIdentity& expected,
                    const std::string& checkpoint) {
    if (expected.empty()) return;
    const CheckpointIdentity id = recorded_identity(metadata);
    if (id.empty()) return;
    if (id.model_sha256 != expected.model_sha256)
        throw FormatError(checkpoint + ": was trained on " + id.model + " (SHA-256 " + id.model_sha256.substr(0, 12) +
                          "...), not on " + expected.model + " (" + expected.model_sha256.substr(0, 12) +
                          "...): resume with the model it was trained on, or start afresh without --resume");
    if (id.shape != expected.shape)
        throw FormatError(checkpoint + ": holds " + id.shape + ", but this run trains " + expected.shape +
                          ": resume with the same settings, or start afresh without --resume");
}

}  // namespace medusa::train
