#include "train/joint_training.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "llm/medusa_heads_io.h"
#include "llm/softmax.h"
#include "model/dequantize.h"
#include "model/safetensors_file.h"
#include "train/checkpoint_folder.h"
#include "train/gpu_joint_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

namespace fs = std::filesystem;

JointBatch make_joint_batch(const DistillData& d, const std::vector<int>& seqs, int seq_len, int K, float lambda) {
    JointBatch b;
    b.sequences = int(seqs.size());
    b.seq_len = seq_len;
    const size_t R = b.rows();
    b.tokens.assign(R, 0), b.positions.assign(R, 0), b.row_weight.assign(R, 0.0f);
    b.head_targets.assign(size_t(K) * R, -1);
    b.head_scale.assign(K, 0.0f);
    int valid = 0;
    std::vector<int> head_valid(K, 0);
    for (size_t s = 0; s < seqs.size(); ++s) {
        const int start = d.seq_start.at(seqs[s]), end = d.seq_start.at(seqs[s] + 1);
        for (int i = 0; i < seq_len; ++i) {
            const size_t row = s * seq_len + i;
            const int p = start + i;
            b.positions[row] = i;
            if (p >= end) continue;  // padding: token 0, no weight, no targets
            b.tokens[row] = d.tokens[p];
            b.row_weight[row] = 1.0f;
            ++valid;
            for (int k = 0; k < K; ++k)
                if (p + k + 2 < end) b.head_targets[size_t(k) * R + row] = d.tokens[p + k + 2], ++head_valid[k];
        }
    }
    for (float& w : b.row_weight) w = w > 0 ? 1.0f / float(valid) : 0.0f;
    for (int k = 0; k < K; ++k) b.head_scale[k] = head_valid[k] ? lambda * head_weight(k) / float(head_valid[k]) : 0.0f;
    return b;
}

JointReport evaluate_joint(GpuJointTrainer& trainer, const DistillData& d, int sequences, int seq_len, int K) {
    JointReport rep;
    rep.head_top1.assign(K, 0), rep.head_loss.assign(K, 0);
    std::vector<int> head_valid(K, 0);
    double nll_base = 0, nll_tuned = 0, kl = 0, agree = 0;
    size_t next_tokens = 0;
    for (int first = 0; first < d.num_sequences(); first += sequences) {
        const int fresh = std::min(sequences, d.num_sequences() - first);  // the rest repeat the last one
        std::vector<int> seqs;
        for (int s = first; s < first + fresh; ++s) seqs.push_back(s);
        while (int(seqs.size()) < sequences) seqs.push_back(seqs.back());
        JointBatch b = make_joint_batch(d, seqs, seq_len, K, 1.0f);
        for (size_t row = size_t(fresh) * seq_len; row < size_t(b.rows()); ++row) {  // repeats count once
            b.row_weight[row] = 0;
            for (int k = 0; k < K; ++k) b.head_targets[size_t(k) * b.rows() + row] = -1;
        }
        const JointBatchStats s = trainer.evaluate(b);
        kl += s.kl * s.rows, agree += s.agree, rep.tokens += s.rows;
        for (int k = 0; k < K; ++k) {
            rep.head_top1[k] += s.head_top1[k];
            rep.head_loss[k] += s.head_loss[k] * s.head_valid[k];
            head_valid[k] += s.head_valid[k];
        }
        // Perplexity of the text's own next tokens under both models.
        const std::vector<float> lt = trainer.logits(false), lb = trainer.logits(true);
        const int V = int(lt.size() / b.rows());
        auto nll = [&](const std::vector<float>& l, size_t row, int target) {
            const std::span<const float> x(&l[row * V], size_t(V));
            return exp_sum(x).log_normalizer() - x[target];
        };
        for (int s2 = 0; s2 < fresh; ++s2) {
            const int start = d.seq_start[seqs[s2]], end = d.seq_start[seqs[s2] + 1];
            for (int i = 0; i < seq_len && start + i + 1 < end; ++i) {
                const size_t row = size_t(s2) * seq_len + i;
                nll_base += nll(lb, row, d.tokens[start + i + 1]);
                nll_tuned += nll(lt, row, d.tokens[start + i + 1]);
                ++next_tokens;
            }
        }
    }
    rep.kl = rep.tokens ? kl / rep.tokens : 0;
    rep.agree = rep.tokens ? agree / rep.tokens : 0;
    rep.ppl_base = std::exp(nll_base / std::max<size_t>(1, next_tokens));
    rep.ppl_tuned = std::exp(nll_tuned / std::max<size_t>(1, next_tokens));
    for (int k = 0; k < K; ++k) {
        rep.head_top1[k] /= std::max(1, head_valid[k]);
        rep.head_loss[k] /= std::max(1, head_valid[k]);
    }
    return rep;
}

