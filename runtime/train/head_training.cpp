#include "train/head_training.h"

#include <cmath>
#include <cstdio>
#include <random>

#include "llm/medusa_heads_io.h"
#include "train/gpu_head_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

namespace {

std::vector<int> sequence_of(const DistillData& d) {
    std::vector<int> s(d.tokens.size());
    for (int i = 0; i < d.num_sequences(); ++i)
        for (int p = d.seq_start[i]; p < d.seq_start[i + 1]; ++p) s[p] = i;
    return s;
}

// Positions with a target for head 0 (the others are masked where their target runs out).
std::vector<size_t> trainable_positions(const DistillData& d) {
    std::vector<size_t> out;
    for (int i = 0; i < d.num_sequences(); ++i)
        for (int p = d.seq_start[i]; p + 2 < d.seq_start[i + 1]; ++p) out.push_back(size_t(p));
    return out;
}

void gather(const DistillData& d, const std::vector<int>& seq_of, const std::vector<size_t>& pos, int K,
            std::vector<float>& h, std::vector<int>& targets) {
    h.resize(pos.size() * d.dim);
    targets.resize(pos.size() * K);
    for (size_t r = 0; r < pos.size(); ++r) {
        std::copy_n(d.hidden.begin() + pos[r] * d.dim, d.dim, h.begin() + r * d.dim);
        for (int k = 0; k < K; ++k) targets[k * pos.size() + r] = head_target(d, seq_of, pos[r], k);
    }
}

}  // namespace

int head_target(const DistillData& d, const std::vector<int>& seq_of, size_t p, int k) {
    const size_t t = p + k + 2;
    return t < size_t(d.seq_start[seq_of[p] + 1]) ? d.tokens[t] : -1;
}

HeadAccuracy evaluate_heads(gpu::Context& ctx, const MedusaHeads& heads, const DistillData& data, int batch) {
    GpuHeadTrainer trainer(ctx, heads, batch);
    const auto seq_of = sequence_of(data);
    const auto pos = trainable_positions(data);
    const int K = heads.count();
    HeadAccuracy a;
    a.loss.assign(K, 0);
    a.top1.assign(K, 0);
    a.top5.assign(K, 0);
    a.rank_share.assign(K, std::vector<double>(10, 0));
    std::vector<int> valid(K, 0);
    std::vector<float> h;
    std::vector<int> targets;
    for (size_t at = 0; at < pos.size(); at += batch) {
        std::vector<size_t> chunk(pos.begin() + at, pos.begin() + std::min(pos.size(), at + batch));
        gather(data, seq_of, chunk, K, h, targets);
        const BatchStats s = trainer.evaluate(h, targets);
        for (int k = 0; k < K; ++k) {
            a.loss[k] += s.loss[k] * s.valid[k];
            a.top1[k] += s.top1[k];
            a.top5[k] += s.top5[k];
            valid[k] += s.valid[k];
            for (int r : s.ranks[k])
                if (r >= 0 && r < 10) a.rank_share[k][r] += 1;
        }
    }
    for (int k = 0; k < K; ++k) {
        const double n = std::max(1, valid[k]);
        a.loss[k] /= n, a.top1[k] /= n, a.top5[k] /= n;
        for (double& x : a.rank_share[k]) x /= n;
    }
    a.positions = pos.size();
    return a;
}

HeadsObjective::HeadsObjective(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data,
                               const TrainOptions& o)
    : ctx_(ctx), init_(init), data_(data), seq_of_(sequence_of(data)), pos_(trainable_positions(data)),
      chunk_(size_t(o.batch)), loss_(size_t(init.count()), 0.0), top1_(size_t(init.count()), 0.0) {
    if (pos_.empty()) throw std::invalid_argument("no training positions: the generated sequences are too short");
    opt_.weight_decay = o.weight_decay;
    opt_.clip = o.clip;
}

HeadsObjective::~HeadsObjective() = default;

int HeadsObjective::start(const ResumeFrom& from) {
    const auto resumed = find_resume_point(from.dir, !from.dir.empty(), *from.identity, from.log);
    MedusaHeads start = init_;
    if (resumed) {
        LlamaConfig cfg;
        cfg.dim = init_.dim;
        cfg.vocab_size = init_.vocab;
        start = load_medusa_heads(from.dir, cfg);
        start.source = init_.source;
    }
    trainer_ = std::make_unique<GpuHeadTrainer>(ctx_, start, int(chunk_.size()));
    if (!resumed) return 0;
    trainer_->set_flat(2, resumed->m), trainer_->set_flat(3, resumed->v);
    return resumed->step;
}

size_t HeadsObjective::step(int step, float lr, std::mt19937_64& rng) {
    const int K = init_.count();
    for (auto& c : chunk_) c = pos_[rng() % pos_.size()];
    gather(data_, seq_of_, chunk_, K, h_, targets_);
    opt_.lr = lr;
    const BatchStats s = trainer_->step(h_, targets_, opt_, step);
    for (int k = 0; k < K; ++k) loss_[k] += s.loss[k], top1_[k] += double(s.top1[k]) / std::max(1, s.valid[k]);
    norm_ += s.grad_norm;
    return chunk_.size();
}

std::string HeadsObjective::progress(int steps) {
    std::string line = "loss";
    for (double l : loss_) line += fmt(" %.3f", l / steps);
    line += "  top1";
    for (double t : top1_) line += fmt(" %.3f", t / steps);
    line += "  lr" + fmt(" %.2e", opt_.lr) + "  |g|" + fmt(" %.3f", norm_ / steps);
    std::fill(loss_.begin(), loss_.end(), 0), std::fill(top1_.begin(), top1_.end(), 0), norm_ = 0;
    return line;
}

void HeadsObjective::save(const std::string& dir, const CheckpointStamp& stamp) const {
    save_medusa_heads(trainer_->heads(), dir);
    save_optimizer_checkpoint(dir, {trainer_->flat(2), trainer_->flat(3), stamp.step}, stamp.seed, *stamp.identity);
}

MedusaHeads HeadsObjective::heads() const {
    MedusaHeads h = trainer_->heads();
    h.source = init_.source;
    return h;
}

TrainResult train_heads(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data, const TrainOptions& o,
                        const LogFn& log) {
    HeadsObjective objective(ctx, init, data, o);
    const RunSummary run = TrainingRun(o, log).run(objective);
    return {objective.heads(), run.steps_done, run.wall_s, run.positions_per_s};
}

}  // namespace medusa::train
