#include "train/eagle3_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "llm/eagle_layer_io.h"
#include "train/checkpoint_folder.h"
#include "train/gpu_eagle3_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

DraftVocabulary choose_draft_vocabulary(const DistillData& data, int vocab, int size) {
    if (vocab < 1 || size < 0 || size > vocab) throw std::invalid_argument("a draft vocabulary of 0 to vocab tokens");
    std::vector<int64_t> count(size_t(vocab), 0);
    int64_t total = 0;
    for (int s = 0; s < data.num_sequences(); ++s)
        for (int p = data.seq_start[s] + 1; p < data.seq_start[s + 1]; ++p) {  // what follows BOS
            const int t = data.tokens[size_t(p)];
            if (t >= 0 && t < vocab) ++count[size_t(t)], ++total;
        }
    std::vector<int> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count[size_t(a)] > count[size_t(b)]; });
    int n = size;
    if (n == 0) {  // the fewest covering 99% of the text
        int64_t covered = 0;
        n = 0;
        while (n < vocab && n < 32000 && (total == 0 || double(covered) < 0.99 * double(total)))
            covered += count[size_t(order[size_t(n++)])];
        n = std::max(n, 1);
    }
    DraftVocabulary d;
    d.tokens.assign(order.begin(), order.begin() + n);
    std::sort(d.tokens.begin(), d.tokens.end());
    int64_t covered = 0;
    for (int t : d.tokens) covered += count[size_t(t)];
    d.coverage = total ? double(covered) / double(total) : 0.0;
    return d;
}

std::vector<int> target_top_tokens(const DistillData& data, const EagleTarget& target) {
    const size_t d = target.dim, V = target.vocab;
    std::vector<int> top(data.num_tokens());
    for (size_t p = 0; p < top.size(); ++p) {
        const float* h = &data.hidden[p * d];
        float best = -INFINITY;
        for (size_t v = 0; v < V; ++v) {
            const float* w = &target.lm_head[v * d];
            float s = 0;
            for (size_t i = 0; i < d; ++i) s += w[i] * h[i];
            if (s > best) best = s, top[p] = int(v);
        }
    }
    return top;
}

std::vector<float> draft_target_head(const EagleTarget& target, const EagleLayer& layer) {
    const size_t d = target.dim;
    std::vector<float> head;
    head.reserve(size_t(layer.draft_vocab()) * d);
    for (int t : layer.draft_to_target)
        head.insert(head.end(), target.lm_head.begin() + size_t(t) * d, target.lm_head.begin() + size_t(t + 1) * d);
    return head;
}

Eagle3Batch make_eagle3_batch(const DistillData& data, const EagleTarget& target, const EagleLayer& layer,
                              const std::vector<int>& top, const std::vector<int>& seqs, int seq_len, int steps,
                              float decay) {
    const size_t d = target.dim, F = layer.feature_dim();
    if (data.feature_dim != int(F)) throw std::invalid_argument("training text without the layer's fused features");
    std::vector<uint8_t> drafts(size_t(target.vocab), 0);
    for (int t : layer.draft_to_target) drafts[size_t(t)] = 1;
    Eagle3Batch b;
    b.seq_len = seq_len, b.steps = steps;
    b.rows = int(seqs.size()) * seq_len;
    const size_t R = b.rows;
    b.features.assign(R * F, 0.0f);
    b.embeddings.assign(size_t(steps) * R * d, 0.0f);
    b.target_hidden.assign(size_t(steps) * R * d, 0.0f);
    b.positions.assign(size_t(steps) * R, 0);
    b.row_weight.assign(size_t(steps) * R, 0.0f);
    int first_step_rows = 0;
    for (size_t s = 0; s < seqs.size(); ++s) {
        const int start = seqs[s] < 0 ? 0 : data.seq_start[seqs[s]];
        const int len = seqs[s] < 0 ? 0 : data.seq_start[seqs[s] + 1] - start;
        for (int i = 0; i < seq_len; ++i) {
            const size_t r = s * seq_len + i;
            if (i < len) std::copy_n(&data.features[(size_t(start) + i) * F], F, &b.features[r * F]);
            first_step_rows += i + 1 < len;
            for (int k = 0; k < steps; ++k) {
                const size_t kr = size_t(k) * R + r;
                b.positions[kr] = i + k;
                const int at = i + 1 + k;  // t_{i+1+k}, and the target's state after it
                if (at >= len) continue;
                const size_t p = size_t(start) + at;
                std::copy_n(&target.embeddings[size_t(data.tokens[p]) * d], d, &b.embeddings[kr * d]);
                std::copy_n(&data.hidden[p * d], d, &b.target_hidden[kr * d]);
                if (drafts[size_t(top[p])]) b.row_weight[kr] = std::pow(decay, float(k));
            }
        }
    }
    for (float& w : b.row_weight) w /= float(std::max(first_step_rows, 1));
    return b;
}

