// What `generate`, `bench` and `tune-tree` build from the flags: the engine that runs the target
// (the GPU, or the C++ reference with --cpu) behind one TreeRunner, the drafter the flags ask for,
// and the decoding options. Every mode is then the same SpeculativeDecoder.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "decode/drafter.h"
#include "decode/speculative_decoder.h"
#include "decode/tree.h"
#include "gpu/context.h"
#include "llm/cpu_reference.h"
#include "llm/eagle_runner.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads.h"
#include "llm/tree_runner.h"
#include "model/model_file.h"

namespace medusa::cli {

struct Engine {
    std::unique_ptr<gpu::Context> own_gpu;  // null with --cpu, or when the caller owns the device
    gpu::Context* gpu = nullptr;            // the device the target (and a draft model) run on
    std::unique_ptr<GpuModel> gpu_model;
    std::unique_ptr<CpuReferenceModel> cpu_model;
    std::unique_ptr<TreeRunner> runner;
    int context = 0;  // positions of the target's KV cache (a draft model gets as many)
    std::string device_name() const { return gpu ? gpu->info().name : "cpu"; }
    int validation_messages() const { return gpu ? gpu->validation_messages() : 0; }
};
// --cpu: the reference; else the GPU (--device, --validate). `timestamps`: per-stage GPU time;
// `context`: the KV cache's positions (see context_size.h), 0 for the model's trained context.
Engine open_engine(const Args& args, const ModelFile& file, GpuModelOptions options = {});
// The runner of an existing GPU model (bench's, which owns the device and the model).
std::unique_ptr<TreeRunner> gpu_runner(GpuModel& model, bool timestamps = false);
Engine borrowed_engine(GpuModel& model);

enum class DraftMode { Plain, Medusa, DraftModel, Ngram, Eagle };
// --heads/--tree/--num-heads: Medusa; --draft-model: a draft model; --ngram: prompt lookup;
// --eagle: EAGLE's draft layer; none: plain. More than one is a usage error.
DraftMode draft_mode(const Args& args);

// A drafter and what it drafts with, kept alive together.
struct DrafterSetup {
    std::unique_ptr<Drafter> drafter;
    MedusaHeads heads;
    TreeBuffers tree;
    std::string draft_path;
    ModelFile draft_file;
    std::unique_ptr<GpuModel> draft_gpu;
    std::unique_ptr<CpuReferenceModel> draft_cpu;
    std::unique_ptr<EagleRunner> eagle;
    std::string description;  // for statistics lines: "medusa (4 heads, 5-node tree)", ...
};
// For Medusa: --heads FILE|DIR|init, --num-heads K, --tree SPEC. For a draft model: `draft_path`
// (default --draft-model), --gamma N, --adaptive-gamma, --draft-tree K. For n-grams: --ngram N,
// --ngram-match M, --ngram-branches B. For EAGLE: --eagle DIR, --eagle-tree dynamic|SPEC (a tree
// of rank paths: EAGLE-1), --eagle-topk K, --eagle-depth D, --eagle-nodes N.
DrafterSetup make_drafter(const Args& args, DraftMode mode, const ModelFile& target, Engine& engine,
                          const std::string& draft_path = "");

// --temp, --top-p, --top-k, --repeat-penalty, --repeat-last-n, --seed, -n, --accept (sample
// when --temp > 0, else greedy), --typical-eps, --typical-delta. Range errors are usage errors.
DecodeOptions decode_options(const Args& args);

}  // namespace medusa::cli
