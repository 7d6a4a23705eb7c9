#include "train/head_training.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "llm/medusa_heads_io.h"
#include "train/checkpoint_folder.h"
#include "train/gpu_head_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

float learning_rate(const TrainOptions& o, int step) {
    const int warm = std::max(1, int(o.warmup * o.steps));
    if (step <= warm) return o.lr * float(step) / float(warm);
    const double t = double(step - warm) / std::max(1, o.steps - warm);
    const double cosine = 0.5 * (1 + std::cos(M_PI * std::min(1.0, t)));
    return float(o.lr * (o.min_lr_ratio + (1 - o.min_lr_ratio) * cosine));
}

CheckpointAfter checkpoint_after(const TrainOptions& o, int step) {
    CheckpointAfter c;
    c.stop = step == o.stop_at || (o.interrupted && o.interrupted());
    c.save = c.stop || step == o.steps || (o.checkpoint_every > 0 && step % o.checkpoint_every == 0);
    return c;
}

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

TrainResult train_heads(gpu::Context& ctx, const MedusaHeads& init, const DistillData& data, const TrainOptions& o,
                        const LogFn& log) {
    const int K = init.count();
    MedusaHeads start = init;
    const auto resumed = find_resume_point(o.checkpoint_dir, o.resume, o.identity, log);
    if (resumed) {
        LlamaConfig cfg;
        cfg.dim = init.dim;
        cfg.vocab_size = init.vocab;
        start = load_medusa_heads(o.checkpoint_dir, cfg);
        start.source = init.source;
    }
    GpuHeadTrainer trainer(ctx, start, o.batch);
    if (resumed) trainer.set_flat(2, resumed->m), trainer.set_flat(3, resumed->v);
    const int first_step = resumed ? resumed->step + 1 : 1;
    auto save_checkpoint = [&](int step) {
        if (o.checkpoint_dir.empty()) return;
        commit_checkpoint(o.checkpoint_dir, [&](const std::string& dir) {
            save_medusa_heads(trainer.heads(), dir);
            save_optimizer_checkpoint(dir, {trainer.flat(2), trainer.flat(3), step}, o.seed, o.identity);
        });
    };

    const auto seq_of = sequence_of(data);
    const auto pos = trainable_positions(data);
    if (pos.empty()) throw std::invalid_argument("no training positions: the generated sequences are too short");
    AdamW opt;
    opt.weight_decay = o.weight_decay;
    opt.clip = o.clip;
    std::vector<float> h;
    std::vector<int> targets;
    std::vector<size_t> chunk(o.batch);
    std::vector<double> loss(K, 0), top1(K, 0), norm_sum(1, 0);
    int since_log = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto tlog = t0;
    TrainResult res;
    for (int step = first_step; step <= o.steps; ++step) {
        std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + uint64_t(step));  // the batch depends on (seed, step) only
        for (auto& c : chunk) c = pos[rng() % pos.size()];
        gather(data, seq_of, chunk, K, h, targets);
        opt.lr = learning_rate(o, step);
        const BatchStats s = trainer.step(h, targets, opt, step);
        for (int k = 0; k < K; ++k) loss[k] += s.loss[k], top1[k] += double(s.top1[k]) / std::max(1, s.valid[k]);
        norm_sum[0] += s.grad_norm;
        ++since_log;
        ++res.steps_done;
        if (log && (step % o.log_every == 0 || step == o.steps)) {
            const auto now = std::chrono::steady_clock::now();
            const double dt = std::chrono::duration<double>(now - tlog).count();
            std::string line = "step " + std::to_string(step) + "/" + std::to_string(o.steps) + "  loss";
            for (int k = 0; k < K; ++k) line += fmt(" %.3f", loss[k] / since_log);
            line += "  top1";
            for (int k = 0; k < K; ++k) line += fmt(" %.3f", top1[k] / since_log);
            line += "  lr" + fmt(" %.2e", opt.lr) + "  |g|" + fmt(" %.3f", norm_sum[0] / since_log);
            line += "  " + fmt("%.0f", since_log * double(o.batch) / std::max(dt, 1e-9)) + " tok/s";
            log(line);
            std::fill(loss.begin(), loss.end(), 0), std::fill(top1.begin(), top1.end(), 0), norm_sum[0] = 0;
            since_log = 0;
            tlog = now;
        }
        const CheckpointAfter c = checkpoint_after(o, step);
        if (c.save) save_checkpoint(step);
        if (c.stop) break;
    }
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.positions_per_s = res.steps_done * double(o.batch) / std::max(res.wall_s, 1e-9);
    res.heads = trainer.heads();
    res.heads.source = init.source;
    return res;
}

}  // namespace medusa::train
