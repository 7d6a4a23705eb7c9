#include "model/gguf_writer.h"

#include <cstring>
#include <stdexcept>

#include "model/atomic_file.h"
#include "model/block_format.h"
#include "model/gguf_loader.h"
#include "model/gguf_metadata.h"

namespace medusa {

namespace {

constexpr uint64_t kAlignment = 32;  // GGUF's default general.alignment

// The header's bytes: metadata keys and tensor descriptions, in GGUF's little-endian encoding.
class HeaderBytes {
public:
    template <typename T>
    void raw(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out_.append(b, sizeof(T));
    }
    void string(const std::string& s) {
        raw<uint64_t>(s.size());
        out_ += s;
    }
    void key(const std::string& k, GgufType type) {
        string(k);
        raw<uint32_t>(type);
        ++keys_;
    }
    void u32(const std::string& k, uint32_t v) { key(k, U32), raw(v); }
    void f32(const std::string& k, float v) { key(k, F32), raw(v); }
    void boolean(const std::string& k, bool v) { key(k, BOOL), raw<uint8_t>(v ? 1 : 0); }
    void text(const std::string& k, const std::string& v) { key(k, STRING), string(v); }
    // `write(i)` writes item i of `count`.
    template <typename Write>
    void array(const std::string& k, GgufType item, int count, Write write) {
        key(k, ARRAY);
        raw<uint32_t>(item);
        raw<uint64_t>(uint64_t(count));
        for (int i = 0; i < count; ++i) write(i);
    }
    void pad_to(uint64_t alignment) { out_.resize((out_.size() + alignment - 1) / alignment * alignment, '\0'); }
    std::string& bytes() { return out_; }
    uint64_t keys() const { return keys_; }

private:
    std::string out_;
    uint64_t keys_ = 0;
};

void write_hyperparameters(HeaderBytes& h, const ModelFile& m) {
    const LlamaConfig& c = m.config;
    std::string name = m.path.substr(m.path.find_last_of("/:") + 1);
    h.text("general.architecture", "llama");
    h.text("general.name", name.empty() ? "model" : name);
    h.u32("llama.context_length", uint32_t(c.seq_len));
    h.u32("llama.embedding_length", uint32_t(c.dim));
    h.u32("llama.feed_forward_length", uint32_t(c.hidden_dim));
    h.u32("llama.block_count", uint32_t(c.n_layers));
    h.u32("llama.attention.head_count", uint32_t(c.n_heads));
    h.u32("llama.attention.head_count_kv", uint32_t(c.n_kv_heads));
    h.u32("llama.rope.dimension_count", uint32_t(c.head_dim()));
    h.f32("llama.rope.freq_base", c.rope_theta);
    h.f32("llama.attention.layer_norm_rms_epsilon", c.rms_eps);
    if (c.rope_position_scale != 1.0f) {
        h.text("llama.rope.scaling.type", "linear");
        h.f32("llama.rope.scaling.factor", c.rope_position_scale);
    }
}

void write_vocabulary(HeaderBytes& h, const Tokenizer& tok) {
    const int n = tok.vocab_size();
    int unknown = 0;
    for (int id = 0; id < n; ++id)
        if (tok.token_type(id) == kTokenUnknown) unknown = id;
    h.text("tokenizer.ggml.model", "llama");
    h.array("tokenizer.ggml.tokens", STRING, n, [&](int id) { h.string(tok.piece(id)); });
    h.array("tokenizer.ggml.scores", F32, n, [&](int id) { h.raw(tok.score(id)); });
    h.array("tokenizer.ggml.token_type", I32, n, [&](int id) { h.raw(tok.token_type(id)); });
    if (tok.bos_id() >= 0) h.u32("tokenizer.ggml.bos_token_id", uint32_t(tok.bos_id()));
    if (tok.eos_id() >= 0) h.u32("tokenizer.ggml.eos_token_id", uint32_t(tok.eos_id()));
    h.u32("tokenizer.ggml.unknown_token_id", uint32_t(unknown));
    h.boolean("tokenizer.ggml.add_bos_token", tok.adds_bos());
    h.boolean("tokenizer.ggml.add_eos_token", false);
}

void check_writable(const ModelFile& m, const Tokenizer& tok) {
    if (tok.byte_level())
        throw std::invalid_argument(tok.source() +
                                    ": a byte-level BPE vocabulary cannot be written (sentencepiece ones can)");
    if (tok.vocab_size() != m.config.vocab_size)
        throw std::invalid_argument(tok.source() + ": " + std::to_string(tok.vocab_size()) + " pieces, but " + m.path +
                                    " has a vocabulary of " + std::to_string(m.config.vocab_size));
    for (const Tensor& t : m.tensors) {
        if (!gguf_format(t.type))
            throw std::invalid_argument(m.path + ": tensor '" + t.name + "' is " + dtype_name(t.type) +
                                        ", which GGUF cannot hold (its types are " + supported_gguf_types() + ")");
        const std::string problem = split_block_problem(*gguf_format(t.type), t.shape.empty() ? 0 : t.shape.back());
        if (!problem.empty())
            throw std::invalid_argument(m.path + ": tensor '" + t.name + "' " + problem + ", which GGUF cannot hold");
        if (gguf_tensor_name(t.name).empty())
            throw std::invalid_argument(m.path + ": tensor '" + t.name + "' has no GGUF name");
    }
}

}  // namespace

void write_gguf(const ModelFile& m, const Tokenizer& tok, const std::string& path,
                const std::function<void(size_t, size_t)>& progress) {
    check_writable(m, tok);
    HeaderBytes keys;
    write_hyperparameters(keys, m);
    write_vocabulary(keys, tok);

    HeaderBytes h;
    h.raw<uint32_t>(0x46554747);  // "GGUF"
    h.raw<uint32_t>(3);
    h.raw<uint64_t>(m.tensors.size());
    h.raw<uint64_t>(keys.keys());
    h.bytes() += keys.bytes();
    uint64_t offset = 0;
    for (const Tensor& t : m.tensors) {
        h.string(gguf_tensor_name(t.name));
        h.raw<uint32_t>(uint32_t(t.shape.size()));
        for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) h.raw<uint64_t>(uint64_t(*d));  // ne[0] innermost
        h.raw<uint32_t>(gguf_format(t.type)->ggml_id);
        h.raw<uint64_t>(offset);
        offset = (offset + t.nbytes + kAlignment - 1) / kAlignment * kAlignment;
    }
    h.pad_to(kAlignment);

    AtomicFileWriter out(path);
    out.write(h.bytes());
    size_t written = 0, total = 0;
    for (const Tensor& t : m.tensors) total += t.nbytes;
    const std::string padding(kAlignment, '\0');
    for (const Tensor& t : m.tensors) {
        out.write(std::string_view(reinterpret_cast<const char*>(t.data), t.nbytes));
        out.write(std::string_view(padding.data(), (kAlignment - t.nbytes % kAlignment) % kAlignment));
        written += t.nbytes;
        if (progress) progress(written, total);
    }
    out.commit();
}

}  // namespace medusa
