// `medusa train-eagle`: self-distillation data from the model itself, EAGLE layer training on the
// GPU, and held-out accuracy per draft depth (drafting from the layer's own features); writes
// EAGLE's layout (config.json + model.safetensors) and accuracy.json into --out.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "interrupt.h"
#include "training_setup.h"
#include "llm/context_length.h"
#include "llm/eagle_layer_io.h"
#include "llm/gpu_model.h"
#include "model/atomic_file.h"
#include "session.h"
#include "train/eagle_draft_accuracy.h"
#include "train/eagle_training.h"
#include "model/json_file.h"
#include "model/folder_lock.h"
#include "train/checkpoint_identity.h"
#include "train/training_progress.h"

namespace medusa::cli {

namespace fs = std::filesystem;
using namespace medusa::train;

namespace {

nlohmann::json accuracy_json(const EagleTeacherForced& tf, const EagleDraftAccuracy& d, const EagleDraftAccuracy& g) {
    return {{"teacher_forced", {{"feature_loss", tf.feature_loss}, {"token_loss", tf.token_loss}, {"top1", tf.top1},
                                {"positions", tf.positions}}},
            {"draft", draft_json(d)},
            {"draft_on_greedy_text", draft_json(g)}};
}

void print_draft_table(const char* what, const EagleDraftAccuracy& before, const EagleDraftAccuracy& after) {
    std::printf("held-out %s: draft accuracy over %zu starts, drafting from its own features\n"
                "depth  top1(init)  top1   given earlier right  chain accepted\n",
                what, after.starts);
    for (size_t k = 0; k < after.top1.size(); ++k)
        std::printf("%5zu  %10.3f  %5.3f  %19.3f  %14.3f\n", k + 1, before.top1[k], after.top1[k], after.conditional[k],
                    after.accepted[k]);
}

}  // namespace

int run_train_eagle(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("train-eagle"));
    const InterruptScope interrupt;
    auto [out, file, tok] = open_training(args);
    EagleTrainOptions o;
    apply_training_flags(args, out, o.steps, o);
    o.identity = checkpoint_identity(file, "an EAGLE layer");
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
    o.noise = args.number("--noise", o.noise);
    o.loss.token = args.number("--token-weight", o.loss.token);
    const int depth = args.integer("--depth", 5);
    const int eval_positions = args.integer("--eval-positions", 4000);
    if (depth < 1 || eval_positions < 1) throw UsageError("--depth and --eval-positions must be positive");
    if (o.noise < 0 || o.loss.token < 0) throw UsageError("--noise and --token-weight must not be negative");
    auto gpu = open_gpu(args);  // before the output folder: without a device nothing is left behind
    const FolderLock lock(out);  // one trainer per folder
    // Training text is short (--max-len): a file's huge claimed context needs no cache that long.
    GpuModel model(*gpu, file, {.context = choose_context(0, file.config.seq_len)});
    std::fprintf(stderr, "model %s on %s\n", file.path.c_str(), gpu->info().name.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    const DistilledText text = distill_text(args, model, file, tok, out, o.seed, /*greedy_heldout=*/true);
    const EagleTarget target = EagleTarget::from(file);

    EagleLayer init = EagleLayer::init(file.config, o.seed);
    init.source = file.path;
    const auto tf_before = evaluate_eagle_teacher_forced(*gpu, init, target, text.held);
    const auto draft_before = eagle_draft_accuracy(init, file, text.held, depth, size_t(eval_positions));
    const auto greedy_before = eagle_draft_accuracy(init, file, text.held_greedy, depth, size_t(eval_positions));
    const EagleTrainResult r = train_eagle(*gpu, init, target, text.train, o, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
    });
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    save_eagle_layer(r.layer, out, file.path);
    const auto tf_after = evaluate_eagle_teacher_forced(*gpu, r.layer, target, text.held);
    const auto draft_after = eagle_draft_accuracy(r.layer, file, text.held, depth, size_t(eval_positions));
    const auto greedy_after = eagle_draft_accuracy(r.layer, file, text.held_greedy, depth, size_t(eval_positions));

    print_draft_table("text (sampled and greedy, as trained)", draft_before, draft_after);
    print_draft_table("greedy text (what greedy decoding meets)", greedy_before, greedy_after);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("teacher-forced top1 %.3f over %zu positions; a greedy chain of %d accepts %.2f draft tokens per step "
                "on greedy text\n",
                tf_after.top1, tf_after.positions, depth, greedy_after.mean_accepted);
    std::printf("training: %d steps, %.0f positions/s, %.1f s training, %.1f s in all; layer in %s\n", r.steps_done,
                r.positions_per_s, r.wall_s, wall, out.c_str());
    const nlohmann::json stage_ms = report_stage_times(r.stage_times);
    const nlohmann::json report = {{"model", file.path},
                                   {"device", gpu->info().name},
                                   {"steps", o.steps},
                                   {"batch_sequences", o.batch},
                                   {"lr", o.lr},
                                   {"noise", o.noise},
                                   {"token_weight", o.loss.token},
                                   {"train_tokens", text.train.num_tokens()},
                                   {"heldout_tokens", text.held.num_tokens()},
                                   {"init", accuracy_json(tf_before, draft_before, greedy_before)},
                                   {"trained", accuracy_json(tf_after, draft_after, greedy_after)},
                                   {"train_positions_per_s", r.positions_per_s},
                                   {"train_wall_s", r.wall_s},
                                   {"step_stage_ms", stage_ms},
                                   {"total_wall_s", wall}};
    write_file_atomically((fs::path(out) / "accuracy.json").string(), json_text(report));
    return 0;
}

}  // namespace medusa::cli
