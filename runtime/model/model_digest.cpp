#include "model/model_digest.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace medusa {

namespace {

std::string hex(const unsigned char* bytes, unsigned n) {
    std::string s;
    char b[3];
    for (unsigned i = 0; i < n; ++i) {
        std::snprintf(b, sizeof b, "%02x", bytes[i]);
        s += b;
    }
    return s;
}

std::string hash_tensors(const ModelFile& model) {
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
    return hex(digest, n);
}

// The last model hashed, by the bytes it was loaded into: the weak pointer keeps their control
// block's address from being reused by another load while it is remembered.
struct LastDigest {
    std::mutex mutex;
    std::weak_ptr<const void> storage;
    std::string sha256;
};

}  // namespace

std::string model_sha256(const ModelFile& model) {
    static LastDigest last;
    if (model.storage) {
        std::lock_guard lock(last.mutex);
        const bool same = !last.storage.expired() && !last.storage.owner_before(model.storage) &&
                          !model.storage.owner_before(last.storage);
        if (same) return last.sha256;
    }
    std::string digest = hash_tensors(model);
    if (model.storage) {
        std::lock_guard lock(last.mutex);
        last.storage = model.storage, last.sha256 = digest;
    }
    return digest;
}

}  // namespace medusa
