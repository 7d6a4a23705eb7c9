#include "model/llama2c_loader.h"

#include "model/file_bytes.h"

namespace medusa {

namespace {

constexpr uint32_t kMagicV2 = 0x616b3432;  // "ak42"

// Lays out consecutive tensors of one type, checking each fits in the file. `data` is the file's
// bytes when they are all at hand, or null when only its header was read: then only the layout is
// checked against the file's size.
class TensorCursor {
public:
    TensorCursor(ModelFile& m, const uint8_t* data, uint64_t file_size, size_t start)
        : m_(m), data_(data), file_size_(file_size), pos_(start) {}
    void add(const std::string& name, DType type, std::vector<int64_t> shape, int group = 0) {
        Tensor t;
        t.name = name;
        t.type = type;
        t.shape = std::move(shape);
        t.group_size = group;
        const uint64_t n = uint64_t(t.numel());
        if (type == DType::Q8_G && n % uint64_t(group) != 0)
            throw FormatError(m_.path + ": tensor " + name + " has " + std::to_string(n) +
                              " values, not a multiple of the group size " + std::to_string(group));
        const uint64_t bytes = type == DType::F32 ? n * 4 : n + (n / uint64_t(group)) * 4;
        if (bytes > file_size_ - pos_)
            throw FormatError(m_.path + ": truncated: tensor " + name + " needs " + std::to_string(bytes) +
                              " bytes at offset " + std::to_string(pos_) + " but the file has " +
                              std::to_string(file_size_) + " bytes");
        t.data = data_ ? data_ + pos_ : nullptr;
        t.nbytes = size_t(bytes);
        pos_ += bytes;
        m_.tensors.push_back(std::move(t));
    }
    void skip(uint64_t bytes, const char* what) {
        if (bytes > file_size_ - pos_) throw FormatError(m_.path + ": truncated: " + what + " missing");
        pos_ += bytes;
    }
    // A checkpoint ends with its last tensor: bytes past it mean the header is not what it seems.
    void expect_end() const {
        if (pos_ != file_size_)
            throw FormatError(m_.path + ": " + std::to_string(file_size_ - pos_) + " bytes follow the last tensor " +
                              "its llama2.c header implies, where such a checkpoint ends (is it a llama2.c file?)");
    }

private:
    ModelFile& m_;
    const uint8_t* data_;
    uint64_t file_size_;
    uint64_t pos_;
};

std::string layer(int l, const char* what) { return "layers." + std::to_string(l) + "." + what; }

// The checkpoint's tensors from its header, laid out in a file of `file_size` bytes of which `size`
// are at `data`: with the whole file, each tensor's data; with its head only, the layout alone.
ModelFile llama2c_layout(const uint8_t* data, size_t size, uint64_t file_size, const std::string& name) {
    ModelFile m;
    m.path = name;
    ByteReader r(data, size, name, file_size);
    const bool v2 = file_size >= 4 && r.read<uint32_t>("magic") == kMagicV2;
    int group = 0;
    if (v2) {
        const int version = r.read<int32_t>("version");
        if (version != 2) throw FormatError(name + ": llama2.c export version " + std::to_string(version) +
                                            " is not supported (only 0 and 2)");
    } else {
        r.seek(0);
    }
    int32_t h[7];
    for (int& v : h) v = r.read<int32_t>("llama2.c header");
    if (h[5] == INT32_MIN) throw FormatError(name + ": invalid vocabulary size");  // cannot be negated
    LlamaConfig& c = m.config;
    c.dim = h[0], c.hidden_dim = h[1], c.n_layers = h[2], c.n_heads = h[3], c.n_kv_heads = h[4];
    c.vocab_size = h[5] < 0 ? -h[5] : h[5];  // run.c: a negative vocab_size means an untied classifier
    c.seq_len = h[6];
    c.tied_classifier = h[5] > 0;
    if (v2) {
        c.tied_classifier = r.read<uint8_t>("shared classifier flag") != 0;
        group = r.read<int32_t>("group size");
        if (group <= 0 || group > 4096) throw FormatError(name + ": invalid quantization group size " + std::to_string(group));
    }
    validate_config(c, name);
    m.format = v2 ? ModelFormat::Llama2cV2 : ModelFormat::Llama2cV0;
    const int64_t dim = c.dim, hid = c.hidden_dim, kv = c.kv_dim(), vocab = c.vocab_size, L = c.n_layers;
    TensorCursor cur(m, size == file_size ? data : nullptr, file_size, v2 ? 256 : 28);
    if (v2) {
        if (file_size < 256) throw FormatError(name + ": truncated: the version 2 header is 256 bytes");
        for (int l = 0; l < L; ++l) cur.add(layer(l, "attention_norm"), DType::F32, {dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "ffn_norm"), DType::F32, {dim});
        cur.add("norm", DType::F32, {dim});
        cur.add("tok_embeddings", DType::Q8_G, {vocab, dim}, group);
        const struct {
            const char* n;
            int64_t rows, cols;
        } mats[] = {{"wq", dim, dim}, {"wk", kv, dim}, {"wv", kv, dim}, {"wo", dim, dim},
                    {"w1", hid, dim}, {"w2", dim, hid}, {"w3", hid, dim}};
        for (const auto& mt : mats)
            for (int l = 0; l < L; ++l) cur.add(layer(l, mt.n), DType::Q8_G, {mt.rows, mt.cols}, group);
        if (!c.tied_classifier) cur.add("output", DType::Q8_G, {vocab, dim}, group);
    } else {
        cur.add("tok_embeddings", DType::F32, {vocab, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "attention_norm"), DType::F32, {dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "wq"), DType::F32, {dim, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "wk"), DType::F32, {kv, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "wv"), DType::F32, {kv, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "wo"), DType::F32, {dim, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "ffn_norm"), DType::F32, {dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "w1"), DType::F32, {hid, dim});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "w2"), DType::F32, {dim, hid});
        for (int l = 0; l < L; ++l) cur.add(layer(l, "w3"), DType::F32, {hid, dim});
        cur.add("norm", DType::F32, {dim});
        cur.skip(uint64_t(c.seq_len) * uint64_t(c.head_dim()) * 4, "RoPE tables (freq_cis)");  // real + imag halves
        if (!c.tied_classifier) cur.add("output", DType::F32, {vocab, dim});
    }
    cur.expect_end();
    validate_llama_tensors(m);
    return m;
}

}  // namespace

void check_llama2c_head(const FileHead& head, const std::string& name) {
    llama2c_layout(head.bytes.data(), head.bytes.size(), head.file_size, name);
}

ModelFile load_llama2c(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    ModelFile m = llama2c_layout(bytes->data(), bytes->size(), bytes->size(), name);
    m.storage = bytes;
    return m;
}

}  // namespace medusa
