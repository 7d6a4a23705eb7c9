// `medusa train-eagle --eagle3`: self-distilled text with the chosen target layers' inputs,
// EAGLE-3 training with training-time test on the GPU, held-out accuracy per unrolled step and
// per draft depth (drafting chains from the layer's own features); writes SafeAILab's published
// layout and accuracy.json into --out.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "interrupt.h"
#include "llm/context_length.h"
#include "llm/eagle_layer_io.h"
#include "llm/gpu_model.h"
#include "model/atomic_file.h"
#include "model/folder_lock.h"
#include "model/json_file.h"
#include "session.h"
#include "train/checkpoint_identity.h"
#include "train/eagle3_training.h"
#include "train/eagle_draft_accuracy.h"
#include "train/training_progress.h"
#include "training_setup.h"

namespace medusa::cli {

namespace fs = std::filesystem;
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

}  // namespace

int run_train_eagle3(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("train-eagle --eagle3"));
    const InterruptScope interrupt;
    auto [out, file, tok] = open_training(args);
    Eagle3TrainOptions o;
    apply_training_flags(args, out, o.steps, o);
    o.ttt_steps = args.integer("--ttt-steps", o.ttt_steps);
    const std::vector<int> layers = layers_flag(args, file.config.n_layers);
    const int draft_vocab = args.integer("--draft-vocab", 0);
    const int depth = args.integer("--depth", 6);
    const int eval_positions = args.integer("--eval-positions", 4000);
    if (o.ttt_steps < 1 || o.ttt_steps > 32) throw UsageError("--ttt-steps must be 1 to 32");
    if (draft_vocab < 0 || draft_vocab > file.config.vocab_size)
        throw UsageError("--draft-vocab must be 1 to the model's vocabulary of " + std::to_string(file.config.vocab_size));
    if (depth < 1 || eval_positions < 1) throw UsageError("--depth and --eval-positions must be positive");
    std::string what = "an EAGLE-3 layer over layers";
    for (int l : layers) {
        what += ' ';
        what += std::to_string(l);
    }
    what += ", draft vocabulary " + std::to_string(draft_vocab) + ", " + std::to_string(o.ttt_steps) + " test steps";
    o.identity = checkpoint_identity(file, what);
    if (o.resume) check_resumable(o.checkpoint_dir, o.identity);  // before the GPU and the training text
    auto gpu = open_gpu(args);  // before the output folder: without a device nothing is left behind
    const FolderLock lock(out);
    GpuModel model(*gpu, file, {.context = choose_context(0, file.config.seq_len)});
    std::fprintf(stderr, "model %s on %s\n", file.path.c_str(), gpu->info().name.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    const DistilledText text = distill_text(args, model, file, tok, out, o.seed, /*greedy_heldout=*/true, layers);
    const EagleTarget target = EagleTarget::from(file);
    const DraftVocabulary vocab = choose_draft_vocabulary(text.train, target.vocab, draft_vocab);
    std::fprintf(stderr, "draft vocabulary: %zu of %d tokens, covering %.2f%% of the training text\n",
                 vocab.tokens.size(), target.vocab, 100.0 * vocab.coverage);
    EagleLayer init = EagleLayer::init_eagle3(file.config, layers, vocab.tokens, target.final_norm, target.lm_head, o.seed);
    init.source = file.path;
    const std::vector<int> held_top = target_top_tokens(text.held, target);
    const Eagle3Evaluation ttt_before = evaluate_eagle3(*gpu, init, target, text.held, held_top, o.ttt_steps);
    const EagleTrainResult r = train_eagle3(*gpu, init, target, file.config, text.train, o, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
    });
    if (interrupt_requested()) return report_training_interrupted(o.checkpoint_dir);
    save_eagle_layer(r.layer, out, file.path);
    const Eagle3Evaluation ttt_after = evaluate_eagle3(*gpu, r.layer, target, text.held, held_top, o.ttt_steps);
    const auto draft = eagle_draft_accuracy(r.layer, file, text.held, depth, size_t(eval_positions));
    const auto greedy = eagle_draft_accuracy(r.layer, file, text.held_greedy, depth, size_t(eval_positions));

    std::printf("held-out text, teacher-forced tokens on the layer's own features (training-time test):\n"
                "step  top1(init)  top1   loss\n");
    for (size_t k = 0; k < ttt_after.top1.size(); ++k)
        std::printf("%4zu  %10.3f  %5.3f  %5.3f\n", k + 1, ttt_before.top1[k], ttt_after.top1[k], ttt_after.loss[k]);
    std::printf("held-out greedy text, drafting chains (what greedy decoding meets), over %zu starts:\n"
                "depth  top1   given earlier right  chain accepted\n",
                greedy.starts);
    for (size_t k = 0; k < greedy.top1.size(); ++k)
        std::printf("%5zu  %5.3f  %19.3f  %14.3f\n", k + 1, greedy.top1[k], greedy.conditional[k], greedy.accepted[k]);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("a greedy chain of %d accepts %.2f draft tokens per step on greedy text\n", depth, greedy.mean_accepted);
    std::printf("training: %d steps, %.0f positions/s, %.1f s training, %.1f s in all; layer in %s\n", r.steps_done,
                r.positions_per_s, r.wall_s, wall, out.c_str());
    const nlohmann::json stage_ms = report_stage_times(r.stage_times);
    const nlohmann::json report = {{"model", file.path},
                                   {"device", gpu->info().name},
                                   {"version", "EAGLE-3"},
                                   {"target_layers", layers},
                                   {"draft_vocab", vocab.tokens.size()},
                                   {"draft_vocab_coverage", vocab.coverage},
                                   {"ttt_steps", o.ttt_steps},
                                   {"steps", o.steps},
                                   {"batch_sequences", o.batch},
                                   {"lr", o.lr},
                                   {"train_tokens", text.train.num_tokens()},
                                   {"heldout_tokens", text.held.num_tokens()},
                                   {"ttt_init", ttt_json(ttt_before)},
                                   {"ttt_trained", ttt_json(ttt_after)},
                                   {"draft", draft_json(draft)},
                                   {"draft_on_greedy_text", draft_json(greedy)},
                                   {"train_positions_per_s", r.positions_per_s},
                                   {"train_wall_s", r.wall_s},
                                   {"step_stage_ms", stage_ms},
                                   {"total_wall_s", wall}};
    write_file_atomically((fs::path(out) / "accuracy.json").string(), json_text(report));
    return 0;
}

}  // namespace medusa::cli
