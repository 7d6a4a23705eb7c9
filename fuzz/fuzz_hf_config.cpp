// libFuzzer target: Hugging Face config.json files from arbitrary bytes, loaded with one shard of
// a tiny Llama (dim 8, 2 heads of 4, 1 KV head, hidden 16, 1 layer, vocab 4, q/k/v biases as
// Qwen2 has them). A config is refused with a FormatError, or describes a model whose numbers are
// usable: finite, positive, and RoPE factors (Llama 3's rope_scaling) of the head's size.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/dequantize.h"
#include "model/hf_loader.h"
#include "model/safetensors_file.h"

namespace {

using medusa::fuzz::check;

// Serialized and parsed once; each run gets a copy.
const medusa::SafetensorsFile& tiny_llama() {
    static const medusa::SafetensorsFile file = [] {
        std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
            {"model.embed_tokens.weight", {4, 8}}, {"model.norm.weight", {8}}, {"lm_head.weight", {4, 8}}};
        for (auto [name, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
                 {"input_layernorm.weight", {8}},     {"post_attention_layernorm.weight", {8}},
                 {"self_attn.q_proj.weight", {8, 8}}, {"self_attn.k_proj.weight", {4, 8}},
                 {"self_attn.v_proj.weight", {4, 8}}, {"self_attn.o_proj.weight", {8, 8}},
                 {"mlp.gate_proj.weight", {16, 8}},   {"mlp.down_proj.weight", {8, 16}},
                 {"mlp.up_proj.weight", {16, 8}},     {"self_attn.q_proj.bias", {8}},
                 {"self_attn.k_proj.bias", {4}},      {"self_attn.v_proj.bias", {4}}})
            shapes.push_back({"model.layers.0." + name, shape});
        return medusa::SafetensorsFile::from_memory(medusa::fuzz::pattern_safetensors(shapes, 37, 17, 8.0f),
                                                    "model.safetensors");
    }();
    return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const medusa::ModelFile m = medusa::load_hf_from_parts({tiny_llama()}, text, "fuzz");
        const medusa::LlamaConfig& c = m.config;
        check(c.dim == 8 && c.n_layers == 1 && c.vocab_size == 4 && c.kv_dim() == 4);
        check(std::isfinite(c.rope_theta) && c.rope_theta > 1 && c.rms_eps > 0 && c.rms_eps < 1);
        check(std::isfinite(c.rope_position_scale) && c.rope_position_scale >= 1);
        for (const auto& t : m.tensors) {
            const std::vector<float> v = medusa::dequantize(t);
            if (t.name == "rope_freqs") {
                check(v.size() == size_t(c.head_dim() / 2));
                for (float f : v) check(std::isfinite(f) && f > 0);
            }
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
