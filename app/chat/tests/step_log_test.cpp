// The worker/UI hand-over: a writer appends steps while a reader polls, as the UI does every
// frame; the reader must end with exactly the written steps, in order, none lost or repeated.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "step_log.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

StepRecord record(int turn, int step) {
    StepRecord r;
    r.turn = turn;
    r.trace.step = step;
    r.trace.emitted = {step, step + 1};
    r.emitted_text = {"a", "b"};
    return r;
}

}  // namespace

TEST_CASE("the reader sees every step exactly once while the writer runs", "[chat][step_log]") {
    StepLog log;
    StepLogReader reader;
    constexpr int kTurns = 5, kSteps = 2000;
    std::atomic<bool> done{false};
    std::atomic<size_t> polls_seen{0};
    // The writer waits for the reader between turns now and then, so the two really interleave
    // (on two cores an unhindered writer can finish before the reader's first poll).
    auto wait_for_poll = [&] {
        const size_t seen = polls_seen.load();
        while (polls_seen.load() == seen) std::this_thread::yield();
    };
    std::thread writer([&] {
        for (int t = 0; t < kTurns; ++t) {
            if (t % 2 == 0) wait_for_poll();
            const int id = log.begin_turn("prompt " + std::to_string(t), "test", DrafterKind::Plain);
            for (int s = 0; s < kSteps; ++s) log.append(record(id, s));
            log.end_turn(id, StopReason::Length, kSteps, kSteps, 1.0);
        }
        done = true;
    });
    size_t polls = 0, last_size = 0;
    bool monotonic = true;
    while (!done) {
        reader.poll(log);
        ++polls;
        polls_seen.store(polls);
        if (reader.steps().size() < last_size) monotonic = false;
        last_size = reader.steps().size();
    }
    writer.join();
    reader.poll(log);
    CHECK(monotonic);
    REQUIRE(reader.steps().size() == size_t(kTurns * kSteps));
    REQUIRE(reader.turns().size() == size_t(kTurns));
    for (int t = 0; t < kTurns; ++t) {
        CHECK(reader.turns()[t].done);
        for (int s = 0; s < kSteps; ++s) {
            const StepRecord& r = reader.steps()[size_t(t * kSteps + s)];
            REQUIRE(r.turn == reader.turns()[t].id);
            REQUIRE(r.trace.step == s);
            REQUIRE(r.trace.emitted == std::vector<int>{s, s + 1});
        }
    }
    INFO("polls: " << polls);
    CHECK(polls > 1);
}

TEST_CASE("a clear while the reader holds steps restarts it from the new epoch", "[chat][step_log]") {
    StepLog log;
    StepLogReader reader;
    int id = log.begin_turn("one", "test", DrafterKind::Plain);
    for (int s = 0; s < 10; ++s) log.append(record(id, s));
    REQUIRE(reader.poll(log));
    REQUIRE(reader.steps().size() == 10);
    log.clear();
    id = log.begin_turn("two", "test", DrafterKind::Plain);
    for (int s = 0; s < 3; ++s) log.append(record(id, 100 + s));
    // Without the epoch the reader would ask for steps from index 10 and miss these three.
    REQUIRE(reader.poll(log));
    REQUIRE(reader.steps().size() == 3);
    CHECK(reader.steps()[0].trace.step == 100);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].prompt == "two");
    CHECK_FALSE(reader.poll(log));  // nothing new
}

TEST_CASE("clears racing with appends never leave stale or repeated steps", "[chat][step_log]") {
    StepLog log;
    StepLogReader reader;
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (int round = 0; round < 200; ++round) {
            log.clear();
            const int id = log.begin_turn("r", "test", DrafterKind::Plain);
            for (int s = 0; s < 50; ++s) log.append(record(id, s));
        }
        done = true;
    });
    bool ok = true;
    while (!done) {
        reader.poll(log);
        // Within one epoch the reader's steps are 0, 1, 2, ... of one turn.
        const auto& st = reader.steps();
        for (size_t i = 0; i < st.size(); ++i) ok = ok && st[i].trace.step == int(i) && st[i].turn == st[0].turn;
    }
    writer.join();
    reader.poll(log);
    CHECK(ok);
    CHECK(reader.steps().size() == 50);
}

TEST_CASE("steps before the latest kDetailedSteps keep their text but not their trees or the shapes weighed, in the "
          "log and the reader",
          "[chat][step_log]") {
    StepLog log;
    StepLogReader reader;
    const int turn = log.begin_turn("prompt", "test", DrafterKind::Plain);
    const int total = int(kDetailedSteps) + 250;
    for (int i = 0; i < total; ++i) {
        StepRecord r = record(turn, i + 1);
        r.trace.nodes.resize(17);
        r.node_text.assign(17, "piece");
        r.greedy_text.assign(17, "other");
        r.trace.drafter = DrafterKind::Ngram;
        r.trace.control = ControlTrace{.weighed = {ShapeOption{}, ShapeOption{.drafter = DrafterKind::Ngram}},
                                       .chosen = 1,
                                       .reason = ControlReason::Pays};
        log.append(std::move(r));
        if (i % 97 == 0) reader.poll(log);  // the UI polls now and then
    }
    reader.poll(log);
    const StepLog::Snapshot all = log.read(0);
    for (const auto* steps : {&all.steps, &reader.steps()}) {
        REQUIRE(int(steps->size()) == total);
        for (int i = 0; i < total; ++i) {
            const StepRecord& r = (*steps)[i];
            INFO("step " << i);
            const bool old = i < total - int(kDetailedSteps);
            CHECK(r.details_dropped == old);
            CHECK(r.trace.nodes.size() == (old ? 0u : 17u));
            CHECK(r.node_text.size() == (old ? 0u : 17u));
            CHECK(r.node_count() == 17);
            CHECK(r.trace.control.has_value() == !old);  // the shapes weighed go; the drafter chosen stays
            CHECK(r.trace.drafter == DrafterKind::Ngram);
            CHECK(r.emitted_text == std::vector<std::string>{"a", "b"});  // the chat text stays whole
            CHECK(r.trace.step == i + 1);
        }
    }
}

TEST_CASE("dropping the last turn takes its steps with it, and a clear counts turns from 1 again", "[chat][step_log]") {
    StepLog log;
    StepLogReader reader;
    const int first = log.begin_turn("one", "plain", DrafterKind::Plain);
    log.append(record(first, 1));
    log.end_turn(first, StopReason::Length, 2, 1, 1.0);
    const int second = log.begin_turn("two", "plain", DrafterKind::Plain);
    log.append(record(second, 1));
    log.append(record(second, 2));
    CHECK_FALSE(log.drop_last_turn());  // still being decoded
    log.end_turn(second, StopReason::Length, 4, 2, 1.0);
    reader.poll(log);
    REQUIRE(reader.steps().size() == 3);
    CHECK(log.drop_last_turn());
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    CHECK(reader.turns()[0].prompt == "one");
    REQUIRE(reader.steps().size() == 1);
    CHECK(reader.steps()[0].turn == first);
    CHECK(log.begin_turn("two again", "plain", DrafterKind::Plain) == second);  // the replacement keeps its number
    log.clear();
    CHECK(log.begin_turn("new chat", "plain", DrafterKind::Plain) == 1);
}