JointReport evaluate_original(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads,
                              const DistillData& heldout, const JointOptions& o) {
    GpuJointTrainer t(ctx, base, o.lora, init_lora(base.config, o.lora, 0), heads, o.sequences, o.seq_len);
    return evaluate_joint(t, heldout, o.sequences, o.seq_len, heads.count());
}

void save_lora(const std::string& dir, const std::vector<float>& lora, const LoraConfig& lc) {
    Tensor t;
    t.name = "lora";
    t.shape = {int64_t(lora.size())};
    t.data = reinterpret_cast<const uint8_t*>(lora.data());
    t.nbytes = lora.size() * 4;
    write_safetensors((fs::path(dir) / "lora.safetensors").string(), {t},
                      {{"rank", std::to_string(lc.rank)}, {"alpha", std::to_string(lc.alpha)}});
}

bool load_lora(const std::string& dir, std::vector<float>& lora, const LoraConfig& lc) {
    const std::string path = (fs::path(dir) / "lora.safetensors").string();
    if (!fs::exists(path)) return false;
    const SafetensorsFile f = SafetensorsFile::open(path);
    const auto rank = f.metadata().find("rank");
    if (rank == f.metadata().end() || std::stoi(rank->second) != lc.rank)
        throw FormatError(path + ": adapters of another rank than --lora-rank " + std::to_string(lc.rank));
    lora = dequantize(f.get("lora"));
    return true;
}

