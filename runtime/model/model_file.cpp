#include "model/model_file.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "model/file_bytes.h"
#include "model/gguf_loader.h"
#include "model/gguf_metadata.h"
#include "model/hf_loader.h"
#include "model/llama2c_loader.h"

namespace medusa {

const Tensor* ModelFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& ModelFile::get(const std::string& name) const {
    if (const Tensor* t = find(name)) return *t;
    throw FormatError(path + ": tensor '" + name + "' is missing");
}

void validate_llama_tensors(const ModelFile& m) {
    const LlamaConfig& c = m.config;
    const int64_t dim = c.dim, hid = c.hidden_dim, kv = c.kv_dim(), vocab = c.vocab_size;
    auto expect = [&](const std::string& name, const std::vector<int64_t>& shape) {
        const Tensor& t = m.get(name);
        if (t.shape != shape)
            throw FormatError(m.path + ": tensor '" + name + "' has shape " + shape_text(t.shape) + ", expected " +
                              shape_text(shape) + " from the model configuration");
    };
    expect("tok_embeddings", {vocab, dim});
    expect("norm", {dim});
    if (m.find("rope_freqs")) expect("rope_freqs", {c.head_dim() / 2});
    if (!c.tied_classifier) expect("output", {vocab, dim});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        expect(p + "attention_norm", {dim});
        expect(p + "ffn_norm", {dim});
        expect(p + "wq", {dim, dim});
        expect(p + "wk", {kv, dim});
        expect(p + "wv", {kv, dim});
        expect(p + "wo", {dim, dim});
        expect(p + "w1", {hid, dim});
        expect(p + "w2", {dim, hid});
        expect(p + "w3", {hid, dim});
        if (c.qkv_bias) {
            expect(p + "bq", {dim});
            expect(p + "bk", {kv});
            expect(p + "bv", {kv});
        }
        // The GPU fuses the gate and up projections into one matmul of one weight type.
        if (m.get(p + "w1").type != m.get(p + "w3").type)
            throw FormatError(m.path + ": layer " + std::to_string(l) + " stores its FFN gate and up matrices as " +
                              dtype_name(m.get(p + "w1").type) + " and " + dtype_name(m.get(p + "w3").type) +
                              ", which is not supported (the fused SwiGLU needs one type for both, as llama.cpp's "
                              "quantizer writes them)");
    }
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

namespace {

enum class ModelFormat { Gguf, Llama2c };

// By the first bytes: GGUF's magic; llama2.c has none, but a safetensors header is told apart.
ModelFormat format_of(const std::vector<uint8_t>& head, const std::string& name) {
    if (head.size() >= 4 && std::memcmp(head.data(), "GGUF", 4) == 0) return ModelFormat::Gguf;
    // `{"` at offset 8 cannot start a llama2.c header: it would mean more than 8000 layers.
    if (head.size() >= 10 && head[8] == '{' && head[9] == '"')
        throw FormatError(name + ": looks like a safetensors file: load the Hugging Face model folder "
                                 "(config.json + model.safetensors) instead");
    // A llama2.c header's sizes are small integers, so it holds zero bytes; text has none.
    const size_t n = std::min<size_t>(head.size(), 28);
    const bool text = n > 0 && std::all_of(head.begin(), head.begin() + long(n), [](uint8_t c) {
        return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
    });
    if (text) throw FormatError(name + ": not a model file (no GGUF magic, and it begins with text where a llama2.c header would be)");
    return ModelFormat::Llama2c;
}

}  // namespace

ModelFile load_model(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw FormatError(path + ": no such file or directory");
    // Hugging Face checkpoints are folders (config.json + shards) or need the config.json beside them.
    if (fs::is_directory(path, ec) || ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json"))
        return load_hf(path);
    // The header first, against the file's size, so that gigabytes behind a head that is no model
    // are never read: GGUF's header and tensor table (read as far as they go, and parsed once), a
    // llama2.c header and the exact size it implies.
    const FileHead head = read_file_head(path, 4096);
    if (format_of(head.bytes, path) == ModelFormat::Gguf) {
        GgufHeader header = read_gguf_header_of_file(path);
        return load_gguf(read_file_bytes(path), path, std::move(header));
    }
    check_llama2c_head(head, path);
    return load_llama2c(read_file_bytes(path), path);
}


ModelFile load_model_from_memory(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    if (!bytes) throw FormatError(name + ": no data");
    if (format_of(*bytes, name) == ModelFormat::Gguf) return load_gguf(std::move(bytes), name);
    return load_llama2c(std::move(bytes), name);
}

}  // namespace medusa
