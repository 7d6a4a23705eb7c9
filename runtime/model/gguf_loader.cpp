#include "model/gguf_loader.h"

#include <map>
#include <variant>

#include "model/file_bytes.h"
#include "model/gguf_vocab.h"

namespace medusa {

namespace {

enum GgufType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, U64 = 10,
    I64 = 11, F64 = 12
};

struct Value {
    double number = 0;               // every scalar, widened
    std::string text;                // STRING
    std::vector<std::string> texts;  // ARRAY of STRING
    std::vector<double> numbers;     // ARRAY of scalars
    bool is_array = false;
};

constexpr uint64_t kMaxCount = 1u << 24;  // no real file has more keys, tensors or array items

std::string read_gguf_string(ByteReader& r, const char* what) {
    const uint64_t n = r.read<uint64_t>(what);
    if (n > (1u << 20)) throw FormatError(r.name() + ": " + what + " has an absurd length " + std::to_string(n));
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

Value read_value(ByteReader& r, uint32_t type) {
    Value v;
    if (type == STRING) {
        v.text = read_gguf_string(r, "metadata string");
    } else if (type == ARRAY) {
        v.is_array = true;
        const uint32_t item = r.read<uint32_t>("array type");
        const uint64_t n = r.read<uint64_t>("array length");
        if (n > kMaxCount) throw FormatError(r.name() + ": metadata array of " + std::to_string(n) + " items is absurd");
        if (item == ARRAY) throw FormatError(r.name() + ": nested metadata arrays are not supported");
        for (uint64_t i = 0; i < n; ++i) {
            if (item == STRING) v.texts.push_back(read_gguf_string(r, "array string"));
            else v.numbers.push_back(read_scalar(r, item));
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
    auto blocks = [&](uint64_t block_bytes) {
        if (n % 32) throw FormatError(file + ": tensor '" + t.name + "' has " + std::to_string(n) +
                                      " values, not a multiple of the 32-value block");
        return n / 32 * block_bytes;
    };
    switch (t.type) {
        case 0: dtype = DType::F32; return n * 4;
        case 1: dtype = DType::F16; return n * 2;
        case 30: dtype = DType::BF16; return n * 2;
        case 2: dtype = DType::Q4_0; return blocks(18);
        case 8: dtype = DType::Q8_0; return blocks(34);
        default:
            throw FormatError(file + ": tensor '" + t.name + "' has GGML type " + std::to_string(t.type) +
                              ", which is not supported (F32, F16, BF16, Q8_0 and Q4_0 are)");
    }
}

// GGUF tensor names -> the canonical names of model_file.h.
std::string canonical_name(const std::string& g) {
    static const std::map<std::string, std::string> top = {
        {"token_embd.weight", "tok_embeddings"}, {"output_norm.weight", "norm"}, {"output.weight", "output"}};
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
    return "";  // ignored (e.g. rope_freqs)
}

}  // namespace

ModelFile load_gguf(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& name) {
    ModelFile m;
    m.path = name;
    m.format = "gguf";
    ByteReader r(bytes->data(), bytes->size(), name);
    r.skip(4, "magic");
    const uint32_t version = r.read<uint32_t>("version");
    if (version != 2 && version != 3)
        throw FormatError(name + ": GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
    const uint64_t n_tensors = r.read<uint64_t>("tensor count");
    const uint64_t n_kv = r.read<uint64_t>("metadata count");
    if (n_tensors > kMaxCount || n_kv > kMaxCount)
        throw FormatError(name + ": absurd counts (" + std::to_string(n_tensors) + " tensors, " +
                          std::to_string(n_kv) + " metadata keys)");
    std::map<std::string, Value> meta;
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = read_gguf_string(r, "metadata key");
        const uint32_t type = r.read<uint32_t>("metadata type");
        meta[key] = read_value(r, type);
    }
    auto num = [&](const std::string& key, double fallback, bool required) {
        auto it = meta.find(key);
        if (it == meta.end() || it->second.is_array || !it->second.text.empty()) {
            if (required) throw FormatError(name + ": metadata key '" + key + "' is missing");
            return fallback;
        }
        return it->second.number;
    };
    const std::string arch = meta.count("general.architecture") ? meta["general.architecture"].text : "";
    if (arch != "llama")
        throw FormatError(name + ": architecture '" + arch + "' is not supported (only llama)");
    auto as_int = [&](double v, const char* what) {
        if (!(v >= -2147483648.0 && v <= 2147483647.0)) throw FormatError(name + ": " + what + " out of range");
        return int(v);
    };
    LlamaConfig& c = m.config;
    c.dim = as_int(num("llama.embedding_length", 0, true), "embedding_length");
    c.hidden_dim = as_int(num("llama.feed_forward_length", 0, true), "feed_forward_length");
    c.n_layers = as_int(num("llama.block_count", 0, true), "block_count");
    c.n_heads = as_int(num("llama.attention.head_count", 0, true), "head_count");
    c.n_kv_heads = as_int(num("llama.attention.head_count_kv", c.n_heads, false), "head_count_kv");
    c.seq_len = as_int(num("llama.context_length", 2048, false), "context_length");
    c.rope_theta = float(num("llama.rope.freq_base", 10000.0, false));
    c.rms_eps = float(num("llama.attention.layer_norm_rms_epsilon", 1e-5, false));
    const uint64_t alignment = uint64_t(num("general.alignment", 32, false));
    if (alignment == 0 || alignment > 65536 || (alignment & (alignment - 1)))
        throw FormatError(name + ": general.alignment " + std::to_string(alignment) + " is not a power of two");

    std::vector<TensorInfo> infos;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        TensorInfo t;
        t.name = read_gguf_string(r, "tensor name");
        const uint32_t n_dims = r.read<uint32_t>("tensor dimension count");
        if (n_dims == 0 || n_dims > 4) throw FormatError(name + ": tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions");
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne = r.read<uint64_t>("tensor dimension");
            if (ne == 0 || ne > (1ull << 32)) throw FormatError(name + ": tensor '" + t.name + "' has dimension " + std::to_string(ne));
            t.dims.push_back(ne);
        }
        t.type = r.read<uint32_t>("tensor type");
        t.offset = r.read<uint64_t>("tensor offset");
        infos.push_back(std::move(t));
    }
    const uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
    if (data_start > bytes->size()) throw FormatError(name + ": truncated before the tensor data");
    const uint64_t data_size = bytes->size() - data_start;

    for (const auto& info : infos) {
        const std::string canon = canonical_name(info.name);
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
            throw FormatError(name + ": tensor '" + info.name + "' data [offset " + std::to_string(info.offset) + ", " +
                              std::to_string(nbytes) + " bytes] lies outside the file's data section (" +
                              std::to_string(data_size) + " bytes)");
        t.group_size = (t.type == DType::Q8_0 || t.type == DType::Q4_0) ? 32 : 0;
        for (auto it = info.dims.rbegin(); it != info.dims.rend(); ++it) t.shape.push_back(int64_t(*it));
        t.data = bytes->data() + data_start + info.offset;
        t.nbytes = size_t(nbytes);
        m.tensors.push_back(std::move(t));
    }
    const Tensor* emb = m.find("tok_embeddings");
    if (!emb) throw FormatError(name + ": tensor 'token_embd.weight' is missing");
    c.vocab_size = int(emb->shape.front());
    c.tied_classifier = m.find("output") == nullptr;
    validate_config(c, name);
    // Every tensor must have the shape the configuration implies.
    const int64_t dim = c.dim, hid = c.hidden_dim, kv = c.kv_dim(), vocab = c.vocab_size;
    auto expect = [&](const std::string& tn, std::vector<int64_t> shape) {
        const Tensor& t = m.get(tn);
        if (t.shape != shape) {
            std::string want, got;
            for (auto d : shape) want += std::to_string(d) + " ";
            for (auto d : t.shape) got += std::to_string(d) + " ";
            throw FormatError(name + ": tensor '" + tn + "' has shape [ " + got + "], expected [ " + want + "]");
        }
    };
    expect("tok_embeddings", {vocab, dim});
    expect("norm", {dim});
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
    }

