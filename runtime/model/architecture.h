// What sets one decoder family apart from another, as data. Every family is a Llama-shaped stack
// of attention and gated-FFN layers; a family's entry in families() says which of the variations
// below it uses and how its files store them. Loaders turn an entry and a file's hyper-parameters
// into ArchitectureFeatures (in LlamaConfig::arch); the CPU reference, the GPU layer recorder and
// `info` read only those features, never the family, so a new family is one table row plus its
// loader mapping (docs/architecture.md, "Adding a family").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace medusa {

struct LlamaConfig;

enum class ModelFamily { Llama, Qwen2, Qwen3, Gemma3, Phi3 };

// The FFN's gate: silu(gate) * up (SwiGLU) or gelu_tanh(gate) * up (GeGLU, Gemma).
enum class GateActivation { Silu, GeluTanh };

// How a file pairs the rows of q and k for RoPE: adjacent rows (2i, 2i + 1), as Meta's and
// llama2.c's weights and llama.cpp's llama files do, or rotate_half's (i, i + rotated / 2), as
// Hugging Face and llama.cpp's NeoX-style families store them. Loaders reorder the latter into
// the former, which is the only pairing the engines run.
enum class RopePairing { Adjacent, RotateHalf };

// How a Hugging Face folder stores its RMSNorm gains: as the gain, or as w in a norm that
// multiplies by (1 + w) (Gemma); GGUF files always hold the gain itself (the converter adds 1).
enum class NormGain { AsStored, OnePlusStored };

// The features of one model, read by every engine.
struct ArchitectureFeatures {
    ModelFamily family = ModelFamily::Llama;
    bool qk_norm = false;     // RMSNorm over each head of q and of k (gains q_norm, k_norm), before RoPE
    bool post_norms = false;  // RMSNorm of the attention's and the FFN's outputs before each residual add
    GateActivation activation = GateActivation::Silu;
    float embedding_scale = 1.0f;  // the embeddings are multiplied by it (Gemma: sqrt(dim))
    float attention_scale = 0.0f;  // q.k is multiplied by it; 0: 1 / sqrt(head size)
    int rope_dims = 0;             // leading dimensions of each head that rotate; 0: all of them
    float rope_attn_factor = 1.0f;  // LongRoPE: the rotated dimensions are multiplied by it
    int rope_original_context = 0;  // LongRoPE: a context above it rotates by the long factors
    int sliding_window = 0;        // keys a local layer sees, its own included; 0: no local layers
    std::vector<uint8_t> local_layers;  // per layer, 1 where the layer is local (sliding-window)
    float local_rope_theta = 10000.0f;  // local layers' RoPE base; they are never position-scaled
};

// How one layer attends: its window (0: every earlier key) and its RoPE.
struct LayerAttention {
    int window = 0;
    float rope_theta = 10000.0f;
    float rope_position_scale = 1.0f;  // "linear" scaling divides positions by it
};
LayerAttention layer_attention(const LlamaConfig& c, int layer);
// Rotated dimensions per head (rope_dims, or the whole head).
int rotated_dims(const LlamaConfig& c);
// The attention's multiplier of q.k.
float attention_scale(const LlamaConfig& c);
// llama.cpp's rule for which layers are local: of every `pattern` layers the last is global
// (pattern 0: all local, 1: none).
std::vector<uint8_t> local_layer_pattern(int n_layers, int pattern);

// One family: how its files name and store it, and which features it has.
struct FamilyTraits {
    ModelFamily family;
    const char* gguf_arch;      // general.architecture
    const char* hf_model_type;  // config.json's model_type
    const char* hf_class;       // config.json's architectures[0], for messages
    RopePairing gguf_pairing;   // q/k rows in GGUF files (HF folders are always RotateHalf)
    bool qkv_bias;              // q, k and v add biases (Qwen2)
    bool qk_norm;
    bool post_norms;
    GateActivation activation;
    bool scaled_embedding;      // embeddings times sqrt(dim)
    NormGain hf_norm_gain;
    bool sliding_window;        // reads a window and a local:global pattern
    int default_window_pattern;  // without a pattern key: every Nth layer is global
    bool long_rope;             // rope_factors_short/_long chosen by the context, and an attention factor
    bool partial_rope;          // may rotate fewer dimensions than the head has
    bool fused_qkv;             // stores q|k|v as one matrix (split at load)
    bool fused_gate_up;         // stores gate|up as one matrix (split at load)
};

const std::vector<FamilyTraits>& families();
const FamilyTraits& family_traits(ModelFamily f);
const FamilyTraits* family_by_gguf_arch(std::string_view arch);
const FamilyTraits* family_by_hf_model_type(std::string_view model_type);
// "llama, qwen2, qwen3, gemma3 and phi3", for messages.
std::string supported_families();
const char* family_name(ModelFamily f);
const char* activation_name(GateActivation a);

// The features a family fixes, before a file's hyper-parameters add the rest.
ArchitectureFeatures features_of(const FamilyTraits& f);

// Checks a configuration's numbers and their consistency (head sizes, windows, RoPE); throws
// FormatError "<name>: invalid model configuration: ..." naming the value.
void validate_config(const LlamaConfig& c, const std::string& name);

// One line of the features that differ from plain Llama, for `info`: "q/k norms, post-norms,
// GeGLU, embeddings x 8, local layers 0,1,2 (window 512, RoPE base 10000), ...".
std::string describe_features(const LlamaConfig& c);

}  // namespace medusa
