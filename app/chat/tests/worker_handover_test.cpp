// The worker/UI hand-over with real decoding: the DecodeWorker runs Medusa steps on the GPU
// (lavapipe here) while this thread, standing in for the UI, polls the StepLog as fast as it can
// and calls the worker's control methods. What the reader ends with must be exactly what the
// decoder produced, step for step: nothing lost, repeated or torn. scripts/test_app_sanitizers.sh
// runs this under ThreadSanitizer.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "decode/medusa_decoder.h"
#include "decode/tree.h"
#include "decode_worker.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

// A frame's worth of UI work is far shorter than a step; a short nap keeps a spinning reader from
// starving the worker of the CPU (2 cores, lavapipe) while still reading many times per step.
void nap() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

gpu::Context& context() {
    static gpu::Context ctx;  // validation layer on under MEDUSA_VALIDATION=1
    return ctx;
}

DecodeSettings greedy_medusa() {
    DecodeSettings s;  // stories260K + tok512, untrained heads
    s.mode = DecodeMode::Medusa;
    s.tree = "chain:3";
    s.num_heads = 3;
    s.rule = AcceptRule::Greedy;
    s.max_new_tokens = 80;
    return s;
}

// The same generation straight through MedusaDecoder, on this thread: the reference.
std::vector<StepTrace> reference_steps(const DecodeSettings& s, const std::string& prompt) {
    const ModelFile file = load_model(s.model_path);
    GpuModel model(context(), file);
    const Tokenizer tok = Tokenizer::from_file(s.tokenizer_path);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, s.num_heads);
    const TreeBuffers tree = build_tree_buffers(load_tree(s.tree));
    MedusaOptions o;
    o.rule = AcceptRule::Greedy;
    o.max_new_tokens = s.max_new_tokens;
    o.stop_tokens = {tok.eos_id(), tok.bos_id()};  // llama2.c stories end at BOS, as the worker stops
    o.seed = s.seed;
    MedusaDecoder decoder(model, file, heads, tree, o);
    std::vector<StepTrace> out;
    decoder.generate(tok.encode(prompt, true), [&](const StepTrace& t) {
        out.push_back(t);
        return true;
    });
    return out;
}

void check_same_steps(const std::vector<StepRecord>& got, const std::vector<StepTrace>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("step " << i);
        const StepTrace& a = got[i].trace;
        const StepTrace& b = want[i];
        REQUIRE(a.step == b.step);
        REQUIRE(a.base == b.base);
        REQUIRE(a.emitted == b.emitted);
        REQUIRE(a.path == b.path);
        REQUIRE(a.bonus == b.bonus);
        REQUIRE(a.accepted == b.accepted);
        REQUIRE(a.nodes.size() == b.nodes.size());
        for (size_t n = 0; n < a.nodes.size(); ++n) REQUIRE(a.nodes[n].token == b.nodes[n].token);
        REQUIRE(got[i].emitted_text.size() == a.emitted.size());
    }
}

}  // namespace

TEST_CASE("the UI thread polling during real decoding sees exactly the decoder's steps", "[chat][worker]") {
    const DecodeSettings s = greedy_medusa();
    const std::string prompt = "Once upon a time";
    const std::vector<StepTrace> want = reference_steps(s, prompt);
    REQUIRE(want.size() > 10);

    StepLog log;
    DecodeWorker worker(context(), log);
    StepLogReader reader;
    REQUIRE(worker.generate(prompt, s));
    size_t polls = 0, polls_with_news = 0, last = 0;
    bool monotonic = true;
    std::string status;
    while (worker.busy()) {  // what the UI does every frame
        if (reader.poll(log)) ++polls_with_news;
        ++polls;
        monotonic = monotonic && reader.steps().size() >= last;
        last = reader.steps().size();
        status = worker.status();
        (void)worker.last_error();
        (void)worker.paused();
        nap();
    }
    worker.wait_idle();
    INFO(worker.last_error());
    REQUIRE(worker.last_error().empty());
    reader.poll(log);
    CHECK(monotonic);
    INFO("polls " << polls << ", with news " << polls_with_news);
    CHECK(polls_with_news > 1);  // the reader really read while the worker wrote
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].done);
    check_same_steps(reader.steps(), want);

    // Stop mid-generation, clear, generate again: the second turn alone, again complete.
    REQUIRE(worker.generate(prompt, s));
    while (worker.busy() && reader.steps().size() < want.size() + 3) reader.poll(log), nap();
    worker.stop();
    worker.wait_idle();
    reader.poll(log);
    log.clear();
    REQUIRE(worker.generate(prompt, s));
    while (worker.busy()) reader.poll(log), nap();
    worker.wait_idle();
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].done);
    CHECK(reader.turns()[0].stop_reason != "cancelled");
    check_same_steps(reader.steps(), want);
    CHECK(context().validation_messages() == 0);
}

TEST_CASE("teaching mode: steps released one at a time from the UI thread", "[chat][worker]") {
    const DecodeSettings s = greedy_medusa();
    StepLog log;
    DecodeWorker worker(context(), log);
    StepLogReader reader;
    // Polls until the reader holds `n` steps or the worker ends (then the REQUIREs below fail).
    auto poll_until = [&](size_t n) {
        while (reader.steps().size() < n && worker.busy()) reader.poll(log), nap();
        reader.poll(log);
    };
    worker.set_paused(true);
    REQUIRE(worker.generate("Once upon a time", s));
    // The prompt's step comes first; the worker then holds before the next one. (Releases given
    // before the worker has taken the job belong to no job and are dropped with it.)
    poll_until(1);
    REQUIRE(reader.steps().size() == 1);
    // Each release lets exactly one more step through.
    for (size_t i = 1; i <= 4; ++i) {
        worker.step_once();
        poll_until(i + 1);
        REQUIRE(reader.steps().size() == i + 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // held: nothing more comes
    reader.poll(log);
    CHECK(reader.steps().size() == 5);
    CHECK(worker.busy());
    worker.set_paused(false);
    worker.wait_idle();
    reader.poll(log);
    CHECK(reader.turns().at(0).done);
    check_same_steps(reader.steps(), reference_steps(s, "Once upon a time"));
}
