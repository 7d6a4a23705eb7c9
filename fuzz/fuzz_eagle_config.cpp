// libFuzzer target: the config.json of an EAGLE draft layer, from arbitrary bytes, read with the
// weights of a tiny layer (hidden size 8, 2 heads of 4, 1 KV head, intermediate size 16) for a
// target model of that shape, in EAGLE-1/2's layout and in EAGLE-3's (whose draft vocabulary is
// the target's 4 tokens, so d2t may be absent). A config is refused with a FormatError, or gives a layer whose
// numbers are usable: finite positive epsilon and RoPE base, weights of the shapes it states.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llm/eagle_layer_io.h"
#include "model/safetensors_file.h"

namespace {

using medusa::fuzz::check;

const medusa::SafetensorsFile& tiny_layer() {
    static const medusa::SafetensorsFile file = [] {
        const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
            {"fc.weight", {8, 16}},
            {"fc.bias", {8}},
            {"layers.0.self_attn.q_proj.weight", {8, 8}},
            {"layers.0.self_attn.k_proj.weight", {4, 8}},
            {"layers.0.self_attn.v_proj.weight", {4, 8}},
            {"layers.0.self_attn.o_proj.weight", {8, 8}},
            {"layers.0.mlp.gate_proj.weight", {16, 8}},
            {"layers.0.mlp.up_proj.weight", {16, 8}},
            {"layers.0.mlp.down_proj.weight", {8, 16}},
            {"layers.0.post_attention_layernorm.weight", {8}}};
        return medusa::SafetensorsFile::from_memory(medusa::fuzz::pattern_safetensors(shapes, 31, 11, 8.0f),
                                                    "model.safetensors");
    }();
    return file;
}

const medusa::SafetensorsFile& tiny_eagle3_layer() {
    static const medusa::SafetensorsFile file = [] {
        const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
            {"midlayer.input_layernorm.weight", {8}},
            {"midlayer.hidden_norm.weight", {8}},
            {"midlayer.self_attn.q_proj.weight", {8, 16}},
            {"midlayer.self_attn.k_proj.weight", {4, 16}},
            {"midlayer.self_attn.v_proj.weight", {4, 16}},
            {"midlayer.self_attn.o_proj.weight", {8, 8}},
            {"midlayer.mlp.gate_proj.weight", {16, 8}},
            {"midlayer.mlp.up_proj.weight", {16, 8}},
            {"midlayer.mlp.down_proj.weight", {8, 16}},
            {"midlayer.post_attention_layernorm.weight", {8}},
            {"norm.weight", {8}},
            {"lm_head.weight", {4, 8}}};
        return medusa::SafetensorsFile::from_memory(medusa::fuzz::pattern_safetensors(shapes, 37, 13, 8.0f),
                                                    "model.safetensors");
    }();
    return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const medusa::LlamaConfig target = medusa::fuzz::target_shape(8, 16, 1, 2, 1, 4);
    try {
        const medusa::EagleLayer e = medusa::load_eagle_layer_from_parts(tiny_layer(), text, "config.json", target);
        check(e.dim == 8 && e.hidden_dim == 16 && e.kv_dim() == 4 && e.head_dim() % 2 == 0);
        check(std::isfinite(e.rms_eps) && e.rms_eps > 0 && std::isfinite(e.rope_theta) && e.rope_theta > 0);
        check(e.wq.size() == 64 && e.wk.size() == 32 && e.fc_w.size() == 128 && e.fc_b.size() == 8);
    } catch (const medusa::FormatError&) {
    }
    try {
        const medusa::EagleLayer e = medusa::load_eagle_layer_from_parts(tiny_eagle3_layer(), text, "config.json", target);
        check(e.eagle3() && e.target_layers == std::vector<int>{0} && !e.fuses() && e.wq.size() == 128);
        check(e.draft_vocab() == 4 && e.draft_head.size() == 32);
        for (int to : e.draft_to_target) check(to >= 0 && to < 4);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
