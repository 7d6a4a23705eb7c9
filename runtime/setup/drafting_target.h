// Where drafting runs: the target's file and engine, and its device. Its own header so that what
// measures a target (cost_measurement.h) need not include what builds drafters for it.
#pragma once
#include "gpu/context.h"
#include "llm/tree_runner.h"
#include "model/model_file.h"

namespace medusa {

// The target's file and engine, and its device (null: the CPU reference).
struct DraftingTarget {
    const ModelFile& file;
    TreeRunner& runner;
    gpu::Context* gpu = nullptr;
    int context = 0;  // the target's KV cache positions; a draft model gets as many, up to its own
};

}  // namespace medusa
