#include "train/joint_training.h"

#include <cmath>
#include <filesystem>
#include <random>

#include "llm/medusa_heads_io.h"
#include "llm/softmax.h"
#include "model/dequantize.h"
#include "model/safetensors_file.h"
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

JointObjective::JointObjective(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads,
                               const DistillData& data, const JointOptions& o)
    : ctx_(ctx), base_(base), init_(heads), data_(data), o_(o), backbone_(o.schedule),
      loss_(size_t(heads.count()), 0.0), top1_(size_t(heads.count()), 0.0) {
    backbone_.lr = o.backbone_lr;
    // Sequences long enough to give every head a target.
    for (int s = 0; s < data.num_sequences(); ++s)
        if (data.seq_start[s + 1] - data.seq_start[s] > heads.count() + 2) usable_.push_back(s);
    if (usable_.empty()) throw std::invalid_argument("no training sequences: the generated text is too short");
    lora_opt_.weight_decay = heads_opt_.weight_decay = o.schedule.weight_decay;
    lora_opt_.clip = heads_opt_.clip = o.schedule.clip;
}

JointObjective::~JointObjective() = default;

// A checkpoint is DIR/lora (adapters + their moments) and DIR/heads (heads + their moments).
int JointObjective::start(const ResumeFrom& from) {
    const bool resume = !from.dir.empty();
    const std::string lora_dir = resume ? (fs::path(from.dir) / "lora").string() : "";
    const std::string heads_dir = resume ? (fs::path(from.dir) / "heads").string() : "";
    std::vector<float> lora = init_lora(base_.config, o_.lora, o_.schedule.seed);
    MedusaHeads heads = init_;
    const auto lora_resume = find_resume_point(lora_dir, resume, *from.identity, from.log);
    const auto heads_resume = find_resume_point(heads_dir, resume, *from.identity, {});
    const bool resumed = lora_resume && heads_resume;
    if (resumed) {
        if (!load_lora(lora_dir, lora, o_.lora)) throw FormatError(lora_dir + ": no lora.safetensors to resume from");
        LlamaConfig cfg = base_.config;
        heads = load_medusa_heads(heads_dir, cfg);
        heads.source = init_.source;
    }
    trainer_ = std::make_unique<GpuJointTrainer>(ctx_, base_, o_.lora, lora, heads, o_.sequences, o_.seq_len);
    if (!resumed) return 0;
    trainer_->set_lora_flat(2, lora_resume->m), trainer_->set_lora_flat(3, lora_resume->v);
    trainer_->set_heads_flat(2, heads_resume->m), trainer_->set_heads_flat(3, heads_resume->v);
    return lora_resume->step;
}

size_t JointObjective::step(int step, float lr, std::mt19937_64& rng) {
    const int K = init_.count();
    std::vector<int> seqs(o_.sequences);
    for (int& s : seqs) s = usable_[rng() % usable_.size()];
    const JointBatch b = make_joint_batch(data_, seqs, o_.seq_len, K, o_.lambda);
    heads_opt_.lr = lr;
    lora_opt_.lr = learning_rate(backbone_, step);
    const JointBatchStats s = trainer_->step(b, lora_opt_, heads_opt_, step);
    kl_ += s.kl, lora_norm_ += s.lora_grad_norm;
    for (int k = 0; k < K; ++k)
        loss_[k] += s.head_loss[k], top1_[k] += double(s.head_top1[k]) / std::max(1, s.head_valid[k]);
    return size_t(b.rows());
}

std::string JointObjective::progress(int steps) {
    std::string line = "KL" + fmt(" %.4f", kl_ / steps) + "  heads loss";
    for (double l : loss_) line += fmt(" %.3f", l / steps);
    line += "  top1";
    for (double t : top1_) line += fmt(" %.3f", t / steps);
    line += "  lr" + fmt(" %.1e", heads_opt_.lr) + fmt("/%.1e", lora_opt_.lr) + "  |g_lora|" + fmt(" %.3f", lora_norm_ / steps);
    kl_ = lora_norm_ = 0;
    std::fill(loss_.begin(), loss_.end(), 0), std::fill(top1_.begin(), top1_.end(), 0);
    return line;
}

void JointObjective::save(const std::string& dir, const CheckpointStamp& stamp) const {
    const std::string lora_part = (fs::path(dir) / "lora").string(), heads_part = (fs::path(dir) / "heads").string();
    fs::create_directories(lora_part), fs::create_directories(heads_part);
    save_medusa_heads(heads(), heads_part);
    save_lora(lora_part, trainer_->lora_flat(0), o_.lora);
    save_optimizer_checkpoint(heads_part, {trainer_->heads_flat(2), trainer_->heads_flat(3), stamp.step}, stamp.seed,
                              *stamp.identity);
    save_optimizer_checkpoint(lora_part, {trainer_->lora_flat(2), trainer_->lora_flat(3), stamp.step}, stamp.seed,
                              *stamp.identity);
}

MedusaHeads JointObjective::heads() const {
    MedusaHeads h = trainer_->heads();
    h.source = init_.source;
    return h;
}

JointResult train_joint(gpu::Context& ctx, const BackboneWeights& base, const MedusaHeads& heads_init,
                        const DistillData& data, const DistillData& heldout, const JointOptions& o, const LogFn& log) {
    JointObjective objective(ctx, base, heads_init, data, o);
    const RunSummary run = TrainingRun(o.schedule, log).run(objective);
    JointResult res;
    res.steps_done = run.steps_done;
    res.wall_s = run.wall_s;
    res.tokens_per_s = run.positions_per_s;
    GpuJointTrainer& trainer = objective.trainer();
    res.stage_times = trainer.stage_times();
    res.lora = trainer.lora_flat(0);
    res.heads = objective.heads();
    if (heldout.num_sequences() > 0) res.heldout = evaluate_joint(trainer, heldout, o.sequences, o.seq_len, heads_init.count());
    return res;
}

}  // namespace medusa::train
