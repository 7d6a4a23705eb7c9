// `medusa train-eagle`: self-distillation data from the model itself, EAGLE layer training on the
// GPU, and held-out accuracy per draft depth (drafting from the layer's own features); writes
// EAGLE's layout (config.json + model.safetensors) and accuracy.json into --out.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "interrupt.h"
#include "llm/eagle_layer_io.h"
#include "train/checkpoint_identity.h"
#include "train/eagle_training.h"
#include "train/training_progress.h"
#include "training_report.h"
#include "training_setup.h"

namespace medusa::cli {

using namespace medusa::train;

namespace {

nlohmann::json accuracy_json(const EagleTeacherForced& tf, const HeldOutDrafts& d) {
    return {{"teacher_forced", {{"feature_loss", tf.feature_loss}, {"token_loss", tf.token_loss}, {"top1", tf.top1},
                                {"positions", tf.positions}}},
            {"draft", draft_json(d.held)},
            {"draft_on_greedy_text", draft_json(d.greedy)}};
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
    const TrainingStart start = open_training(args);
    const ModelFile& file = start.file;
    EagleTrainOptions o;
    apply_training_flags(args, start.out, o.steps, o);
    o.identity = checkpoint_identity(file, "an EAGLE layer");
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
    o.noise = args.number("--noise", o.noise);
    o.loss.token = args.number("--token-weight", o.loss.token);
    const DraftEvaluation drafts(args, 5);
    if (o.noise < 0 || o.loss.token < 0) throw UsageError("--noise and --token-weight must not be negative");
    TrainingDevice device(args, start);
    const DistilledText text = distill_text(args, device.model, file, start.tok, start.out, o.seed, /*greedy_heldout=*/true);
    const EagleTarget target = EagleTarget::from(file);

    EagleLayer init = EagleLayer::init(file.config, o.seed);
    init.source = file.path;
    const auto tf_before = evaluate_eagle_teacher_forced(*device.gpu, init, target, text.held);
    const HeldOutDrafts before = held_out_drafts(init, file, text, drafts);
    const EagleTrainResult r = train_eagle(*device.gpu, init, target, text.train, o, log_to_stderr);
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    save_eagle_layer(r.layer, start.out, file.path);
    const auto tf_after = evaluate_eagle_teacher_forced(*device.gpu, r.layer, target, text.held);
    const HeldOutDrafts after = held_out_drafts(r.layer, file, text, drafts);

    print_draft_table("text (sampled and greedy, as trained)", before.held, after.held);
    print_draft_table("greedy text (what greedy decoding meets)", before.greedy, after.greedy);
    std::printf("teacher-forced top1 %.3f over %zu positions; a greedy chain of %d accepts %.2f draft tokens per step "
                "on greedy text\n",
                tf_after.top1, tf_after.positions, drafts.depth, after.greedy.mean_accepted);
    TrainingReport report(file, device, o.steps);
    report.text(text);
    report.run({r.steps_done, r.positions_per_s, r.wall_s}, "layer", start.out);
    report.stage_times(r.stage_times);
    report.add({{"batch_sequences", o.batch},
                {"lr", o.lr},
                {"noise", o.noise},
                {"token_weight", o.loss.token},
                {"init", accuracy_json(tf_before, before)},
                {"trained", accuracy_json(tf_after, after)}});
    report.write(start.out, "accuracy.json");
    return 0;
}

}  // namespace medusa::cli
