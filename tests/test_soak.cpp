// A long session in one process: 10,000 speculative steps, every drafter in turn (each built anew,
// as a mode switch does), every generation running to the end of the context and starting over.
// Memory must stay flat once each mode has run once: a leak per step or per mode switch shows.
#include <catch2/catch.hpp>
#include <memory>

#include "decode/draft_model_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode_support.h"
#include "resident_memory.h"

using namespace medusa;
using namespace medusa::test;

TEST_CASE("10,000 speculative steps in one process, wrapping at the context end, hold memory flat", "[soak]") {
    constexpr int kSteps = 10000, kModes = 5;
    constexpr double kBoundMb = 4.0;  // growth allowed after the first round of modes
    ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft_target("stories260K_q80.bin");
    const MedusaHeads heads = MedusaHeads::init_from_model(target.file, 3);
    const TreeBuffers tree = build_tree_buffers(load_tree("dense:2,2,2"), 10);
    auto make_drafter = [&](int mode) -> std::unique_ptr<Drafter> {
        switch (mode) {
            case 0: return std::make_unique<NoDrafter>();
            case 1: return std::make_unique<MedusaDrafter>(target.runner, target.file, heads, tree);
            case 2: return std::make_unique<DraftModelDrafter>(draft_target.model, DraftModelOptions{.gamma = 4, .branches = 1});
            case 3: return std::make_unique<DraftModelDrafter>(draft_target.model, DraftModelOptions{.gamma = 3, .branches = 2});
            default: return std::make_unique<NgramDrafter>(NgramOptions{.max_tokens = 8, .branches = 2});
        }
    };
    int steps = 0, generations = 0, context_ends = 0;
    double baseline = 0, peak = 0;
    while (steps < kSteps) {
        const int mode = generations % kModes;
        const auto drafter = make_drafter(mode);
        DecodeOptions o;
        o.max_new_tokens = 100000;
        o.sampling.temperature = 0.8f;  // sampled, so every generation's text differs
        o.sampling.seed = uint64_t(generations);
        SpeculativeDecoder decoder(target.runner, *drafter, o);
        const GenerationStats s = decoder.generate(kStoryPrompts[generations % 3], [&](const StepTrace&) {
            return ++steps < kSteps;
        });
        context_ends += s.stop_reason == "context";
        if (++generations == kModes) baseline = resident_mb();
        if (generations > kModes) peak = std::max(peak, resident_mb());
    }
    INFO(generations << " generations, " << context_ends << " to the context's end; resident " << baseline
                     << " MB after every mode ran once, at most " << peak << " MB after " << steps << " steps");
    CHECK(context_ends >= generations / 2);  // the story model rarely stops on its own
    CHECK(peak - baseline < kBoundMb);
}
