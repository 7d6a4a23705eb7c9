#include "model/gguf_writer.h"

#include <cstring>
#include <fstream>
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
    // `count` whole entries (name, type and value) as another file stored them.
    void entries(const std::string& bytes, uint64_t count) {
        out_ += bytes;
        keys_ += count;
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

// general.name: `name`, or the model's file name.
void write_hyperparameters(HeaderBytes& h, const ModelFile& m, const std::string& name_of_model = "") {
    const LlamaConfig& c = m.config;
    const ArchitectureFeatures& a = c.arch;
    const FamilyTraits& family = family_traits(a.family);
    const std::string k = std::string(family.gguf_arch) + ".";
    std::string name = name_of_model.empty() ? m.path.substr(m.path.find_last_of("/:") + 1) : name_of_model;
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

void check_tensors_writable(const ModelFile& m);

void check_writable(const ModelFile& m, const Tokenizer& tok) {
    if (tok.byte_level())
        throw std::invalid_argument(tok.source() +
                                    ": a byte-level BPE vocabulary cannot be written from a tokenizer (sentencepiece "
                                    "ones can; a GGUF file's is carried through with read_gguf_vocabulary_keys)");
    // A synthetic model of a real shape (a vocabulary of 151,936) takes a smaller tokenizer's pieces
    // and unused fillers; a real model's vocabulary must be the tokenizer's.
    if (tok.vocab_size() != m.config.vocab_size && !(m.format == ModelFormat::Synthetic && tok.vocab_size() < m.config.vocab_size))
        throw std::invalid_argument(tok.source() + ": " + std::to_string(tok.vocab_size()) + " pieces, but " + m.path +
                                    " has a vocabulary of " + std::to_string(m.config.vocab_size));
    check_tensors_writable(m);
}

void check_tensors_writable(const ModelFile& m) {
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

namespace {

// The file: header with `keys` (hyper-parameters and vocabulary), then every tensor.
void write_file(const ModelFile& m, HeaderBytes& keys, const std::string& path,
                const std::function<void(size_t, size_t)>& progress) {
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

// Reads a GGUF header's key/value entries from a file, keeping those whose name starts with
// "tokenizer." as their bytes. Sizes are checked against the file's, so a damaged header ends in
// FormatError rather than a huge allocation.
class VocabularyKeyReader {
public:
    explicit VocabularyKeyReader(const std::string& path) : in_(path, std::ios::binary), path_(path) {
        if (!in_) throw FormatError(path + ": cannot open");
        in_.seekg(0, std::ios::end);
        size_ = uint64_t(in_.tellg());
        in_.seekg(0);
    }

    GgufVocabularyKeys read() {
        GgufVocabularyKeys v;
        v.source = path_;
        std::string skip;
        if (get<uint32_t>(skip) != 0x46554747) throw FormatError(path_ + ": not a GGUF file");
        const uint32_t version = get<uint32_t>(skip);
        if (version != 2 && version != 3)
            throw FormatError(path_ + ": GGUF version " + std::to_string(version) + " (2 and 3 are read)");
        get<uint64_t>(skip);  // tensors
        const uint64_t n = get<uint64_t>(skip);
        for (uint64_t i = 0; i < n; ++i) {
            std::string entry;
            const std::string name = text(entry);
            const uint32_t type = get<uint32_t>(entry);
            const size_t at = entry.size();
            const uint64_t count = value(type, entry, 0);
            if (name == "general.name" && type == STRING) v.name = entry.substr(at + 8);
            if (name.rfind("tokenizer.", 0) != 0) continue;
            v.bytes += entry;
            ++v.keys;
            if (name == "tokenizer.ggml.tokens" && type == ARRAY) v.tokens = int64_t(count);
        }
        return v;
    }

private:
    void bytes(std::string& out, uint64_t n) {
        if (n > size_ - pos_) throw FormatError(path_ + ": the GGUF header runs past the end of the file");
        const size_t at = out.size();
        out.resize(at + size_t(n));
        if (!in_.read(out.data() + at, std::streamsize(n))) throw FormatError(path_ + ": cannot read the GGUF header");
        pos_ += n;
    }
    template <typename T>
    T get(std::string& out) {
        bytes(out, sizeof(T));
        T v;
        std::memcpy(&v, out.data() + out.size() - sizeof(T), sizeof(T));
        return v;
    }
    std::string text(std::string& out) {
        const uint64_t n = get<uint64_t>(out);
        bytes(out, n);
        return out.substr(out.size() - size_t(n));
    }
    // One value of `type` appended to `out`; an array's item count.
    uint64_t value(uint32_t type, std::string& out, int depth) {
        switch (type) {
            case U8: case I8: case BOOL: bytes(out, 1); return 0;
            case U16: case I16: bytes(out, 2); return 0;
            case U32: case I32: case F32: bytes(out, 4); return 0;
            case U64: case I64: case F64: bytes(out, 8); return 0;
            case STRING: bytes(out, get<uint64_t>(out)); return 0;
            case ARRAY: {
                const uint32_t item = get<uint32_t>(out);
                const uint64_t count = get<uint64_t>(out);
                if (depth > 2 || count > size_ - pos_)
                    throw FormatError(path_ + ": a GGUF metadata array is malformed");
                for (uint64_t i = 0; i < count; ++i) value(item, out, depth + 1);
                return count;
            }
            default: throw FormatError(path_ + ": GGUF metadata of unknown type " + std::to_string(type));
        }
    }

    std::ifstream in_;
    std::string path_;
    uint64_t size_ = 0, pos_ = 0;
};

}  // namespace

void write_gguf(const ModelFile& m, const Tokenizer& tok, const std::string& path,
                const std::function<void(size_t, size_t)>& progress) {
    check_writable(m, tok);
    HeaderBytes keys;
    write_hyperparameters(keys, m);
    write_vocabulary(keys, tok, m.config.vocab_size);
    write_file(m, keys, path, progress);
}

GgufVocabularyKeys read_gguf_vocabulary_keys(const std::string& path) { return VocabularyKeyReader(path).read(); }

void write_gguf(const ModelFile& m, const GgufVocabularyKeys& vocab, const std::string& path,
                const std::function<void(size_t, size_t)>& progress) {
    if (vocab.keys == 0 || vocab.tokens == 0)
        throw std::invalid_argument(vocab.source + ": holds no vocabulary (tokenizer.ggml.tokens) to carry into " +
                                    path);
    if (vocab.tokens != m.config.vocab_size)
        throw std::invalid_argument(vocab.source + ": " + std::to_string(vocab.tokens) + " tokens, but " + m.path +
                                    " has a vocabulary of " + std::to_string(m.config.vocab_size));
    check_tensors_writable(m);
    HeaderBytes keys;
    write_hyperparameters(keys, m, vocab.name);
    keys.entries(vocab.bytes, vocab.keys);
    write_file(m, keys, path, progress);
}

}  // namespace medusa
