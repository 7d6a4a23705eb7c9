// The app's decoding thread over a long session: 10,000 Medusa steps through one DecodeWorker,
// turn after turn to the end of a 96-position context, with this thread polling the log as the UI
// does and never pressing Clear. Once the log drops old trees (kDetailedSteps) memory grows only by
// the transcript (text, timings, per-step counts in the log and the UI's copy), a bounded cost per step.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "decode_worker.h"
#include "worker_fixture.h"
#include "resident_memory.h"

using namespace medusa;
using medusa::test::resident_mb;
using namespace medusa::chat;
using medusa::chat::test::context;

TEST_CASE("10,000 steps through the decode worker, wrapping at the context end, hold memory flat", "[soak]") {
    constexpr size_t kSteps = 10000, kWarmSteps = 2000;
    // Measured: 1.0 KB per step with the trees dropped, 6.5 KB keeping every 17-node tree.
    constexpr double kBytesPerStep = 3000;
    StepLog log;
    StepLogReader reader;
    DecodeWorker worker(context(), log);
    DecodeSettings s;  // stories260K + tok512, untrained heads, 17-node trees
    s.mode = DrafterKind::Medusa;
    set_tree_field(s, "dense:4,3");
    s.medusa.num_heads = 2;
    s.max_new_tokens = 100000;  // every turn runs to the end of the context
    s.ctx_size = 96;  // a small KV cache: turn after turn runs into its end before a story ends
    int turns = 0, context_ends = 0;
    double baseline = 0, peak = 0;
    while (reader.steps().size() < kSteps) {
        s.sampling.seed = uint64_t(turns);
        s.rule = turns % 2 ? AcceptRule::Sample : AcceptRule::Greedy;  // greedy stories run to the context's end
        REQUIRE(worker.generate("Once upon a time", s));
        while (worker.busy()) {  // the UI's frames
            reader.poll(log);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        worker.wait_idle();
        INFO(worker.last_error());
        REQUIRE(worker.last_error().empty());
        reader.poll(log);
        ++turns;
        context_ends += reader.turns().back().stop_reason == StopReason::Context;
        if (baseline == 0 && reader.steps().size() >= kWarmSteps) baseline = resident_mb();
        if (baseline > 0) peak = std::max(peak, resident_mb());
    }
    INFO(turns << " turns, " << context_ends << " to the context's end, " << reader.steps().size() << " steps; resident "
               << baseline << " MB at " << kWarmSteps << " steps, at most " << peak << " MB after");
    CHECK(context_ends >= turns / 2);
    CHECK((peak - baseline) * (1 << 20) / double(reader.steps().size() - kWarmSteps) < kBytesPerStep);
    CHECK(context().validation_messages() == 0);
}
