#include "model/gguf_writer.h"

#include <cstring>
#include <stdexcept>

#include "model/atomic_file.h"
#include "model/block_format.h"
#include "model/gguf_loader.h"
#include "model/gguf_metadata.h"
#include "model/rope_rows.h"

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

// The smallest local:global pattern that gives these local layers, or 0 when none does.
int window_pattern(const std::vector<uint8_t>& local) {
    for (int p = 1; p <= int(local.size()) + 1; ++p)
        if (local_layer_pattern(int(local.size()), p) == local) return p;
    return 0;
}

void write_hyperparameters(HeaderBytes& h, const ModelFile& m) {
    const LlamaConfig& c = m.config;
    const ArchitectureFeatures& a = c.arch;
    const FamilyTraits& family = family_traits(a.family);
    const std::string k = std::string(family.gguf_arch) + ".";
    std::string name = m.path.substr(m.path.find_last_of("/:") + 1);
    h.text("general.architecture", family.gguf_arch);
    h.text("general.name", name.empty() ? "model" : name);
    h.u32(k + "context_length", uint32_t(c.seq_len));
    h.u32(k + "embedding_length", uint32_t(c.dim));
    h.u32(k + "feed_forward_length", uint32_t(c.hidden_dim));
    h.u32(k + "block_count", uint32_t(c.n_layers));
    h.u32(k + "attention.head_count", uint32_t(c.n_heads));
    h.u32(k + "attention.head_count_kv", uint32_t(c.n_kv_heads));
    if (c.head_size > 0) {
        h.u32(k + "attention.key_length", uint32_t(c.head_size));
        h.u32(k + "attention.value_length", uint32_t(c.head_size));
    }
    h.u32(k + "rope.dimension_count", uint32_t(rotated_dims(c)));
    h.f32(k + "rope.freq_base", c.rope_theta);
    h.f32(k + "attention.layer_norm_rms_epsilon", c.rms_eps);
    if (c.rope_position_scale != 1.0f) {
        h.text(k + "rope.scaling.type", "linear");
        h.f32(k + "rope.scaling.factor", c.rope_position_scale);
    }
    if (a.sliding_window > 0) {
        h.u32(k + "attention.sliding_window", uint32_t(a.sliding_window));
        if (const int p = window_pattern(a.local_layers); p > 0)
            h.u32(k + "attention.sliding_window_pattern", uint32_t(p));
        else
            h.array(k + "attention.sliding_window_pattern", BOOL, int(a.local_layers.size()),
                    [&](int l) { h.raw<uint8_t>(a.local_layers[size_t(l)]); });
        h.f32(k + "rope.freq_base_swa", a.local_rope_theta);
    }
    if (a.rope_original_context > 0) {
        h.u32(k + "rope.scaling.original_context_length", uint32_t(a.rope_original_context));
        h.f32(k + "rope.scaling.attn_factor", a.rope_attn_factor);
    }
}

