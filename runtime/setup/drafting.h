// The drafter a DrafterSpec names, built once for every front end, with what it drafts with kept
// alive beside it: Medusa heads and their tree, a draft model on the target's device, EAGLE's
// layer on the target's engine.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decode/drafter.h"
#include "decode/tree.h"
#include "llm/cpu_reference.h"
#include "llm/eagle_layer.h"
#include "llm/eagle_runner.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads.h"
#include "llm/tree_runner.h"
#include "model/model_file.h"
#include "setup/decoding_spec.h"
#include "setup/drafting_target.h"

namespace medusa {

// A draft model loaded for a target: its file and the engine it runs on.
struct DraftModel {
    std::string path;
    ModelFile file;
    std::unique_ptr<GpuModel> gpu;
    std::unique_ptr<CpuReferenceModel> cpu;
    LanguageModel& model() { return gpu ? static_cast<LanguageModel&>(*gpu) : *cpu; }
};

// What an EAGLE layer reads and drafts over, for the views that explain it.
struct EagleReads {
    EagleVersion version = EagleVersion::Eagle1;
    std::vector<int> target_layers;  // EAGLE-3: the layers whose inputs it fuses, in order
    bool fused = false;              // EAGLE-3: fc fuses several layers
    int draft_vocab = 0, vocab = 0;  // EAGLE-3's draft vocabulary, and the target's
};

struct Drafting {
    DrafterSpec spec;
    std::shared_ptr<const MedusaHeads> heads;  // Medusa
    TreeBuffers tree;                          // Medusa
    std::shared_ptr<DraftModel> draft;         // a draft model
    std::unique_ptr<EagleRunner> eagle;        // EAGLE's layer
    std::optional<EagleReads> eagle_reads;     // with `eagle`
    // The drafters the step controller chooses among (one, or auto's several); empty when the
    // drafter drafts with a fixed shape or does not draft.
    std::vector<std::unique_ptr<Drafter>> members;
    std::unique_ptr<Drafter> drafter;  // last: it goes first, before what it drafts with
    // What was loaded, for statistics and status lines: "medusa (init, 4 heads, 63-node tree
    // mc_sim_7b_63)", "draft stories260K_q80.bin (llama2c, 5 layers, dim 64; gamma 4)", ...
    std::string summary;
    std::vector<std::string> warnings;  // e.g. heads with non-finite weights
};

// Loads what `spec` names for `target` and builds its drafter. `reuse`: a previous Drafting for
// the same target, whose heads or draft model are kept when the spec names them again (a mode
// switch in the app reloads nothing it has). `progress` hears "loading ..." lines. Throws
// std::invalid_argument or FormatError naming the file at fault (a heads file for another
// hidden size, a draft model with another vocabulary, a tree deeper than the heads).
// Under StepShaping::Controlled (and AlwaysDraft) the drafter is the step controller over what the
// spec names, with the target's cost model (cached, else measured: progress hears it).
Drafting build_drafting(const DrafterSpec& spec, const DraftingTarget& target, const Drafting* reuse = nullptr,
                        const std::function<void(const std::string&)>& progress = {},
                        StepShaping shaping = StepShaping::Controlled);

}  // namespace medusa
