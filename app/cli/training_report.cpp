#include "training_report.h"

#include <cstdio>
#include <filesystem>

#include "model/atomic_file.h"
#include "model/json_file.h"

namespace medusa::cli {

TrainingReport::TrainingReport(const ModelFile& file, const TrainingDevice& device, int steps)
    : device_(device), json_{{"model", file.path}, {"device", device.gpu->info().name}, {"steps", steps}} {}

void TrainingReport::text(const DistilledText& text) {
    json_["train_tokens"] = text.train.num_tokens();
    json_["heldout_tokens"] = text.held.num_tokens();
}

void TrainingReport::run(const RunSpeed& r, const char* what, const std::string& out) {
    const double wall = device_.seconds();
    std::printf("training: %d steps, %.0f positions/s, %.1f s training, %.1f s in all; %s in %s\n", r.steps_done,
                r.positions_per_s, r.wall_s, wall, what, out.c_str());
    json_["train_positions_per_s"] = r.positions_per_s;
    json_["train_wall_s"] = r.wall_s;
    json_["total_wall_s"] = wall;
}

void TrainingReport::stage_times(const std::vector<gpu::StageTime>& stages) {
    nlohmann::json ms = nlohmann::json::object();
    std::string line;
    for (const auto& st : stages) {
        char b[96];
        std::snprintf(b, sizeof b, "%s%s %.1f ms", line.empty() ? "" : ", ", st.stage.c_str(), st.ms);
        line += b;
        ms[st.stage] = st.ms;
    }
    if (!line.empty()) std::printf("one training step on the GPU: %s\n", line.c_str());
    json_["step_stage_ms"] = ms;
}

void TrainingReport::write(const std::string& dir, const char* name) const {
    write_file_atomically((std::filesystem::path(dir) / name).string(), json_text(json_));
}

DraftEvaluation::DraftEvaluation(const Args& args, int default_depth)
    : depth(args.integer("--depth", default_depth)), positions(0) {
    const int n = args.integer("--eval-positions", 4000);
    if (depth < 1 || n < 1) throw UsageError("--depth and --eval-positions must be positive");
    positions = size_t(n);
}

HeldOutDrafts held_out_drafts(const EagleLayer& layer, const ModelFile& file, const DistilledText& text,
                              const DraftEvaluation& e) {
    return {train::eagle_draft_accuracy(layer, file, text.held, e.depth, e.positions),
            train::eagle_draft_accuracy(layer, file, text.held_greedy, e.depth, e.positions)};
}

nlohmann::json draft_json(const train::EagleDraftAccuracy& d) {
    return {{"top1", d.top1}, {"conditional_top1", d.conditional}, {"chain_accepted", d.accepted},
            {"mean_accepted", d.mean_accepted}, {"starts", d.starts}};
}

}  // namespace medusa::cli
