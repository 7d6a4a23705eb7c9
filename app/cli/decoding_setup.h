// What `generate`, `bench` and `tune-tree` build from the flags: the engine that runs the target
// (the GPU, or the C++ reference with --cpu) behind one TreeRunner, and the decoding spec the
// flags ask for. Every mode is then the same SpeculativeDecoder.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "setup/decoding_spec.h"
#include "setup/drafting.h"
#include "gpu/context.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
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

// The decoding spec the flags give: one drafter (--heads/--tree/--num-heads: Medusa;
// --draft-model; --ngram; --eagle; none: plain; or --speculate auto, every one available) with
// its flags, --fixed-shape (no step controller), and the sampling flags (--temp,
// --top-p, --top-k, --repeat-penalty, --repeat-last-n, --seed, -n, --accept, --typical-eps,
// --typical-delta; --accept defaults to sample when --temp > 0, else greedy). Two drafters, a
// drafter's flag without it, an unknown rule or a value out of range are usage errors naming the flag.
DecodingSpec decoding_spec(const Args& args);
// The sampling flags alone, with no drafter (plain); --temp defaults to `default_temperature`.
DecodingSpec sampling_spec(const Args& args, float default_temperature = 0.8f);
// validate() as a usage error.
void check_spec(const DecodingSpec& spec);
// One drafter's flags: --heads FILE|DIR|init, --num-heads K, --tree SPEC; --gamma N,
// --adaptive-gamma, --draft-tree K (for `model`); --ngram N, --ngram-match M, --ngram-branches B;
// --eagle DIR, --eagle-tree dynamic|SPEC (EAGLE-1: a tree of rank paths), --eagle-topk K,
// --eagle-depth D, --eagle-nodes N.
MedusaSpec medusa_spec(const Args& args);
DraftModelSpec draft_model_spec(const Args& args, const std::string& model);
NgramSpec ngram_spec(const Args& args);
EagleSpec eagle_spec(const Args& args);

// The drafter a spec names, on the engine's device; a file that does not fit is a usage error
// naming it, and warnings about what was loaded go to stderr.
Drafting make_drafting(const DrafterSpec& spec, const ModelFile& target, Engine& engine, StepShaping shaping);
// What `generate` prints on stderr after a generation (and `serve` after each request): "<drafter>,
// <rule>, on <device>: N prompt tokens in T ms, N new tokens in S steps (tokens/step, what was
// drafted and accepted, submits/step) at X tokens/s (stop: <reason>)".
std::string statistics_line(const DecodingSpec& spec, const Drafting& drafting, AcceptRule rule, const Engine& engine,
                            const GenerationStats& stats);
// --speculate auto: n-gram lookup (--ngram flags), and the Medusa heads (--heads/--tree), EAGLE
// layer (--eagle) and draft model (--draft-model) named, else the heads and layer trained for
// the model (-m's file name) in the cache.
AutoSpec auto_spec(const Args& args);

}  // namespace medusa::cli