// `n` pieces: the tokenizer's, then (a synthetic model's larger vocabulary) unused fillers.
void write_vocabulary(HeaderBytes& h, const Tokenizer& tok, int n) {
    const int own = tok.vocab_size();
    int unknown = 0;
    for (int id = 0; id < own; ++id)
        if (tok.token_type(id) == kTokenUnknown) unknown = id;
    h.text("tokenizer.ggml.model", "llama");
    h.array("tokenizer.ggml.tokens", STRING, n,
            [&](int id) { h.string(id < own ? tok.piece(id) : "<unused" + std::to_string(id) + ">"); });
    h.array("tokenizer.ggml.scores", F32, n, [&](int id) { h.raw(id < own ? tok.score(id) : -1e4f); });
    h.array("tokenizer.ggml.token_type", I32, n, [&](int id) { h.raw(id < own ? tok.token_type(id) : kTokenUnused); });
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
    // A synthetic model of a real shape (a vocabulary of 151,936) takes a smaller tokenizer's pieces
    // and unused fillers; a real model's vocabulary must be the tokenizer's.
    if (tok.vocab_size() != m.config.vocab_size && !(m.format == ModelFormat::Synthetic && tok.vocab_size() < m.config.vocab_size))
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

namespace {

// One tensor of the file: its GGUF name and shape, and the model tensors whose rows it stacks (a
// family that stores gate|up fused, Phi-3's ffn_up, gets w1 and w3 as one).
struct FileTensor {
    std::string name;
    std::vector<int64_t> shape;
    DType type;
    std::vector<const Tensor*> parts;
    size_t nbytes() const {
        size_t n = 0;
        for (const Tensor* t : parts) n += t->nbytes;
        return n;
    }
};

std::vector<FileTensor> file_tensors(const ModelFile& m) {
    const bool fused_gate_up = family_traits(m.config.arch.family).fused_gate_up;
    std::vector<FileTensor> out;
    for (const Tensor& t : m.tensors) {
        const std::string role = t.name.substr(t.name.rfind('.') + 1);
        if (fused_gate_up && t.name.rfind("layers.", 0) == 0 && (role == "w1" || role == "w3")) {
            if (role == "w3") continue;  // stacked under w1's entry
            const Tensor& up = m.get(t.name.substr(0, t.name.size() - 2) + "w3");
            std::vector<int64_t> shape = t.shape;
            shape[0] += up.shape[0];
            out.push_back({gguf_tensor_name(t.name.substr(0, t.name.size() - 2) + "w3"), shape, t.type, {&t, &up}});
            continue;
        }
        out.push_back({gguf_tensor_name(t.name), t.shape, t.type, {&t}});
    }
    return out;
}

}  // namespace

void write_gguf(const ModelFile& m, const Tokenizer& tok, const std::string& path,
                const std::function<void(size_t, size_t)>& progress) {
    check_writable(m, tok);
    HeaderBytes keys;
    write_hyperparameters(keys, m);
    write_vocabulary(keys, tok, m.config.vocab_size);

    const std::vector<FileTensor> tensors = file_tensors(m);
    HeaderBytes h;
    h.raw<uint32_t>(0x46554747);  // "GGUF"
    h.raw<uint32_t>(3);
    h.raw<uint64_t>(tensors.size());
    h.raw<uint64_t>(keys.keys());
    h.bytes() += keys.bytes();
    uint64_t offset = 0;
    for (const FileTensor& t : tensors) {
        h.string(t.name);
        h.raw<uint32_t>(uint32_t(t.shape.size()));
        for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) h.raw<uint64_t>(uint64_t(*d));  // ne[0] innermost
        h.raw<uint32_t>(gguf_format(t.type)->ggml_id);
        h.raw<uint64_t>(offset);
        offset = (offset + t.nbytes() + kAlignment - 1) / kAlignment * kAlignment;
    }
    h.pad_to(kAlignment);

    AtomicFileWriter out(path);
    out.write(h.bytes());
    size_t written = 0, total = 0;
    for (const FileTensor& t : tensors) total += t.nbytes();
    const std::string padding(kAlignment, '\0');
    const bool rotate_half = family_traits(m.config.arch.family).gguf_pairing == RopePairing::RotateHalf;
    for (const FileTensor& f : tensors) {
        for (const Tensor* t : f.parts) {
            // NeoX families' files pair q/k rows as rotate_half does: the loader's reordering undone.
            if (const int heads = rotate_half ? rope_row_heads(m.config, t->name) : 0; heads > 0) {
                const auto rows = permute_rope_rows(t->data, t->shape[0], t->nbytes / size_t(t->shape[0]), heads, true,
                                                    rotated_dims(m.config));
                out.write(std::string_view(reinterpret_cast<const char*>(rows.data()), rows.size()));
            } else {
                out.write(std::string_view(reinterpret_cast<const char*>(t->data), t->nbytes));
            }
            written += t->nbytes;
        }
        out.write(std::string_view(padding.data(), (kAlignment - f.nbytes() % kAlignment) % kAlignment));
        if (progress) progress(written, total);
    }
    out.commit();
}

}  // namespace medusa
