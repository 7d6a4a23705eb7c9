#include "model/synthetic_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <thread>

#include "model/block_format.h"
#include "model/dequantize.h"
#include "model/dequantize_blocks.h"
#include "model/half_float.h"

namespace medusa {

namespace {

LlamaConfig llama(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int context) {
    LlamaConfig c;
    c.dim = dim, c.hidden_dim = hidden, c.n_layers = layers, c.n_heads = heads, c.n_kv_heads = kv_heads;
    c.vocab_size = vocab, c.seq_len = context;
    return c;
}

// A family's shape: its features (model/architecture.h) on top of the dimensions.
LlamaConfig family(ModelFamily f, LlamaConfig c, int head_size, float theta, bool tied) {
    c.arch = features_of(family_traits(f));
    c.head_size = head_size;
    c.rope_theta = theta;
    c.rms_eps = 1e-6f;
    c.tied_classifier = tied;
    return c;
}

LlamaConfig gemma3(LlamaConfig c, int head_size, int window, float linear_scaling) {
    c = family(ModelFamily::Gemma3, c, head_size, 1e6f, true);
    c.arch.embedding_scale = std::sqrt(float(c.dim));
    c.arch.sliding_window = window;
    c.arch.local_layers = local_layer_pattern(c.n_layers, 6);
    c.rope_position_scale = linear_scaling;
    return c;
}

// Shapes as the published models have them (config.json), with random weights.
const std::map<std::string, LlamaConfig>& shapes() {
    using enum ModelFamily;
    static const std::map<std::string, LlamaConfig> m = [] {
        std::map<std::string, LlamaConfig> s = {
            {"stories15m", llama(288, 768, 6, 6, 6, 32000, 256)},
            {"stories110m", llama(768, 2048, 12, 12, 12, 32000, 1024)},
            {"tinyllama-1.1b", llama(2048, 5632, 22, 32, 4, 32000, 2048)},
            {"llama-7b", llama(4096, 11008, 32, 32, 32, 32000, 4096)},
            {"llama2-13b", llama(5120, 13824, 40, 40, 40, 32000, 4096)},
            {"qwen3-0.6b", family(Qwen3, llama(1024, 3072, 28, 16, 8, 151936, 40960), 128, 1e6f, true)},
            {"qwen3-4b", family(Qwen3, llama(2560, 9728, 36, 32, 8, 151936, 40960), 128, 1e6f, true)},
            {"qwen3-8b", family(Qwen3, llama(4096, 12288, 36, 32, 8, 151936, 40960), 128, 1e6f, false)},
            {"gemma3-270m", gemma3(llama(640, 2048, 18, 4, 1, 262144, 32768), 256, 512, 1.0f)},
            {"gemma3-1b", gemma3(llama(1152, 6912, 26, 4, 1, 262144, 32768), 256, 512, 1.0f)},
            {"gemma3-4b", gemma3(llama(2560, 10240, 34, 8, 4, 262208, 131072), 256, 1024, 8.0f)},
        };
        // Phi-4-mini: partial RoPE (96 of 128 dimensions) with LongRoPE's factors over 4096 positions.
        LlamaConfig phi = family(Phi3, llama(3072, 8192, 32, 24, 8, 200064, 131072), 0, 10000.0f, true);
        phi.rms_eps = 1e-5f;
        phi.arch.rope_dims = 96;
        phi.arch.rope_original_context = 4096;
        phi.arch.rope_attn_factor = float(std::sqrt(1 + std::log(131072.0 / 4096) / std::log(4096.0)));
        s["phi-4-mini"] = phi;
        return s;
    }();
    return m;
}

struct Rng {
    uint64_t s;
    uint32_t next() {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return uint32_t(s >> 16);
    }
    float uniform(float scale) { return (float(next() & 0xFFFF) / 32768.0f - 1.0f) * scale; }
};

size_t bytes_for(DType t, int64_t n) {
    if (t == DType::Q8_G || !gguf_format(t))
        throw std::invalid_argument(std::string("synthetic models cannot hold ") + dtype_name(t) + " weights");
    return tensor_nbytes(t, n, 0);
}

// Largest |value| a random block of `f` holds per unit of its f16 scales (sampled once per type),
// so that scales of limit / that give values of magnitude `limit`.
float values_per_unit_scale(const BlockFormat& f, Rng& rng) {
    std::vector<uint8_t> block(size_t(f.bytes));
    std::vector<float> v(size_t(f.values));
    float biggest = 0;
    for (int sample = 0; sample < 16; ++sample) {
        for (auto& b : block) b = uint8_t(rng.next());
        for (int off : f.half_offsets) {
            const uint16_t one = float_to_half(1.0f);
            std::memcpy(&block[size_t(off)], &one, 2);
        }
        dequantize_block(f.type, block.data(), v.data());
        for (float x : v) biggest = std::max(biggest, std::fabs(x));
    }
    return std::max(biggest, 1.0f);
}

void fill(DType t, uint8_t* out, int64_t n, float scale, Rng& rng) {
    if (t == DType::F32) {
        for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(out)[i] = rng.uniform(scale);
    } else if (t == DType::F16 || t == DType::BF16) {
        for (int64_t i = 0; i < n; ++i)
            reinterpret_cast<uint16_t*>(out)[i] = t == DType::F16 ? float_to_half(rng.uniform(scale)) : float_to_bf16(rng.uniform(scale));
    } else {  // GGUF blocks: random bits under scales that keep the values near `scale`
        const BlockFormat& f = *gguf_format(t);
        const uint16_t d = float_to_half(scale / values_per_unit_scale(f, rng));
        for (int64_t b = 0; b < n / f.values; ++b) {
            uint8_t* p = out + b * f.bytes;
            for (int i = 0; i < f.bytes; i += 2) {
                const uint32_t r = rng.next();
                p[i] = uint8_t(r);
                p[i + 1] = uint8_t(r >> 8);  // block sizes are even
            }
            for (int off : f.half_offsets) std::memcpy(p + off, &d, 2);
        }
    }
}

}  // namespace

std::vector<std::string> synthetic_model_names() {
    std::vector<std::string> v;
    for (const auto& [k, _] : shapes()) v.push_back(k);
    return v;
}

ModelFile synthetic_model_shapes(const std::string& name, DType dtype) {
    // "NAME:llama": NAME's dimensions as a plain Llama, to time what the family's features cost.
    const bool as_llama = name.size() > 6 && name.compare(name.size() - 6, 6, ":llama") == 0;
    auto it = shapes().find(as_llama ? name.substr(0, name.size() - 6) : name);
    if (it == shapes().end()) {
        std::string known;
        for (const auto& n : synthetic_model_names()) known += " " + n;
        throw std::invalid_argument("unknown synthetic model '" + name + "'; known:" + known +
                                    " (and NAME:llama, NAME's dimensions as a plain Llama)");
    }
    ModelFile m;
    m.path = "synthetic:" + name;
    m.format = ModelFormat::Synthetic;
    m.config = it->second;
    if (as_llama) {
        m.config.arch = ArchitectureFeatures{};
        m.config.rope_position_scale = 1.0f;
    }
    const LlamaConfig& c = m.config;
    struct Spec {
        std::string name;
        int64_t rows, cols;
        bool matrix;
    };
    std::vector<Spec> specs = {{"tok_embeddings", c.vocab_size, c.dim, true}, {"norm", 1, c.dim, false}};
    if (!c.tied_classifier) specs.push_back({"output", c.vocab_size, c.dim, true});
    if (c.arch.rope_original_context > 0) {
        specs.push_back({"rope_factors_short", 1, rotated_dims(c) / 2, false});
        specs.push_back({"rope_factors_long", 1, rotated_dims(c) / 2, false});
    }
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        specs.push_back({p + "attention_norm", 1, c.dim, false});
        specs.push_back({p + "ffn_norm", 1, c.dim, false});
        if (c.arch.qk_norm) {
            specs.push_back({p + "q_norm", 1, c.head_dim(), false});
            specs.push_back({p + "k_norm", 1, c.head_dim(), false});
        }
        if (c.arch.post_norms) {
            specs.push_back({p + "post_attention_norm", 1, c.dim, false});
            specs.push_back({p + "post_ffn_norm", 1, c.dim, false});
        }
        specs.push_back({p + "wq", c.q_dim(), c.dim, true});
        specs.push_back({p + "wk", c.kv_dim(), c.dim, true});
        specs.push_back({p + "wv", c.kv_dim(), c.dim, true});
        specs.push_back({p + "wo", c.dim, c.q_dim(), true});
        specs.push_back({p + "w1", c.hidden_dim, c.dim, true});
        specs.push_back({p + "w2", c.dim, c.hidden_dim, true});
        specs.push_back({p + "w3", c.hidden_dim, c.dim, true});
    }
    for (const auto& s : specs) {
        if (const BlockFormat* f = gguf_format(dtype); s.matrix && f)
            if (const std::string problem = split_block_problem(*f, s.cols); !problem.empty())
                throw std::invalid_argument("synthetic " + name + "'s " + s.name + " " + problem);
        Tensor t;
        t.name = s.name;
        t.type = s.matrix ? dtype : DType::F32;
        t.shape = s.matrix ? std::vector<int64_t>{s.rows, s.cols} : std::vector<int64_t>{s.cols};
        t.group_size = gguf_format(t.type)->values > 1 ? gguf_format(t.type)->values : 0;
        t.nbytes = s.matrix ? bytes_for(dtype, s.rows * s.cols) : size_t(s.cols) * 4;
        m.tensors.push_back(std::move(t));
    }
    return m;
}

