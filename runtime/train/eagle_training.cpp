#include "train/eagle_training.h"

#include <cstdio>

#include "llm/eagle_layer_io.h"
#include "model/dequantize.h"
#include "train/gpu_eagle3_trainer.h"
#include "train/gpu_eagle_trainer.h"
#include "train/training_progress.h"

namespace medusa::train {

EagleTarget EagleTarget::from(const ModelFile& file) {
    EagleTarget t;
    t.dim = file.config.dim;
    t.vocab = file.config.vocab_size;
    t.embeddings = input_embeddings(file);
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

template <class Trainer>
EagleObjectiveBase<Trainer>::EagleObjectiveBase(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                                                const DistillData& data, const LlamaConfig& config,
                                                const EagleSchedule& o)
    : ctx_(ctx), init_(init), target_(target), data_(data), config_(config),
      seq_len_(o.seq_len > 0 ? o.seq_len : longest_sequence(data)), seqs_(size_t(o.batch)), start_(init) {
    if (data.num_sequences() < 1) throw std::invalid_argument("no training sequences");
    opt_.beta1 = o.beta1;
    opt_.beta2 = o.beta2;
    opt_.weight_decay = o.weight_decay;
    opt_.clip = o.clip;
}

template <class Trainer>
EagleObjectiveBase<Trainer>::~EagleObjectiveBase() = default;

template <class Trainer>
int EagleObjectiveBase<Trainer>::start(const ResumeFrom& from) {
    const auto resumed = find_resume_point(from.dir, !from.dir.empty(), *from.identity, from.log);
    if (resumed) {
        start_ = load_eagle_layer(from.dir, config_);
        start_.source = init_.source;
    }
    trainer_ = make_trainer(start_);
    if (!resumed) return 0;
    trainer_->set_flat(2, resumed->m), trainer_->set_flat(3, resumed->v);
    return resumed->step;
}

template <class Trainer>
void EagleObjectiveBase<Trainer>::draw_sequences(std::mt19937_64& rng) {
    for (int& s : seqs_) s = int(rng() % uint64_t(data_.num_sequences()));
}

template <class Trainer>
void EagleObjectiveBase<Trainer>::save(const std::string& dir, const CheckpointStamp& stamp) const {
    save_eagle_layer(trainer_->layer(), dir, target_.path);
    save_optimizer_checkpoint(dir, {trainer_->flat(2), trainer_->flat(3), stamp.step}, stamp.seed, *stamp.identity);
}

template <class Trainer>
EagleTrainResult EagleObjectiveBase<Trainer>::result(const RunSummary& run) const {
    EagleTrainResult res;
    res.steps_done = run.steps_done;
    res.wall_s = run.wall_s;
    res.positions_per_s = run.positions_per_s;
    res.layer = trainer_->layer();
    res.layer.source = init_.source;
    res.stage_times = trainer_->stage_times();
    return res;
}

template class EagleObjectiveBase<GpuEagleTrainer>;
template class EagleObjectiveBase<GpuEagle3Trainer>;

namespace {
LlamaConfig layer_config(const EagleLayer& init) {
    LlamaConfig cfg;
    cfg.dim = init.dim;
    return cfg;
}
}  // namespace

EagleObjective::EagleObjective(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                               const DistillData& data, const EagleTrainOptions& o)
    : EagleObjectiveBase(ctx, init, target, data, layer_config(init), o), o_(o) {}

EagleObjective::~EagleObjective() = default;

std::unique_ptr<GpuEagleTrainer> EagleObjective::make_trainer(const EagleLayer& start) {
    return std::make_unique<GpuEagleTrainer>(ctx_, start, target_.lm_head, target_.vocab, o_.batch, seq_len_, o_.loss);
}

size_t EagleObjective::step(int step, float lr, std::mt19937_64& rng) {
    draw_sequences(rng);
    const EagleBatch batch = make_eagle_batch(data_, target_, seqs_, seq_len_, o_.noise, rng);  // noise from (seed, step) too
    opt_.lr = lr;
    const EagleBatchStats s = trainer_->step(batch, opt_, step);
    feature_ += s.feature_loss, token_ += s.token_loss, top1_ += double(s.top1) / std::max(1, s.valid);
    norm_ += s.grad_norm;
    return size_t(s.valid);
}

std::string EagleObjective::progress(int steps) {
    const std::string line = "loss " + fmt("%.4f", feature_ / steps) + " + " + fmt("%g", o_.loss.token) + " x " +
                             fmt("%.3f", token_ / steps) + "  top1 " + fmt("%.3f", top1_ / steps) + "  lr " +
                             fmt("%.2e", opt_.lr) + "  |g| " + fmt("%.3f", norm_ / steps);
    feature_ = token_ = top1_ = norm_ = 0;
    return line;
}

EagleTrainResult train_eagle(gpu::Context& ctx, const EagleLayer& init, const EagleTarget& target,
                             const DistillData& data, const EagleTrainOptions& o, const LogFn& log) {
    EagleObjective objective(ctx, init, target, data, o);
    return objective.result(TrainingRun(o, log).run(objective));
}

}  // namespace medusa::train
