#include "train/checkpoint_identity.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace medusa::train {

namespace {

constexpr const char* kModelKey = "base_model";
constexpr const char* kDigestKey = "base_model_sha256";
constexpr const char* kShapeKey = "trained_shape";

std::string hex(const unsigned char* bytes, unsigned n) {
    std::string s;
    char b[3];
    for (unsigned i = 0; i < n; ++i) {
        std::snprintf(b, sizeof b, "%02x", bytes[i]);
        s += b;
    }
    return s;
}

}  // namespace

CheckpointIdentity checkpoint_identity(const ModelFile& model, const std::string& shape) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 is not available");
    auto feed = [&](const void* data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); };
    for (const Tensor& t : model.tensors) {
        feed(t.name.data(), t.name.size() + 1);  // with the terminating NUL: names cannot run together
        const int type = int(t.type);
        feed(&type, sizeof type);
        for (int64_t d : t.shape) feed(&d, sizeof d);
        feed(t.data, t.nbytes);
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(ctx.get(), digest, &n);
    return {model.path, hex(digest, n), shape};
}

void add_identity(const CheckpointIdentity& id, std::map<std::string, std::string>& metadata) {
    if (id.empty()) return;
    metadata[kModelKey] = id.model;
    metadata[kDigestKey] = id.model_sha256;
    metadata[kShapeKey] = id.shape;
}

void check_identity(const std::map<std::string, std::string>& metadata, const CheckpointIdentity& expected,
                    const std::string& checkpoint) {
    if (expected.empty()) return;
    auto recorded = [&](const char* key) {
        const auto it = metadata.find(key);
        return it == metadata.end() ? std::string() : it->second;
    };
    const std::string model = recorded(kModelKey), digest = recorded(kDigestKey), shape = recorded(kShapeKey);
    if (digest.empty()) return;
    if (digest != expected.model_sha256)
        throw FormatError(checkpoint + ": was trained on " + model + " (SHA-256 " + digest.substr(0, 12) +
                          "...), not on " + expected.model + " (" + expected.model_sha256.substr(0, 12) +
                          "...): resume with the model it was trained on, or start afresh without --resume");
    if (shape != expected.shape)
        throw FormatError(checkpoint + ": holds " + shape + ", but this run trains " + expected.shape +
                          ": resume with the same settings, or start afresh without --resume");
}

}  // namespace medusa::train
