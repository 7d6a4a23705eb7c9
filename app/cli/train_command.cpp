// `medusa train --objective heads|joint|eagle|eagle3`, and its objectives' old names (train-heads,
// train-heads --joint, train-eagle, train-eagle --eagle3). The heads' objective is here:
// self-distillation data from the model itself, Medusa-1 training of K heads on the GPU, and a
// held-out accuracy report; writes Medusa's HF layout into --out.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.h"
#include "interrupt.h"
#include "training_setup.h"
#include "llm/context_length.h"
#include "llm/gpu_model.h"
#include "llm/medusa_heads_io.h"
#include "model/atomic_file.h"
#include "session.h"
#include "train/head_training.h"
#include "model/json_file.h"
#include "model/folder_lock.h"
#include "train/checkpoint_identity.h"
#include "train/training_objective.h"
#include "train/training_progress.h"

namespace medusa::cli {

namespace fs = std::filesystem;
using namespace medusa::train;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json accuracy_json(const HeadAccuracy& a) {
    return {{"loss", a.loss}, {"top1", a.top1}, {"top5", a.top5}, {"rank_share", a.rank_share},
            {"positions", a.positions}};
}

bool has_flag(int argc, char** argv, const char* flag) {
    for (int i = 2; i < argc; ++i)
        if (!std::strcmp(argv[i], flag)) return true;
    return false;
}

// `train --objective NAME` (heads without it) or an old name: train-heads [--joint], train-eagle [--eagle3].
Objective chosen_objective(int argc, char** argv) {
    const std::string cmd = argv[1];
    if (cmd == "train-heads") return has_flag(argc, argv, "--joint") ? Objective::Joint : Objective::Heads;
    if (cmd == "train-eagle") return has_flag(argc, argv, "--eagle3") ? Objective::Eagle3 : Objective::Eagle;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--objective")) continue;
        const auto o = i + 1 < argc ? objective_named(argv[i + 1]) : std::nullopt;
        if (!o) throw UsageError("--objective expects heads, joint, eagle or eagle3");
        return *o;
    }
    return Objective::Heads;
}

// The arguments as the objective's own parser reads them: without train's `--objective NAME`.
std::vector<char*> objective_arguments(int argc, char** argv) {
    const bool train = !std::strcmp(argv[1], "train");
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (train && i >= 2 && !std::strcmp(argv[i], "--objective")) {
            ++i;
            continue;
        }
        rest.push_back(argv[i]);
    }
    rest.push_back(nullptr);
    return rest;
}

}  // namespace

int run_train(int argc, char** argv) {
    const Objective objective = chosen_objective(argc, argv);
    std::vector<char*> rest = objective_arguments(argc, argv);
    const int n = int(rest.size()) - 1;
    switch (objective) {
        case Objective::Heads: return run_train_heads(n, rest.data());
        case Objective::Joint: return run_train_joint(n, rest.data());
        case Objective::Eagle: return run_train_eagle(n, rest.data());
        case Objective::Eagle3: return run_train_eagle3(n, rest.data());
    }
    return 2;
}

int run_train_heads(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("train-heads"));
    const InterruptScope interrupt;
    auto [out, file, tok] = open_training(args);
    const int K = heads_to_train(args);
    TrainOptions o;
    apply_training_flags(args, out, 2000, o);
    const int layers = args.integer("--layers", 1);
    o.identity = checkpoint_identity(file, std::to_string(K) + " Medusa heads of " + std::to_string(layers) + " blocks");
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
    auto gpu = open_gpu(args);  // before the output folder: without a device nothing is left behind
    const FolderLock lock(out);  // one trainer per folder
    // Training text is short (--max-len): a file's huge claimed context needs no cache that long.
    GpuModel model(*gpu, file, {.context = choose_context(0, file.config.seq_len)});
    std::fprintf(stderr, "model %s on %s\n", file.path.c_str(), gpu->info().name.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    const DistilledText text = distill_text(args, model, file, tok, out, o.seed);
    const DistillData& train = text.train;
    const DistillData& held = text.held;

    MedusaHeads init = MedusaHeads::init_from_model(file, K, layers);
    init.source = file.path;
    const HeadAccuracy before = evaluate_heads(*gpu, init, held);
    const TrainResult r = train_heads(*gpu, init, train, o, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
    });
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    const HeadAccuracy after = evaluate_heads(*gpu, r.heads, held);
    save_medusa_heads(r.heads, out);

    std::printf("held-out accuracy (%zu positions)\nhead  top1(init)  top1   top5(init)  top5   loss\n", after.positions);
    for (int k = 0; k < K; ++k)
        std::printf("%4d  %10.3f  %5.3f  %10.3f  %5.3f  %5.3f\n", k + 1, before.top1[k], after.top1[k], before.top5[k],
                    after.top5[k], after.loss[k]);
    const double wall = seconds_since(t0);
    std::printf("training: %d steps, %.0f positions/s, %.1f s training, %.1f s in all; heads in %s\n", r.steps_done,
                r.positions_per_s, r.wall_s, wall, out.c_str());
    nlohmann::json report = {{"model", file.path},      {"device", gpu->info().name}, {"heads", K},
                             {"steps", o.steps},        {"batch", o.batch},          {"train_tokens", train.num_tokens()},
                             {"heldout_tokens", held.num_tokens()}, {"init", accuracy_json(before)},
                             {"trained", accuracy_json(after)},    {"train_positions_per_s", r.positions_per_s},
                             {"train_wall_s", r.wall_s},           {"total_wall_s", wall}};
    write_file_atomically((fs::path(out) / "accuracy.json").string(), json_text(report));
    return 0;
}

}  // namespace medusa::cli
