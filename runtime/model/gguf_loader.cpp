#include "model/gguf_loader.h"

#include <cmath>
#include <map>
#include <set>

#include "model/block_format.h"
#include "model/file_bytes.h"
#include "model/gguf_vocab.h"

namespace medusa {

namespace {

enum GgufType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, U64 = 10,
    I64 = 11, F64 = 12
};

struct Value {
    uint32_t type = U8;
    uint32_t item_type = U8;         // ARRAY only
    double number = 0;               // every scalar, widened
    std::string text;                // STRING
    std::vector<std::string> texts;  // ARRAY of STRING
    std::vector<double> numbers;     // ARRAY of scalars
};

constexpr uint64_t kMaxCount = 1u << 24;      // no real file has more keys, tensors or array items
constexpr uint64_t kMaxString = 1u << 20;     // nor longer strings

size_t scalar_size(uint32_t type) {
    switch (type) {
        case U8: case I8: case BOOL: return 1;
        case U16: case I16: return 2;
        case U32: case I32: case F32: return 4;
        case U64: case I64: case F64: return 8;
        default: return 0;
    }
}

std::string read_gguf_string(ByteReader& r, const char* what) {
    const uint64_t n = r.read<uint64_t>(what);
    if (n > kMaxString)
        throw FormatError(r.name() + ": " + what + " at offset " + std::to_string(r.pos() - 8) + " has an absurd length " +
                          std::to_string(n));
    return r.read_string(n, what);
}

double read_scalar(ByteReader& r, uint32_t type) {
    switch (type) {
        case U8: return r.read<uint8_t>("metadata value");
        case I8: return r.read<int8_t>("metadata value");
        case U16: return r.read<uint16_t>("metadata value");
        case I16: return r.read<int16_t>("metadata value");
        case U32: return r.read<uint32_t>("metadata value");
        case I32: return r.read<int32_t>("metadata value");
        case F32: return r.read<float>("metadata value");
        case BOOL: return r.read<uint8_t>("metadata value");
        case U64: return double(r.read<uint64_t>("metadata value"));
        case I64: return double(r.read<int64_t>("metadata value"));
        case F64: return r.read<double>("metadata value");
        default: throw FormatError(r.name() + ": unknown metadata value type " + std::to_string(type));
    }
}

Value read_value(ByteReader& r, uint32_t type, const std::string& key) {
    Value v;
    v.type = type;
    if (type == STRING) {
        v.text = read_gguf_string(r, "metadata string");
    } else if (type == ARRAY) {
        v.item_type = r.read<uint32_t>("array type");
        const uint64_t n = r.read<uint64_t>("array length");
        const size_t item_min = v.item_type == STRING ? 8 : scalar_size(v.item_type);
        if (item_min == 0)
            throw FormatError(r.name() + ": metadata array '" + key + "' has item type " + std::to_string(v.item_type) +
                              " (nested arrays and unknown types are not supported)");
        // Checked before allocating: every item needs at least item_min bytes of the file.
        if (n > kMaxCount || n > (r.size() - r.pos()) / item_min)
            throw FormatError(r.name() + ": metadata array '" + key + "' claims " + std::to_string(n) +
                              " items, more than the file can hold");
        if (v.item_type == STRING) v.texts.reserve(size_t(n));
        else v.numbers.reserve(size_t(n));
        for (uint64_t i = 0; i < n; ++i) {
            if (v.item_type == STRING) v.texts.push_back(read_gguf_string(r, "array string"));
            else v.numbers.push_back(read_scalar(r, v.item_type));
        }
    } else {
        v.number = read_scalar(r, type);
    }
    return v;
}

struct TensorInfo {
    std::string name;
    std::vector<uint64_t> dims;  // ne[0] innermost
    uint32_t type;
    uint64_t offset;
};

// Bytes of a tensor of `n` elements, or throws for types this engine does not run.
uint64_t tensor_bytes(const std::string& file, const TensorInfo& t, uint64_t n, DType& dtype) {
    const BlockFormat* f = gguf_format_by_id(t.type);
    if (!f)
        throw FormatError(file + ": tensor '" + t.name + "' has GGML type " + ggml_type_name(t.type) +
                          ", which is not supported (" + supported_gguf_types() + " are)");
    if (t.dims[0] % uint64_t(f->values))  // ggml quantizes row by row
        throw FormatError(file + ": tensor '" + t.name + "' has rows of " + std::to_string(t.dims[0]) +
                          " values, not a multiple of the " + std::to_string(f->values) + "-value " + f->ggml_name +
                          " block");
    dtype = f->type;
    return n / uint64_t(f->values) * uint64_t(f->bytes);
}

}  // namespace

