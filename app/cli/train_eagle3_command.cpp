// `medusa train-eagle --eagle3`: self-distilled text with the chosen target layers' inputs,
// EAGLE-3 training with training-time test on the GPU, held-out accuracy per unrolled step and
// per draft depth (drafting chains from the layer's own features); writes SafeAILab's published
// layout and accuracy.json into --out.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "interrupt.h"
#include "llm/eagle_layer_io.h"
#include "train/checkpoint_identity.h"
#include "train/eagle3_training.h"
#include "train/training_progress.h"
#include "training_report.h"
#include "training_setup.h"

namespace medusa::cli {

using namespace medusa::train;

namespace {

// --layers a,b,c: distinct target layers, in the order given (the fused feature's order).
std::vector<int> layers_flag(const Args& args, int target_layers) {
    if (!args.has("--layers")) {
        std::vector<int> rule = eagle3_default_layers(target_layers);
        if (rule.empty()) throw UsageError("a target of " + std::to_string(target_layers) + " layers has none of layers 2, L/2, L-3: give --layers");
        return rule;
    }
    std::vector<int> layers;
    std::stringstream in(args.str("--layers"));
    std::string item;
    while (std::getline(in, item, ',')) {
        size_t used = 0;
        int l = -1;
        try {
            l = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != item.size() || l < 0 || l >= target_layers)
            throw UsageError("--layers: '" + item + "' is not a layer of the target (0 to " + std::to_string(target_layers - 1) + ")");
        if (std::find(layers.begin(), layers.end(), l) != layers.end())
            throw UsageError("--layers names layer " + std::to_string(l) + " twice");
        layers.push_back(l);
    }
    if (layers.empty() || layers.size() > 16) throw UsageError("--layers lists 1 to 16 target layers, as 2,8,13");
    return layers;
}

nlohmann::json ttt_json(const Eagle3Evaluation& e) {
    return {{"top1", e.top1}, {"loss", e.loss}, {"rows", e.rows}};
}

// The drafter's shape from the flags, checked before the GPU and the training text.
struct Eagle3Shape {
    std::vector<int> layers;  // the target layers whose inputs it fuses
    int draft_vocab = 0;      // 0: what covers 99% of the training text
};

// The run's flags: its schedule (checked against a checkpoint when resuming) and its shape.
Eagle3Shape eagle3_options(const Args& args, const std::string& out, const ModelFile& file, Eagle3TrainOptions& o) {
    apply_training_flags(args, out, o.steps, o);
    o.ttt_steps = args.integer("--ttt-steps", o.ttt_steps);
    Eagle3Shape shape{layers_flag(args, file.config.n_layers), args.integer("--draft-vocab", 0)};
    if (o.ttt_steps < 1 || o.ttt_steps > 32) throw UsageError("--ttt-steps must be 1 to 32");
    if (shape.draft_vocab < 0 || shape.draft_vocab > file.config.vocab_size)
        throw UsageError("--draft-vocab must be 1 to the model's vocabulary of " + std::to_string(file.config.vocab_size));
    return shape;
}

void check_resumable_shape(const ModelFile& file, const Eagle3Shape& shape, Eagle3TrainOptions& o) {
    std::string what = "an EAGLE-3 layer over layers";
    for (int l : shape.layers) {
        what += ' ';
        what += std::to_string(l);
    }
    what += ", draft vocabulary " + std::to_string(shape.draft_vocab) + ", " + std::to_string(o.ttt_steps) + " test steps";
    o.identity = checkpoint_identity(file, what);
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
}

// The untrained drafter over the training text's draft vocabulary.
EagleLayer initial_layer(const ModelFile& file, const EagleTarget& target, const DistilledText& text,
                         const Eagle3Shape& shape, const Eagle3TrainOptions& o, DraftVocabulary& vocab) {
    vocab = choose_draft_vocabulary(text.train, target.vocab, shape.draft_vocab);
    std::fprintf(stderr, "draft vocabulary: %zu of %d tokens, covering %.2f%% of the training text\n",
                 vocab.tokens.size(), target.vocab, 100.0 * vocab.coverage);
    EagleLayer init =
        EagleLayer::init_eagle3(file.config, shape.layers, vocab.tokens, target.final_norm, target.lm_head, o.seed);
    init.source = file.path;
    return init;
}

void print_held_out(const Eagle3Evaluation& before, const Eagle3Evaluation& after, const HeldOutDrafts& drafts,
                    int depth) {
    std::printf("held-out text, teacher-forced tokens on the layer's own features (training-time test):\n"
                "step  top1(init)  top1   loss\n");
    for (size_t k = 0; k < after.top1.size(); ++k)
        std::printf("%4zu  %10.3f  %5.3f  %5.3f\n", k + 1, before.top1[k], after.top1[k], after.loss[k]);
    const EagleDraftAccuracy& greedy = drafts.greedy;
    std::printf("held-out greedy text, drafting chains (what greedy decoding meets), over %zu starts:\n"
                "depth  top1   given earlier right  chain accepted\n",
                greedy.starts);
    for (size_t k = 0; k < greedy.top1.size(); ++k)
        std::printf("%5zu  %5.3f  %19.3f  %14.3f\n", k + 1, greedy.top1[k], greedy.conditional[k], greedy.accepted[k]);
    std::printf("a greedy chain of %d accepts %.2f draft tokens per step on greedy text\n", depth, greedy.mean_accepted);
}

}  // namespace

int run_train_eagle3(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("train-eagle --eagle3"));
    const InterruptScope interrupt;
    const TrainingStart start = open_training(args);
    const ModelFile& file = start.file;
    Eagle3TrainOptions o;
    const Eagle3Shape shape = eagle3_options(args, start.out, file, o);
    const DraftEvaluation drafts(args, 6);
    check_resumable_shape(file, shape, o);
    TrainingDevice device(args, start);
    const DistilledText text =
        distill_text(args, device.model, file, start.tok, start.out, o.seed, /*greedy_heldout=*/true, shape.layers);
    const EagleTarget target = EagleTarget::from(file);
    DraftVocabulary vocab;
    const EagleLayer init = initial_layer(file, target, text, shape, o, vocab);
    const std::vector<int> held_top = target_top_tokens(text.held, target);
    const Eagle3Evaluation ttt_before = evaluate_eagle3(*device.gpu, init, target, text.held, held_top, o.ttt_steps);
    const EagleTrainResult r = train_eagle3(*device.gpu, init, target, file.config, text.train, o, log_to_stderr);
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    save_eagle_layer(r.layer, start.out, file.path);
    const Eagle3Evaluation ttt_after = evaluate_eagle3(*device.gpu, r.layer, target, text.held, held_top, o.ttt_steps);
    const HeldOutDrafts after = held_out_drafts(r.layer, file, text, drafts);

    print_held_out(ttt_before, ttt_after, after, drafts.depth);
    TrainingReport report(file, device, o.steps);
    report.text(text);
    report.run({r.steps_done, r.positions_per_s, r.wall_s}, "layer", start.out);
    report.stage_times(r.stage_times);
    report.add({{"version", "EAGLE-3"},
                {"target_layers", shape.layers},
                {"draft_vocab", vocab.tokens.size()},
                {"draft_vocab_coverage", vocab.coverage},
                {"ttt_steps", o.ttt_steps},
                {"batch_sequences", o.batch},
                {"lr", o.lr},
                {"ttt_init", ttt_json(ttt_before)},
                {"ttt_trained", ttt_json(ttt_after)},
                {"draft", draft_json(after.held)},
                {"draft_on_greedy_text", draft_json(after.greedy)}});
    report.write(start.out, "accuracy.json");
    return 0;
}

}  // namespace medusa::cli
