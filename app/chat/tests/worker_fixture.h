// One Vulkan context for the app's test process (validation on under MEDUSA_VALIDATION=1, as
// CTest sets it), and one turn decoded by a DecodeWorker as the app runs it.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "decode_worker.h"
#include "gpu/context.h"

namespace medusa::chat::test {

inline gpu::Context& context() {
    static gpu::Context ctx;
    return ctx;
}

// The turn's log after the worker is idle; fails the test if the turn did not run cleanly.
inline StepLogReader decode_turn(const DecodeSettings& s, const std::string& prompt) {
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate(prompt, s));
    worker.wait_idle();
    INFO(worker.last_error());
    REQUIRE(worker.last_error().empty());
    StepLogReader reader;
    reader.poll(log);
    REQUIRE(reader.turns().size() == 1);
    return reader;
}

}  // namespace medusa::chat::test