std::string gguf_canonical_name(const std::string& g) {
    static const std::map<std::string, std::string> top = {
        {"token_embd.weight", "tok_embeddings"}, {"output_norm.weight", "norm"}, {"output.weight", "output"},
        {"rope_freqs.weight", "rope_freqs"}};
    static const std::map<std::string, std::string> per_layer = {
        {"attn_norm.weight", "attention_norm"}, {"attn_q.weight", "wq"},       {"attn_k.weight", "wk"},
        {"attn_v.weight", "wv"},                {"attn_output.weight", "wo"},  {"ffn_norm.weight", "ffn_norm"},
        {"ffn_gate.weight", "w1"},              {"ffn_down.weight", "w2"},     {"ffn_up.weight", "w3"}};
    if (auto it = top.find(g); it != top.end()) return it->second;
    if (g.rfind("blk.", 0) == 0) {
        const size_t dot = g.find('.', 4);
        if (dot != std::string::npos)
            if (auto it = per_layer.find(g.substr(dot + 1)); it != per_layer.end())
                return "layers." + g.substr(4, dot - 4) + "." + it->second;
    }
    return "";  // ignored
}

namespace {

class Metadata {
public:
    Metadata(std::map<std::string, Value> kv, std::string file) : kv_(std::move(kv)), file_(std::move(file)) {}
    // A scalar number, `fallback` when absent; throws when required and absent, or of the wrong kind.
    double number(const std::string& key, double fallback, bool required) const {
        auto it = kv_.find(key);
        if (it == kv_.end()) {
            if (required) throw FormatError(file_ + ": metadata key '" + key + "' is missing");
            return fallback;
        }
        if (it->second.type == STRING || it->second.type == ARRAY)
            throw FormatError(file_ + ": metadata key '" + key + "' is not a number");
        return it->second.number;
    }
    int integer(const std::string& key, double fallback, bool required) const {
        const double v = number(key, fallback, required);
        if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != std::floor(v))
            throw FormatError(file_ + ": metadata key '" + key + "' = " + std::to_string(v) + " is not a valid int32");
        return int(v);
    }
    float real(const std::string& key, double fallback) const {
        const double v = number(key, fallback, false);
        if (!std::isfinite(v) || std::fabs(v) > 1e30)
            throw FormatError(file_ + ": metadata key '" + key + "' is not a finite number");
        return float(v);
    }
    std::string text(const std::string& key) const {
        auto it = kv_.find(key);
        return it != kv_.end() && it->second.type == STRING ? it->second.text : "";
    }
    const Value* array(const std::string& key, uint32_t item_type) const {
        auto it = kv_.find(key);
        if (it == kv_.end()) return nullptr;
        if (it->second.type != ARRAY || (it->second.item_type == STRING) != (item_type == STRING))
            throw FormatError(file_ + ": metadata key '" + key + "' is not an array of the expected type");
        return &it->second;
    }
    bool has(const std::string& key) const { return kv_.count(key) != 0; }

private:
    std::map<std::string, Value> kv_;
    std::string file_;
};

