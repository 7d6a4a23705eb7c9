// `medusa train-heads --joint` (Medusa-2): heads trained alone first (Medusa-1: --init-heads DIR,
// or --warmup-steps of it here), then LoRA adapters on every linear of the backbone trained with
// the heads, the backbone held to its own distribution by KL(p_original || p_tuned). Writes the
// merged model (a llama2.c fp32 checkpoint for a plain Llama, a GGUF file of the model's family
// with the original's vocabulary otherwise) and the heads in Medusa's layout with a config.json
// naming Medusa-2 and the original model. The output is the tuned model's, not the base's.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "interrupt.h"
#include "llm/context_length.h"
#include "llm/medusa_heads_io.h"
#include "model/atomic_file.h"
#include "model/json_file.h"
#include "train/backbone_weights.h"
#include "train/checkpoint_identity.h"
#include "train/joint_training.h"
#include "train/training_progress.h"
#include "training_report.h"
#include "training_setup.h"

namespace medusa::cli {

namespace fs = std::filesystem;
using namespace medusa::train;

namespace {

// The joint run's options from the flags; a --resume checked against its checkpoint before the GPU
// and the training text.
JointOptions joint_options(const Args& args, const std::string& out, const ModelFile& file, int K) {
    JointOptions jo;
    jo.schedule.lr = 3e-3f;  // the heads'; the backbone's is 30 times lower (JointOptions)
    apply_training_flags(args, out, 1000, jo.schedule);
    jo.backbone_lr = args.number("--backbone-lr", jo.backbone_lr);
    jo.lambda = args.number("--lambda", jo.lambda);
    jo.lora.rank = args.integer("--lora-rank", jo.lora.rank);
    jo.lora.alpha = args.number("--lora-alpha", float(2 * jo.lora.rank));
    jo.seq_len = args.integer("--seq-len", std::min(jo.seq_len, file.config.seq_len));
    jo.sequences = args.integer("--batch-seqs", jo.sequences);
    if (jo.lora.rank < 1 || jo.seq_len < 4 || jo.sequences < 1 || jo.seq_len > file.config.seq_len)
        throw UsageError("--lora-rank, --batch-seqs must be positive and --seq-len 4 to the model's context");
    jo.schedule.identity = checkpoint_identity(file, std::to_string(K) + " Medusa heads of " +
                                                         std::to_string(args.integer("--layers", 1)) +
                                                         " blocks and LoRA rank " + std::to_string(jo.lora.rank));
    if (jo.schedule.resume)  // before the GPU and the training text
        check_resumable((fs::path(jo.schedule.checkpoint_dir) / "heads").string(), jo.schedule.identity);
    return jo;
}

// Phase 1, Medusa-1: the heads from --init-heads, or trained alone on the frozen model (--warmup-steps)
// and saved in out/medusa1. Empty when interrupted (what to run next is said).
std::optional<MedusaHeads> medusa1_heads(const Args& args, gpu::Context& gpu, const ModelFile& file,
                                         const DistilledText& text, const JointOptions& jo, const std::string& out,
                                         int K) {
    if (args.has("--init-heads")) {
        MedusaHeads heads = load_medusa_heads(args.str("--init-heads"), file.config);
        std::fprintf(stderr, "Medusa-1 heads from %s\n", args.str("--init-heads").c_str());
        return heads;
    }
    TrainOptions w = jo.schedule;
    w.lr = 3e-3f;
    w.steps = args.integer("--warmup-steps", 1000);
    w.batch = 256;
    w.checkpoint_dir = (fs::path(out) / "medusa1" / "checkpoint").string();
    w.checkpoint_every = std::max(50, w.steps / 10);
    w.log_every = std::max(10, w.steps / 20);
    MedusaHeads init = MedusaHeads::init_from_model(file, K, args.integer("--layers", 1));
    init.source = file.path;
    std::fprintf(stderr, "phase 1 (Medusa-1): %d steps of the heads alone\n", w.steps);
    MedusaHeads heads = train_heads(gpu, init, text.train, w, log_to_stderr).heads;
    if (interrupt_requested()) {
        report_training_interrupted(w.checkpoint_dir);
        return std::nullopt;
    }
    save_medusa_heads(heads, (fs::path(out) / "medusa1").string());
    return heads;
}

// The merged model as out/model.bin (llama2.c fp32) or out/model.gguf and the tuned heads in
// out/heads, their config.json naming Medusa-2 and the original model.
struct JointOutputs {
    std::string model_path, heads_dir;
};

JointOutputs save_joint(const BackboneWeights& base, const ModelFile& file, const TunedVocabulary& vocab,
                        const JointResult& r, const JointOptions& jo, const std::string& out) {
    const std::string model_path = write_tuned_model(merge_lora(base, r.lora, jo.lora), file, vocab, out);
    // GGUF and HF folders carry their vocabulary; llama2.c files do not.
    if (!is_llama2c(file.format) && fs::path(model_path).extension() == ".bin")
        std::fprintf(stderr, "note: %s is a llama2.c fp32 checkpoint without %s's vocabulary: give it --tokenizer\n",
                     model_path.c_str(), file.path.c_str());
    const std::string heads_dir = (fs::path(out) / "heads").string();
    MedusaHeads tuned = r.heads;
    tuned.source = model_path;
    save_medusa_heads(tuned, heads_dir);
    nlohmann::json config = read_json_file((fs::path(heads_dir) / "config.json").string());
    config["medusa_version"] = 2;
    config["training"] = "Medusa-2: heads trained with LoRA on the backbone (self-distillation, KL to the original)";
    config["original_model"] = file.path;
    config["lora_rank"] = jo.lora.rank;
    config["lora_alpha"] = jo.lora.alpha;
    write_file_atomically((fs::path(heads_dir) / "config.json").string(), json_text(config));
    return {model_path, heads_dir};
}

// The held-out comparison and the speed on stdout, and the same in out/medusa2_report.json.
void report_joint(const ModelFile& file, const TrainingDevice& device, const JointOptions& jo,
                  const JointReport& medusa1, const JointResult& r, const JointOutputs& saved, const std::string& out,
                  int K) {
    const JointReport& h = r.heldout;
    std::printf("held-out (%zu tokens): KL(original || tuned) %.4f nats/token, top token agrees %.3f, perplexity "
                "%.3f -> %.3f\nhead  top1 Medusa-1 (original)  top1 Medusa-2 (tuned)\n",
                h.tokens, h.kl, h.agree, h.ppl_base, h.ppl_tuned);
    for (int k = 0; k < K; ++k) std::printf("%4d  %24.3f  %21.3f\n", k + 1, medusa1.head_top1[k], h.head_top1[k]);
    std::printf("GPU time per joint step:");
    for (const auto& st : r.stage_times) std::printf("  %s %.1f ms", st.stage.c_str(), st.ms);
    std::printf("\n");
    std::printf("joint training: %d steps, %.0f tokens/s, %.1f s; %.1f s in all\ntuned model %s (its output is the "
                "tuned model's, not the original's), heads in %s\n",
                r.steps_done, r.tokens_per_s, r.wall_s, device.seconds(), saved.model_path.c_str(),
                saved.heads_dir.c_str());
    TrainingReport report(file, device, jo.schedule.steps);
    report.add({{"tuned_model", saved.model_path},
                {"lora_rank", jo.lora.rank},
                {"lora_alpha", jo.lora.alpha},
                {"lambda", jo.lambda},
                {"lr_heads", jo.schedule.lr},
                {"lr_backbone", jo.backbone_lr},
                {"heldout_tokens", h.tokens},
                {"kl_nats_per_token", h.kl},
                {"top_token_agreement", h.agree},
                {"perplexity_original", h.ppl_base},
                {"perplexity_tuned", h.ppl_tuned},
                {"medusa1_top1", medusa1.head_top1},
                {"medusa2_top1", h.head_top1},
                {"medusa2_head_loss", h.head_loss},
                {"medusa1_head_loss", medusa1.head_loss},
                {"train_tokens_per_s", r.tokens_per_s},
                {"train_wall_s", r.wall_s}});
    report.write(out, "medusa2_report.json");
}

}  // namespace

int run_train_joint(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("train-heads --joint"));
    const InterruptScope interrupt;
    const TrainingStart start = open_training(args);
    const ModelFile& file = start.file;
    const int K = heads_to_train(args);
    const JointOptions jo = joint_options(args, start.out, file, K);
    // LongRoPE's factors as the model that writes the training text picks them (TrainingDevice).
    const BackboneWeights base = BackboneWeights::from_model(file, choose_context(0, file.config.seq_len));
    const TunedVocabulary vocab{vocabulary_gguf(file, args.str("--tokenizer")), &start.tok};
    try {
        check_tuned_model_writable(base, vocab);  // before minutes of training, not after them
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    TrainingDevice device(args, start);
    const DistilledText text = distill_text(args, device.model, file, start.tok, start.out, jo.schedule.seed);

    std::optional<MedusaHeads> heads = medusa1_heads(args, *device.gpu, file, text, jo, start.out, K);
    if (!heads) return kInterruptedExit;
    heads->copy_shared_classifier(file);
    if (heads->count() != K) throw UsageError("--init-heads holds " + std::to_string(heads->count()) + " heads, not --heads " + std::to_string(K));
    const JointReport medusa1 = evaluate_original(*device.gpu, base, *heads, text.held, jo);

    // Phase 2, Medusa-2: adapters and heads together.
    std::fprintf(stderr, "phase 2 (Medusa-2): %d joint steps, LoRA rank %d alpha %g, lambda %g, lr heads %g backbone %g\n",
                 jo.schedule.steps, jo.lora.rank, jo.lora.alpha, jo.lambda, jo.schedule.lr, jo.backbone_lr);
    const JointResult r = train_joint(*device.gpu, base, *heads, text.train, text.held, jo, log_to_stderr);
    if (interrupt_requested()) return report_training_interrupted(jo.schedule.checkpoint_dir);

    const JointOutputs saved = save_joint(base, file, vocab, r, jo, start.out);
    report_joint(file, device, jo, medusa1, r, saved, start.out, K);
    return 0;
}

}  // namespace medusa::cli
