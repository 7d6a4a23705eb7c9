// What every trainer ends with: its run's speed on stdout and a JSON report in the output folder,
// with the keys every report shares (model, device, steps, the text's tokens, the run's time)
// beside its objective's own; and the held-out draft accuracy both EAGLE trainers measure.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/command_sequence.h"
#include "llm/eagle_layer.h"
#include "train/eagle_draft_accuracy.h"
#include "training_setup.h"

namespace medusa::cli {

// A finished run as a report counts it.
struct RunSpeed {
    int steps_done = 0;
    double positions_per_s = 0;
    double wall_s = 0;
};

class TrainingReport {
public:
    // Starts with "model", "device" and "steps" (the schedule's).
    TrainingReport(const ModelFile& file, const TrainingDevice& device, int steps);
    // The objective's own keys (an object), beside the shared ones.
    void add(const nlohmann::json& keys) { json_.update(keys); }
    // "train_tokens" and "heldout_tokens".
    void text(const DistilledText& text);
    // Prints "training: N steps, P positions/s, S s training, T s in all; WHAT in OUT" and records
    // train_positions_per_s, train_wall_s and total_wall_s.
    void run(const RunSpeed& r, const char* what, const std::string& out);
    // Prints "one training step on the GPU: stage ms, ..." (nothing without timestamps) and
    // records the same as step_stage_ms, stage -> ms.
    void stage_times(const std::vector<gpu::StageTime>& stages);
    // Written atomically as DIR/NAME.
    void write(const std::string& dir, const char* name) const;

private:
    const TrainingDevice& device_;
    nlohmann::json json_;
};

// --depth N (default `depth`) and --eval-positions N (default 4000): how deep the drafted chains
// go and from how many held-out starts.
struct DraftEvaluation {
    DraftEvaluation(const Args& args, int depth);
    int depth;
    size_t positions;
};

// A layer's chains on the held-out text (sampled and greedy, as trained) and on its greedy part
// (what greedy decoding meets).
struct HeldOutDrafts {
    train::EagleDraftAccuracy held, greedy;
};
HeldOutDrafts held_out_drafts(const EagleLayer& layer, const ModelFile& file, const DistilledText& text,
                              const DraftEvaluation& e);

// A held-out draft accuracy (per depth: top-1, given the earlier levels right, chain accepted)
// as the trainers' accuracy.json writes it.
nlohmann::json draft_json(const train::EagleDraftAccuracy& d);

}  // namespace medusa::cli