std::string embedded_vocab(const Metadata& meta, const std::string& name) {
    const std::string model = meta.text("tokenizer.ggml.model");
    if (model != "llama")
        throw FormatError(name + ": tokenizer '" + model + "' is not supported (only sentencepiece 'llama')");
    GgufVocab v;
    v.tokens = meta.array("tokenizer.ggml.tokens", STRING)->texts;
    if (const Value* s = meta.array("tokenizer.ggml.scores", F32))
        for (double x : s->numbers) v.scores.push_back(std::isfinite(x) && std::fabs(x) < 1e30 ? float(x) : 0.0f);
    if (const Value* t = meta.array("tokenizer.ggml.token_type", I32))
        for (double x : t->numbers) v.types.push_back(x >= -1 && x <= 1000 ? int32_t(x) : -1);
    v.bos = meta.integer("tokenizer.ggml.bos_token_id", 1, false);
    v.eos = meta.integer("tokenizer.ggml.eos_token_id", 2, false);
    v.unk = meta.integer("tokenizer.ggml.unknown_token_id", 0, false);
    return sentencepiece_proto_from_vocab(v, name);
}

}  // namespace

ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    ModelFile m;
    m.path = name;
    m.format = "gguf";
    ByteReader r(bytes->data(), bytes->size(), name);
    if (r.read<uint32_t>("magic") != 0x46554747) throw FormatError(name + ": not a GGUF file (bad magic)");
    const uint32_t version = r.read<uint32_t>("version");
    if (version != 2 && version != 3)
        throw FormatError(name + ": GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
    const uint64_t n_tensors = r.read<uint64_t>("tensor count");
    const uint64_t n_kv = r.read<uint64_t>("metadata count");
    // Each key or tensor description takes at least 8 bytes: reject counts the file cannot hold.
    const uint64_t room = (r.size() - r.pos()) / 8;
    if (n_tensors > kMaxCount || n_kv > kMaxCount || n_tensors > room || n_kv > room)
        throw FormatError(name + ": absurd counts (" + std::to_string(n_tensors) + " tensors, " +
                          std::to_string(n_kv) + " metadata keys) for a file of " + std::to_string(r.size()) + " bytes");
    std::map<std::string, Value> kv;
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = read_gguf_string(r, "metadata key");
        const uint32_t type = r.read<uint32_t>("metadata type");
        Value v = read_value(r, type, key);
        if (!kv.emplace(key, std::move(v)).second) throw FormatError(name + ": metadata key '" + key + "' repeats");
    }
    const Metadata meta(std::move(kv), name);
    const std::string arch = meta.text("general.architecture");
    if (arch != "llama") throw FormatError(name + ": architecture '" + arch + "' is not supported (only llama)");
    LlamaConfig& c = m.config;
    c.dim = meta.integer("llama.embedding_length", 0, true);
    c.hidden_dim = meta.integer("llama.feed_forward_length", 0, true);
    c.n_layers = meta.integer("llama.block_count", 0, true);
    c.n_heads = meta.integer("llama.attention.head_count", 0, true);
    c.n_kv_heads = meta.integer("llama.attention.head_count_kv", c.n_heads, false);
    c.seq_len = meta.integer("llama.context_length", 2048, false);
    c.rope_theta = meta.real("llama.rope.freq_base", 10000.0);
    c.rms_eps = meta.real("llama.attention.layer_norm_rms_epsilon", 1e-5);
    const double align = meta.number("general.alignment", 32, false);
    if (!(align >= 1 && align <= 65536) || (uint64_t(align) & (uint64_t(align) - 1)) || align != std::floor(align))
        throw FormatError(name + ": general.alignment " + std::to_string(align) + " is not a power of two");
    const uint64_t alignment = uint64_t(align);

    std::vector<TensorInfo> infos;
    std::set<std::string> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        TensorInfo t;
        t.name = read_gguf_string(r, "tensor name");
        if (!names.insert(t.name).second) throw FormatError(name + ": tensor '" + t.name + "' appears twice");
        const uint32_t n_dims = r.read<uint32_t>("tensor dimension count");
        if (n_dims == 0 || n_dims > 4)
            throw FormatError(name + ": tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions");
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne = r.read<uint64_t>("tensor dimension");
            if (ne == 0 || ne > (1ull << 32))
                throw FormatError(name + ": tensor '" + t.name + "' has dimension " + std::to_string(ne));
            t.dims.push_back(ne);
        }
        t.type = r.read<uint32_t>("tensor type");
        t.offset = r.read<uint64_t>("tensor offset");
        if (t.offset % alignment)
            throw FormatError(name + ": tensor '" + t.name + "' offset " + std::to_string(t.offset) +
                              " is not a multiple of the alignment " + std::to_string(alignment));
        infos.push_back(std::move(t));
    }
    const uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
    if (data_start > bytes->size()) throw FormatError(name + ": truncated before the tensor data");
    const uint64_t data_size = bytes->size() - data_start;

    for (const auto& info : infos) {
        const std::string canon = gguf_canonical_name(info.name);
        if (canon.empty()) continue;
        uint64_t n = 1;
        for (uint64_t d : info.dims) {
            if (n > (1ull << 40) / d) throw FormatError(name + ": tensor '" + info.name + "' is absurdly large");
            n *= d;
        }
        Tensor t;
        t.name = canon;
        const uint64_t nbytes = tensor_bytes(name, info, n, t.type);
        if (info.offset > data_size || nbytes > data_size - info.offset)
            throw FormatError(name + ": tensor '" + info.name + "' data [offset " +
                              std::to_string(data_start + info.offset) + ", " + std::to_string(nbytes) +
                              " bytes] lies outside the file (size " + std::to_string(bytes->size()) + ")");
        t.group_size = gguf_format(t.type)->values > 1 ? gguf_format(t.type)->values : 0;
        for (auto it = info.dims.rbegin(); it != info.dims.rend(); ++it) t.shape.push_back(int64_t(*it));
        t.data = bytes->data() + data_start + info.offset;
        t.nbytes = size_t(nbytes);
        m.tensors.push_back(std::move(t));
    }
    const Tensor* emb = m.find("tok_embeddings");
    if (!emb) throw FormatError(name + ": tensor 'token_embd.weight' is missing");
    if (emb->shape.size() != 2 || emb->shape[0] > (1 << 22))
        throw FormatError(name + ": tensor 'token_embd.weight' is not a {vocab, dim} matrix of a sane size");
    c.vocab_size = int(emb->shape[0]);
    c.tied_classifier = m.find("output") == nullptr;  // convert-llama2c-to-ggml writes a copy: untied
    validate_config(c, name);
    // Variants of the llama architecture this engine does not run: partial RoPE, mixture of experts.
    if (meta.integer("llama.rope.dimension_count", c.head_dim(), false) != c.head_dim())
        throw FormatError(name + ": llama.rope.dimension_count differs from the head size " +
                          std::to_string(c.head_dim()) + " (partial RoPE is not supported)");
    if (meta.integer("llama.expert_count", 0, false) > 0)
        throw FormatError(name + ": mixture-of-experts models are not supported");
    validate_llama_tensors(m);
    if (meta.has("tokenizer.ggml.tokens")) {
        m.embedded_tokenizer = embedded_vocab(meta, name);
        const size_t n_tokens = meta.array("tokenizer.ggml.tokens", STRING)->texts.size();
        if (n_tokens != size_t(c.vocab_size))
            throw FormatError(name + ": the embedded vocabulary has " + std::to_string(n_tokens) +
                              " tokens but the model's embedding has " + std::to_string(c.vocab_size) + " rows");
    }
    // Kept verbatim; model/chat_template.cpp recognises the families it knows by their markers.
    m.chat_template = meta.text("tokenizer.chat_template");
    m.storage = bytes;
    return m;
}

}  // namespace medusa