    if (meta.count("tokenizer.ggml.tokens")) {
        const std::string model = meta.count("tokenizer.ggml.model") ? meta["tokenizer.ggml.model"].text : "";
        if (model != "llama")
            throw FormatError(name + ": tokenizer '" + model + "' is not supported (only sentencepiece 'llama')");
        GgufVocab v;
        v.tokens = meta["tokenizer.ggml.tokens"].texts;
        for (double s : meta["tokenizer.ggml.scores"].numbers) v.scores.push_back(float(s));
        for (double t : meta["tokenizer.ggml.token_type"].numbers) v.types.push_back(int32_t(t));
        v.bos = int(num("tokenizer.ggml.bos_token_id", 1, false));
        v.eos = int(num("tokenizer.ggml.eos_token_id", 2, false));
        v.unk = int(num("tokenizer.ggml.unknown_token_id", 0, false));
        if (int(v.tokens.size()) != c.vocab_size)
            throw FormatError(name + ": the embedded vocabulary has " + std::to_string(v.tokens.size()) +
                              " tokens but the model's embedding has " + std::to_string(c.vocab_size) + " rows");
        m.embedded_tokenizer = sentencepiece_proto_from_vocab(v);
    }
    m.storage = bytes;
    return m;
}

}  // namespace medusa