ModelFile make_synthetic_model(const std::string& name, DType dtype, uint64_t seed) {
    ModelFile m = synthetic_model_shapes(name, dtype);
    size_t total = 0;
    for (const Tensor& t : m.tensors) total += t.nbytes;
    auto storage = std::shared_ptr<uint8_t[]>(new uint8_t[total]);
    size_t off = 0;
    for (Tensor& t : m.tensors) {
        t.data = storage.get() + off;
        off += t.nbytes;
    }
    // Each tensor from its own generator (seeded by the model's seed and its index), so that the
    // weights are the same whatever the number of threads filling them: a 7B model in f16 took a
    // minute on one core, on a machine lent by the minute.
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next++) < m.tensors.size();) {
            const Tensor& t = m.tensors[i];
            uint8_t* data = const_cast<uint8_t*>(t.data);
            const int64_t cols = t.shape.back();
            Rng rng{((seed * 0x9E3779B97F4A7C15ull) ^ ((i + 1) * 0xBF58476D1CE4E5B9ull)) | 1};
            if (t.shape.size() == 2)
                fill(dtype, data, t.numel(), 1.0f / std::sqrt(float(cols)) * 1.7f, rng);
            else  // gains of one; RoPE factors of one (short) and rising to 8 over the pairs (long)
                for (int64_t k = 0; k < cols; ++k)
                    reinterpret_cast<float*>(data)[k] =
                        t.name == "rope_factors_long" ? 1.0f + 7.0f * float(k) / float(std::max<int64_t>(1, cols - 1)) : 1.0f;
        }
    };
    const unsigned n_threads = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < n_threads; ++t) threads.emplace_back(work);
    work();  // this thread takes its share too
    for (std::thread& t : threads) t.join();
    std::fprintf(stderr, "\rbuilding synthetic %s: %zu/%zu tensors\n", name.c_str(), m.tensors.size(), m.tensors.size());
    m.storage = storage;
    return m;
}

}  // namespace medusa
