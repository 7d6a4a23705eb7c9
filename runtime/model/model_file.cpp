#include "model/model_file.h"

#include <cstring>
#include <filesystem>

#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "model/llama2c_loader.h"

namespace medusa {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "f32";
        case DType::F16: return "f16";
        case DType::BF16: return "bf16";
        case DType::Q8_0: return "q8_0";
        case DType::Q4_0: return "q4_0";
        case DType::Q8_G: return "q8 (llama2.c groups)";
    }
    return "?";
}

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

const Tensor* ModelFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& ModelFile::get(const std::string& name) const {
    if (const Tensor* t = find(name)) return *t;
    throw FormatError(path + ": tensor '" + name + "' is missing");
}

ModelFile load_model(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw FormatError(path + ": no such file");
    if (fs::is_directory(path, ec)) throw FormatError(path + ": is a directory, not a model file");
    auto bytes = read_file_bytes(path);
    return load_model_from_memory(std::move(bytes), path);
}

ModelFile load_model_from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    if (bytes->size() >= 4 && std::memcmp(bytes->data(), "GGUF", 4) == 0) return load_gguf(std::move(bytes), name);
    return load_llama2c(std::move(bytes), name);
}

}  // namespace medusa
