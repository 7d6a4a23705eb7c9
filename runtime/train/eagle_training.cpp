#include "train/eagle_training.h"

#include <chrono>
#include <cstdio>

#include "llm/eagle_layer_io.h"
#include "model/dequantize.h"
#include "train/checkpoint_folder.h"
#include "train/gpu_eagle_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

EagleTarget EagleTarget::from(const ModelFile& file) {
    EagleTarget t;
    t.dim = file.config.dim;
    t.vocab = file.config.vocab_size;
    t.embeddings = dequantize(file.get("tok_embeddings"));
    t.lm_head = dequantize(file.classifier());
    t.final_norm = dequantize(file.get("norm"));
    t.path = file.path;
    return t;
}

int longest_sequence(const DistillData& data) {
    int n = 1;
    for (int s = 0; s < data.num_sequences(); ++s) n = std::max(n, data.seq_start[s + 1] - data.seq_start[s]);
    return n;
}

EagleBatch make_eagle_batch(const DistillData& data, const EagleTarget& target, const std::vector<int>& seqs,
                            int seq_len, float noise, std::mt19937_64& rng) {
    const size_t d = target.dim;
    EagleBatch b;
    b.seq_len = seq_len;
    b.rows = int(seqs.size()) * seq_len;
    b.input.assign(size_t(b.rows) * 2 * d, 0.0f);
    b.target.assign(size_t(b.rows) * d, 0.0f);
    b.positions.assign(b.rows, 0);
    b.row_weight.assign(b.rows, 0.0f);
    std::uniform_real_distribution<float> uniform(-0.5f * noise, 0.5f * noise);
    int valid = 0;
    for (size_t s = 0; s < seqs.size(); ++s) {
        const int start = seqs[s] < 0 ? 0 : data.seq_start[seqs[s]];
        const int len = seqs[s] < 0 ? 0 : data.seq_start[seqs[s] + 1] - start;
        for (int i = 0; i < seq_len; ++i) {
            const size_t r = s * seq_len + i;
            b.positions[r] = i;
            if (i + 1 >= len) continue;  // no t_{i+1}: padding
            const size_t p = size_t(start) + i;
            std::copy_n(&target.embeddings[size_t(data.tokens[p + 1]) * d], d, &b.input[r * 2 * d]);
            float* f = &b.input[r * 2 * d + d];
            std::copy_n(&data.hidden[p * d], d, f);
            if (noise > 0)
                for (size_t k = 0; k < d; ++k) f[k] += uniform(rng);
            std::copy_n(&data.hidden[(p + 1) * d], d, &b.target[r * d]);
            b.row_weight[r] = 1.0f;
            ++valid;
        }
    }
    for (float& w : b.row_weight) w /= float(std::max(valid, 1));
    return b;
}

EagleTeacherForced evaluate_eagle_teacher_forced(gpu::Context& ctx, const EagleLayer& layer, const EagleTarget& target,
                                                 const DistillData& data, int sequences_per_batch) {
    const int seq_len = longest_sequence(data);
    GpuEagleTrainer trainer(ctx, layer, target.lm_head, target.vocab, sequences_per_batch, seq_len);
    std::mt19937_64 rng(0);  // no noise is drawn
    EagleTeacherForced r;
    for (int s0 = 0; s0 < data.num_sequences(); s0 += sequences_per_batch) {
        std::vector<int> seqs;
        for (int s = s0; s < s0 + sequences_per_batch; ++s) seqs.push_back(s < data.num_sequences() ? s : -1);
        const EagleBatchStats st = trainer.evaluate(make_eagle_batch(data, target, seqs, seq_len, 0.0f, rng));
        r.feature_loss += st.feature_loss * st.valid;
        r.token_loss += st.token_loss * st.valid;
        r.top1 += st.top1;
        r.positions += st.valid;
    }
    const double n = double(std::max<size_t>(r.positions, 1));
    r.feature_loss /= n, r.token_loss /= n, r.top1 /= n;
    return r;
}

EagleTrainResult train_eagle(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                             const DistillData& data, const EagleTrainOptions& o, const LogFn& log) {
    const int seq_len = o.seq_len > 0 ? o.seq_len : longest_sequence(data);
    if (data.num_sequences() < 1) throw std::invalid_argument("no training sequences");
    EagleLayer start = init;
    const auto resumed = find_resume_point(o.checkpoint_dir, o.resume, o.identity, log);
    if (resumed) {
        LlamaConfig cfg;
        cfg.dim = init.dim;
        start = load_eagle_layer(o.checkpoint_dir, cfg);
        start.source = init.source;
    }
    GpuEagleTrainer trainer(ctx, start, target.lm_head, target.vocab, o.batch, seq_len, o.loss);
    if (resumed) trainer.set_flat(2, resumed->m), trainer.set_flat(3, resumed->v);
    const int first_step = resumed ? resumed->step + 1 : 1;

    AdamW opt = eagle_adamw(o, o.beta1, o.beta2);
    double feature = 0, token = 0, top1 = 0, norm = 0;
    size_t positions = 0, since_positions = 0;
    int since_log = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto tlog = t0;
    int steps_done = 0;
    std::vector<int> seqs(o.batch);
    for (int step = first_step; step <= o.steps; ++step) {
        std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + uint64_t(step));  // batch and noise depend on (seed, step) only
        for (int& s : seqs) s = int(rng() % uint64_t(data.num_sequences()));
        const EagleBatch batch = make_eagle_batch(data, target, seqs, seq_len, o.noise, rng);
        opt.lr = learning_rate(o, step);
        const EagleBatchStats s = trainer.step(batch, opt, step);
        feature += s.feature_loss, token += s.token_loss, top1 += double(s.top1) / std::max(1, s.valid);
        norm += s.grad_norm;
        positions += s.valid, since_positions += s.valid;
        ++since_log;
        ++steps_done;
        if (log && (step % o.log_every == 0 || step == o.steps)) {
            const auto now = std::chrono::steady_clock::now();
            const double dt = std::chrono::duration<double>(now - tlog).count();
            log("step " + std::to_string(step) + "/" + std::to_string(o.steps) + "  loss " +
                fmt("%.4f", feature / since_log) + " + " + fmt("%g", o.loss.token) + " x " + fmt("%.3f", token / since_log) + "  top1 " +
                fmt("%.3f", top1 / since_log) + "  lr " + fmt("%.2e", opt.lr) + "  |g| " + fmt("%.3f", norm / since_log) +
                "  " + fmt("%.0f", since_positions / std::max(dt, 1e-9)) + " positions/s");
            feature = token = top1 = norm = 0;
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

AdamW eagle_adamw(const TrainOptions& o, float beta1, float beta2) {
    AdamW opt;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.weight_decay = o.weight_decay;
    opt.clip = o.clip;
    return opt;
}

}  // namespace medusa::train
