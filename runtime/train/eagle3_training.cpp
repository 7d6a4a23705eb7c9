#include "train/eagle3_training.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "llm/eagle_layer_io.h"
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

Eagle3Objective::Eagle3Objective(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                                 const LlamaConfig& target_config, const DistillData& data,
                                 const Eagle3TrainOptions& o)
    : EagleObjectiveBase(ctx, init, target, data, target_config, o), o_(o),
      hits_(size_t(o.ttt_steps), 0.0), rows_(size_t(o.ttt_steps), 0.0) {
    if (o.ttt_steps < 1) throw std::invalid_argument("training-time test needs at least one step");
    top_ = target_top_tokens(data, target);
}

Eagle3Objective::~Eagle3Objective() = default;

std::unique_ptr<GpuEagle3Trainer> Eagle3Objective::make_trainer(const EagleLayer& start) {
    return std::make_unique<GpuEagle3Trainer>(ctx_, start, draft_target_head(target_, start), o_.batch, seq_len_,
                                              o_.ttt_steps);
}

size_t Eagle3Objective::step(int step, float lr, std::mt19937_64& rng) {
    draw_sequences(rng);
    const Eagle3Batch batch = make_eagle3_batch(data_, target_, start_, top_, seqs_, seq_len_, o_.ttt_steps, o_.decay);
    opt_.lr = lr;
    const Eagle3BatchStats s = trainer_->step(batch, opt_, step);
    loss_ += s.weighted_loss, norm_ += s.grad_norm;
    for (size_t k = 0; k < hits_.size(); ++k) hits_[k] += s.top1[k], rows_[k] += s.rows[k];
    return size_t(s.rows[0]);
}

std::string Eagle3Objective::progress(int steps) {
    std::string acc;
    for (size_t k = 0; k < hits_.size(); ++k) {
        if (k) acc += ' ';
        acc += fmt("%.2f", hits_[k] / std::max(rows_[k], 1.0));
    }
    const std::string line = "loss " + fmt("%.4f", loss_ / steps) + "  top1 per step " + acc + "  lr " +
                             fmt("%.2e", opt_.lr) + "  |g| " + fmt("%.3f", norm_ / steps);
    loss_ = norm_ = 0;
    std::fill(hits_.begin(), hits_.end(), 0.0), std::fill(rows_.begin(), rows_.end(), 0.0);
    return line;
}

EagleTrainResult train_eagle3(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                               const LlamaConfig& target_config, const DistillData& data, const Eagle3TrainOptions& o,
                               const LogFn& log) {
    Eagle3Objective objective(ctx, init, target, target_config, data, o);
    return objective.result(TrainingRun(o, log).run(objective));
}

}  // namespace medusa::train
