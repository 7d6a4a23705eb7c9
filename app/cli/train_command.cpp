// `medusa train --objective heads|joint|eagle|eagle3`, and its objectives' old names (train-heads,
// train-heads --joint, train-eagle, train-eagle --eagle3). The heads' objective is here:
// self-distillation data from the model itself, Medusa-1 training of K heads on the GPU, and a
// held-out accuracy report; writes Medusa's HF layout into --out.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.h"
#include "interrupt.h"
#include "llm/medusa_heads_io.h"
#include "train/checkpoint_identity.h"
#include "train/head_training.h"
#include "train/training_objective.h"
#include "train/training_progress.h"
#include "training_report.h"
#include "training_setup.h"

namespace medusa::cli {

using namespace medusa::train;

namespace {

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
    const TrainingStart start = open_training(args);
    const ModelFile& file = start.file;
    const int K = heads_to_train(args);
    TrainOptions o;
    apply_training_flags(args, start.out, 2000, o);
    const int layers = args.integer("--layers", 1);
    o.identity = checkpoint_identity(file, std::to_string(K) + " Medusa heads of " + std::to_string(layers) + " blocks");
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
    TrainingDevice device(args, start);
    const DistilledText text = distill_text(args, device.model, file, start.tok, start.out, o.seed);

    MedusaHeads init = MedusaHeads::init_from_model(file, K, layers);
    init.source = file.path;
    const HeadAccuracy before = evaluate_heads(*device.gpu, init, text.held);
    const TrainResult r = train_heads(*device.gpu, init, text.train, o, log_to_stderr);
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    const HeadAccuracy after = evaluate_heads(*device.gpu, r.heads, text.held);
    save_medusa_heads(r.heads, start.out);

    std::printf("held-out accuracy (%zu positions)\nhead  top1(init)  top1   top5(init)  top5   loss\n", after.positions);
    for (int k = 0; k < K; ++k)
        std::printf("%4d  %10.3f  %5.3f  %10.3f  %5.3f  %5.3f\n", k + 1, before.top1[k], after.top1[k], before.top5[k],
                    after.top5[k], after.loss[k]);
    TrainingReport report(file, device, o.steps);
    report.text(text);
    report.run({r.steps_done, r.positions_per_s, r.wall_s}, "heads", start.out);
    report.add({{"heads", K}, {"batch", o.batch}, {"init", accuracy_json(before)}, {"trained", accuracy_json(after)}});
    report.write(start.out, "accuracy.json");
    return 0;
}

}  // namespace medusa::cli