Eagle3Evaluation evaluate_eagle3(gpu::Context& ctx, const EagleLayer& layer, const EagleTarget& target,
                                 const DistillData& data, const std::vector<int>& top, int steps,
                                 int sequences_per_batch) {
    const int seq_len = longest_sequence(data);
    GpuEagle3Trainer trainer(ctx, layer, draft_target_head(target, layer), sequences_per_batch, seq_len, steps);
    Eagle3Evaluation e;
    e.top1.assign(size_t(steps), 0.0), e.loss.assign(size_t(steps), 0.0), e.rows.assign(size_t(steps), 0);
    for (int s0 = 0; s0 < data.num_sequences(); s0 += sequences_per_batch) {
        std::vector<int> seqs;
        for (int s = s0; s < s0 + sequences_per_batch; ++s) seqs.push_back(s < data.num_sequences() ? s : -1);
        const Eagle3BatchStats st =
            trainer.evaluate(make_eagle3_batch(data, target, layer, top, seqs, seq_len, steps, 1.0f));
        for (size_t k = 0; k < size_t(steps); ++k) {
            e.top1[k] += st.top1[k];
            e.loss[k] += st.loss[k] * st.rows[k];
            e.rows[k] += st.rows[k];
        }
    }
    for (size_t k = 0; k < size_t(steps); ++k) {
        e.top1[k] /= std::max(e.rows[k], 1);
        e.loss[k] /= std::max(e.rows[k], 1);
    }
    return e;
}

EagleTrainResult train_eagle3(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                               const LlamaConfig& target_config, const DistillData& data, const Eagle3TrainOptions& o,
                               const LogFn& log) {
    if (data.num_sequences() < 1) throw std::invalid_argument("no training sequences");
    const int seq_len = o.seq_len > 0 ? o.seq_len : longest_sequence(data);
    if (o.ttt_steps < 1) throw std::invalid_argument("training-time test needs at least one step");
    EagleLayer start = init;
    const auto resumed = find_resume_point(o.checkpoint_dir, o.resume, o.identity, log);
    if (resumed) {
        start = load_eagle_layer(o.checkpoint_dir, target_config);
        start.source = init.source;
    }
    const std::vector<int> top = target_top_tokens(data, target);
    GpuEagle3Trainer trainer(ctx, start, draft_target_head(target, start), o.batch, seq_len, o.ttt_steps);
    if (resumed) trainer.set_flat(2, resumed->m), trainer.set_flat(3, resumed->v);
    const int first_step = resumed ? resumed->step + 1 : 1;
    AdamW opt = eagle_adamw(o, o.beta1, o.beta2);
    const size_t K = size_t(o.ttt_steps);
    std::vector<double> hits(K, 0), rows(K, 0);
    double loss = 0, norm = 0;
    size_t positions = 0, since_positions = 0;
    int since_log = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto tlog = t0;
    int steps_done = 0;
    std::vector<int> seqs(size_t(o.batch));
    for (int step = first_step; step <= o.steps; ++step) {
        std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + uint64_t(step));  // the batch depends on (seed, step) only
        for (int& s : seqs) s = int(rng() % uint64_t(data.num_sequences()));
        const Eagle3Batch batch = make_eagle3_batch(data, target, start, top, seqs, seq_len, o.ttt_steps, o.decay);
        opt.lr = learning_rate(o, step);
        const Eagle3BatchStats s = trainer.step(batch, opt, step);
        loss += s.weighted_loss, norm += s.grad_norm;
        for (size_t k = 0; k < K; ++k) hits[k] += s.top1[k], rows[k] += s.rows[k];
        positions += size_t(s.rows[0]), since_positions += size_t(s.rows[0]);
        ++since_log;
        ++steps_done;
        if (log && (step % o.log_every == 0 || step == o.steps)) {
            const auto now = std::chrono::steady_clock::now();
            const double dt = std::chrono::duration<double>(now - tlog).count();
            std::string acc;
            for (size_t k = 0; k < K; ++k) {
                if (k) acc += ' ';
                acc += fmt("%.2f", hits[k] / std::max(rows[k], 1.0));
            }
            log("step " + std::to_string(step) + "/" + std::to_string(o.steps) + "  loss " + fmt("%.4f", loss / since_log) +
                "  top1 per step " + acc + "  lr " + fmt("%.2e", opt.lr) + "  |g| " + fmt("%.3f", norm / since_log) +
                "  " + fmt("%.0f", since_positions / std::max(dt, 1e-9)) + " positions/s");
            loss = norm = 0;
            std::fill(hits.begin(), hits.end(), 0.0), std::fill(rows.begin(), rows.end(), 0.0);
            since_log = 0;
            since_positions = 0;
            tlog = now;
        }
        const CheckpointAfter c = checkpoint_after(o, step);
        if (c.save) save_eagle_checkpoint(o, trainer, step, target.path);
        if (c.stop) break;
    }
    return eagle_result(trainer, init.source, steps_done, positions, t0);
}

}  // namespace medusa::train
