// Running any drafter through the speculative decoder in tests, and heads that guess badly.
#pragma once
#include <vector>

#include "decode/speculative_decoder.h"
#include "gpu_fixture.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "llm/medusa_heads.h"
#include "model/load_model.h"
#include "test_paths.h"

namespace medusa::test {

inline const std::vector<std::vector<int>> kStoryPrompts = {{1, 403, 407, 261, 378}, {1, 70, 81},
                                                             {1, 339, 16, 269, 290, 3}};

// A shared model file on the GPU with the runner the decoders verify through.
struct GpuTarget {
    ModelFile file;
    GpuModel model;
    GpuTreeRunner runner;
    explicit GpuTarget(const std::string& name, GpuModelOptions options = {})
        : file(load_model(model_path(name))), model(gpu_context(), file, options), runner(model) {}
    explicit GpuTarget(ModelFile f, GpuModelOptions options = {})
        : file(std::move(f)), model(gpu_context(), file, options), runner(model) {}
};

inline std::vector<int> decode(TreeRunner& runner, Drafter& drafter, const DecodeOptions& o,
                               const std::vector<int>& prompt, GenerationStats* stats = nullptr,
                               std::vector<StepTrace>* steps = nullptr) {
    SpeculativeDecoder d(runner, drafter, o);
    std::vector<int> out;
    const GenerationStats s = d.generate(prompt, [&](const StepTrace& st) {
        out.insert(out.end(), st.emitted.begin(), st.emitted.end());
        if (steps) steps->push_back(st);
        return true;
    });
    if (stats) *stats = s;
    return out;
}

inline DecodeOptions greedy_options(int n) {
    DecodeOptions o;
    o.max_new_tokens = n;
    o.sampling.temperature = 0;
    return o;
}

// Heads that guess badly: random residual blocks and projections.
inline MedusaHeads random_heads(const ModelFile& file, int k, uint32_t seed, int layers = 1) {
    MedusaHeads h = MedusaHeads::init_from_model(file, k, layers);
    for (auto& head : h.heads) {
        for (int l = 0; l < layers; ++l) {
            head.w1[l] = random_floats(head.w1[l].size(), seed++, 0.2f);
            head.b1[l] = random_floats(head.b1[l].size(), seed++, 0.2f);
        }
        head.w2 = random_floats(head.w2.size(), seed++, 0.2f);
    }
    return h;
}

}  // namespace medusa::test