JointResult train_joint(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads_init,
                        const DistillData& data, const DistillData& heldout, const JointOptions& o, const LogFn& log) {
    const TrainOptions& sch = o.schedule;
    const int K = heads_init.count();
    // Checkpoints: DIR/lora (adapters + their moments), DIR/heads (heads + their moments).
    const std::string lora_dir = sch.checkpoint_dir.empty() ? "" : (fs::path(sch.checkpoint_dir) / "lora").string();
    const std::string heads_dir = sch.checkpoint_dir.empty() ? "" : (fs::path(sch.checkpoint_dir) / "heads").string();
    std::vector<float> lora = init_lora(base.config, o.lora, sch.seed);
    MedusaHeads heads = heads_init;
    if (sch.resume) committed_checkpoint(sch.checkpoint_dir);  // finish a swap a kill interrupted
    const auto lora_resume = find_resume_point(lora_dir, sch.resume, sch.identity, log);
    const auto heads_resume = find_resume_point(heads_dir, sch.resume, sch.identity, {});
    if (lora_resume && heads_resume) {
        if (!load_lora(lora_dir, lora, o.lora)) throw FormatError(lora_dir + ": no lora.safetensors to resume from");
        LlamaConfig cfg = base.config;
        heads = load_medusa_heads(heads_dir, cfg);
        heads.source = heads_init.source;
    }
    GpuJointTrainer trainer(ctx, base, o.lora, lora, heads, o.sequences, o.seq_len);
    if (lora_resume && heads_resume) {
        trainer.set_lora_flat(2, lora_resume->m), trainer.set_lora_flat(3, lora_resume->v);
        trainer.set_heads_flat(2, heads_resume->m), trainer.set_heads_flat(3, heads_resume->v);
    }
    const int first_step = lora_resume && heads_resume ? lora_resume->step + 1 : 1;
    auto save_checkpoint = [&](int step) {
        if (sch.checkpoint_dir.empty()) return;
        MedusaHeads h = trainer.heads();
        h.source = heads_init.source;
        commit_checkpoint(sch.checkpoint_dir, [&](const std::string& dir) {  // adapters and heads as one unit
            const std::string lora_part = (fs::path(dir) / "lora").string(), heads_part = (fs::path(dir) / "heads").string();
            fs::create_directories(lora_part), fs::create_directories(heads_part);
            save_medusa_heads(h, heads_part);
            save_lora(lora_part, trainer.lora_flat(0), o.lora);
            save_optimizer_checkpoint(heads_part, {trainer.heads_flat(2), trainer.heads_flat(3), step}, sch.seed,
                                      sch.identity);
            save_optimizer_checkpoint(lora_part, {trainer.lora_flat(2), trainer.lora_flat(3), step}, sch.seed,
                                      sch.identity);
        });
    };

    // Sequences long enough to give every head a target.
    std::vector<int> usable;
    for (int s = 0; s < data.num_sequences(); ++s)
        if (data.seq_start[s + 1] - data.seq_start[s] > K + 2) usable.push_back(s);
    if (usable.empty()) throw std::invalid_argument("no training sequences: the generated text is too short");
    AdamW lora_opt, heads_opt;
    lora_opt.weight_decay = heads_opt.weight_decay = sch.weight_decay;
    lora_opt.clip = heads_opt.clip = sch.clip;
    TrainOptions backbone = sch;
    backbone.lr = o.backbone_lr;
    double kl = 0, lora_norm = 0;
    std::vector<double> loss(K, 0), top1(K, 0);
    int since_log = 0;
    JointResult res;
    const auto t0 = std::chrono::steady_clock::now();
    auto tlog = t0;
    for (int step = first_step; step <= sch.steps; ++step) {
        std::mt19937_64 rng(sch.seed * 0x9E3779B97F4A7C15ull + uint64_t(step));  // the batch depends on (seed, step)
        std::vector<int> seqs(o.sequences);
        for (int& s : seqs) s = usable[rng() % usable.size()];
        const JointBatch b = make_joint_batch(data, seqs, o.seq_len, K, o.lambda);
        heads_opt.lr = learning_rate(sch, step);
        lora_opt.lr = learning_rate(backbone, step);
        const JointBatchStats s = trainer.step(b, lora_opt, heads_opt, step);
        kl += s.kl, lora_norm += s.lora_grad_norm;
        for (int k = 0; k < K; ++k) loss[k] += s.head_loss[k], top1[k] += double(s.head_top1[k]) / std::max(1, s.head_valid[k]);
        ++since_log;
        ++res.steps_done;
        if (log && (step % sch.log_every == 0 || step == sch.steps)) {
            const auto now = std::chrono::steady_clock::now();
            const double dt = std::chrono::duration<double>(now - tlog).count();
            std::string line = "step " + std::to_string(step) + "/" + std::to_string(sch.steps) + "  KL" +
                               fmt(" %.4f", kl / since_log) + "  heads loss";
            for (int k = 0; k < K; ++k) line += fmt(" %.3f", loss[k] / since_log);
            line += "  top1";
            for (int k = 0; k < K; ++k) line += fmt(" %.3f", top1[k] / since_log);
            line += "  lr" + fmt(" %.1e", heads_opt.lr) + fmt("/%.1e", lora_opt.lr) + "  |g_lora|" +
                    fmt(" %.3f", lora_norm / since_log);
            line += "  " + fmt("%.0f", since_log * double(b.rows()) / std::max(dt, 1e-9)) + " tok/s";
            log(line);
            kl = lora_norm = 0, since_log = 0;
            std::fill(loss.begin(), loss.end(), 0), std::fill(top1.begin(), top1.end(), 0);
            tlog = now;
        }
        const CheckpointAfter c = checkpoint_after(sch, step);
        if (c.save) save_checkpoint(step);
        if (c.stop) break;
    }
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.tokens_per_s = res.steps_done * double(trainer.rows()) / std::max(res.wall_s, 1e-9);
    res.stage_times = trainer.stage_times();
    res.lora = trainer.lora_flat(0);
    res.heads = trainer.heads();
    res.heads.source = heads_init.source;
    if (heldout.num_sequences() > 0) res.heldout = evaluate_joint(trainer, heldout, o.sequences, o.seq_len, K);
    return res;
}

}  // namespace medusa::train
