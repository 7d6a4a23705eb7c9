// A long session in one process: 10,000 speculative steps, every drafter in turn (each built anew
// from its spec, over heads and a draft model loaded once), every generation running to the end
// of the context and starting over.
// Memory must stay flat once each mode has run twice (the driver's pools and the allocator settle
// over the first rounds of mode switches: 2.2 MB over 40,000 steps, most of it early): a leak
// per step or per mode switch shows.
#include <catch2/catch.hpp>
#include <memory>

#include "decode_support.h"
#include "setup/drafting.h"
#include "resident_memory.h"

using namespace medusa;
using namespace medusa::test;

TEST_CASE("10,000 speculative steps in one process, wrapping at the context end, hold memory flat", "[soak]") {
    constexpr int kSteps = 10000, kModes = 5;
    constexpr double kBoundMb = 4.0;  // growth allowed after the second round of modes
    ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    const std::string draft_model = model_path("stories260K_q80.bin");
    const DrafterSpec specs[kModes] = {PlainSpec{}, MedusaSpec{.num_heads = 3, .tree = "dense:2,2,2"},
                                       DraftModelSpec{.model = draft_model, .gamma = 4},
                                       DraftModelSpec{.model = draft_model, .gamma = 3, .branches = 2},
                                       NgramSpec{.max_tokens = 8, .branches = 2}};
    const DraftingTarget where{.file = target.file, .runner = target.runner, .gpu = &gpu_context(),
                               .context = target.model.config().seq_len};
    // Loaded once, as a session keeps them: every later build of these specs reuses their heads
    // and draft model.
    const Drafting medusa = build_drafting(specs[1], where), draft = build_drafting(specs[2], where);
    const Drafting* loaded[kModes] = {nullptr, &medusa, &draft, &draft, nullptr};
    int steps = 0, generations = 0, context_ends = 0;
    double baseline = 0, peak = 0;
    while (steps < kSteps) {
        const int mode = generations % kModes;
        Drafting drafting = build_drafting(specs[mode], where, loaded[mode]);
        DecodeOptions o;
        o.max_new_tokens = 100000;
        o.sampling.temperature = 0.8f;  // sampled, so every generation's text differs
        o.sampling.seed = uint64_t(generations);
        SpeculativeDecoder decoder(target.runner, *drafting.drafter, o);
        const GenerationStats s = decoder.generate(kStoryPrompts[generations % 3], [&](const StepTrace&) {
            return ++steps < kSteps;
        });
        context_ends += s.stop_reason == StopReason::Context;
        if (++generations == 2 * kModes) baseline = resident_mb();
        if (generations > 2 * kModes) peak = std::max(peak, resident_mb());
    }
    INFO(generations << " generations, " << context_ends << " to the context's end; resident " << baseline
                     << " MB after every mode ran twice, at most " << peak << " MB after " << steps << " steps");
    CHECK(context_ends >= generations / 2);  // the story model rarely stops on its own
    CHECK(peak - baseline < kBoundMb);
}
