#include "llm/gpu_tree_runner.h"

#include <stdexcept>

#include "layouts/block_params.h"
#include "layouts/medusa_gather_map.h"
#include "llm/gpu_eagle3_runner.h"
#include "llm/gpu_eagle_runner.h"
#include "llm/kernel_params.h"

namespace medusa {

using namespace kernels;

GpuTreeRunner::GpuTreeRunner(GpuModel& model, StageTiming timing) : model_(model), timing_(timing) {
    gpu::Context& ctx = model.context();
    last_hidden_ = std::make_unique<gpu::Buffer>(ctx, size_t(model.config().dim) * 4, gpu::MemoryKind::Device);
    last_hidden_->fill_zero();
    stats_ = std::make_unique<gpu::Buffer>(ctx, MAX_BLOCK_TOKENS * 2 * 4, gpu::MemoryKind::Host);
    probs_ = std::make_unique<gpu::Buffer>(ctx, sizeof(layout::DraftProbs), gpu::MemoryKind::Host);
    select_row_ = std::make_unique<gpu::Kernel>(ctx, gpu::Shader::select_row, 3, sizeof(RowPush));
    stats_width_ = logit_row_width(ctx, model.matmuls().cpu_layouts());
    node_stats_ = logit_rows_kernel(ctx, LogitRows::NodeStats, uint32_t(model.config().vocab_size),
                                    model.logits_buffer(), sizeof(NodeStatsPush), stats_width_);
}

GpuTreeRunner::~GpuTreeRunner() = default;

void GpuTreeRunner::prefill(int base, std::span<const int> tokens) {
    for (size_t start = 0; start < tokens.size(); start += TokenBlock::kMaxTokens) {
        const size_t end = std::min(tokens.size(), start + TokenBlock::kMaxTokens);
        model_.forward(TokenBlock::causal(base + int(start), {tokens.begin() + start, tokens.begin() + end}));
    }
}

gpu::CommandSequence& GpuTreeRunner::sequence(const Shape& shape, const DraftStage* stage) {
    auto& seq = sequences_[shape];
    if (seq) return *seq;
    const auto [T, compact, serial, stats_temperature, timed] = shape;
    seq = std::make_unique<gpu::CommandSequence>(model_.context(), timed);
    seq->begin();
    KvCache& kv = model_.kv_cache();
    if (compact) kv.record_move(*seq);
    if (stage) {
        seq->stage("heads");
        const uint32_t dim = model_.config().dim;
        seq->dispatch_over(*select_row_, {kv.commit(), model_.hidden_states(), *last_hidden_}, RowPush{dim}, dim);
        stages_.at(*stage).record(*seq, *last_hidden_, model_.block_params(), *probs_);
    }
    model_.record_forward(*seq, T);
    if (stats_temperature >= 0) {
        seq->stage("stats");
        record_logit_rows(*seq, *node_stats_, model_.logits_buffer(), *stats_,
                          NodeStatsPush{uint32_t(model_.config().vocab_size), uint32_t(T), stats_temperature},
                          uint32_t(T), stats_width_ > 0);
    }
    seq->end();
    return *seq;
}

void GpuTreeRunner::prepare(int n_tokens, const DraftStage* stage) {
    if (n_tokens < 1 || n_tokens > TokenBlock::kMaxTokens) throw std::invalid_argument("a block of 1 to 128 tokens");
    if (stage) stages_.at(*stage);  // this runner's own
    // The shape a greedy step runs (Verifier::step); sampling's temperature records its own
    // sequence at first use, from these pipelines.
    // With and without the move of the last accepted path, which most steps carry; sampled timing
    // runs both the timed and the untimed sequences, so both are recorded before the first step.
    const std::vector<bool> timings =
        timing_ == StageTiming::Sampled ? std::vector<bool>{false, true} : std::vector<bool>{timing_ == StageTiming::EveryRun};
    for (bool compact : {false, true})
        for (bool timed : timings)
            sequence({n_tokens, compact, stage ? stage->serial() : 0, n_tokens > 1 ? 1.0f : -1.0f, timed}, stage);
}

void GpuTreeRunner::run(const TokenBlock& block, const TreeRunOptions& o) {
    if (o.stage) {
        stages_.at(*o.stage);  // this runner's own
        if (model_.forward_count() != own_forward_)
            throw std::logic_error("a drafting stage needs the hidden states of this runner's last verify pass");
        if (block.size() > o.stage->nodes()) throw std::invalid_argument("a block larger than the stage's tree");
    }
    // This pass carries the move of the path kept last step, if it moved anything.
    const bool compact = model_.kv_cache().take_move();
    // Sampled: a timed run at most every quarter second (a window redraws its times about so often).
    const auto now = std::chrono::steady_clock::now();
    const bool timed = timing_ == StageTiming::EveryRun ||
                       (timing_ == StageTiming::Sampled && now - last_timed_ >= std::chrono::milliseconds(250));
    if (timed) last_timed_ = now;
    last_run_timed_ = timed;
    gpu::CommandSequence& seq = sequence(
        {block.size(), compact, o.stage ? o.stage->serial() : 0, o.stats ? o.temperature : -1.0f, timed}, o.stage);
    seq.wait();
    model_.write_block(block);  // a stage overwrites tokens 1.. on the device
    seq.run();
    ++submits_;
    last_ = &seq;
    block_ = block;
    const auto* p = static_cast<const layout::BlockParams*>(model_.block_params().mapped());
    block_.tokens.assign(p->tokens, p->tokens + block.size());
    tokens_ = block_.tokens;
    model_.finished_forward(block_, seq);
    own_forward_ = model_.forward_count();
    draft_probs_.clear();
    if (o.stage) {
        const auto* probs = static_cast<const float*>(probs_->mapped());
        draft_probs_.assign(probs, probs + block.size());
    }
    stats_read_.clear();
    if (o.stats) {
        const auto* s = static_cast<const float*>(stats_->mapped());
        for (int i = 0; i < block.size(); ++i) stats_read_.push_back({s[2 * i], s[2 * i + 1]});
    }
}

NodeStats GpuTreeRunner::stats(int node) const {
    if (node < 0 || node >= int(stats_read_.size())) throw std::out_of_range("no statistics for that node");
    return stats_read_[node];
}

std::vector<std::pair<std::string, double>> GpuTreeRunner::stage_ms() const {
    std::vector<std::pair<std::string, double>> out;
    if (last_ && last_run_timed_)
        for (const auto& s : last_->stage_times()) out.push_back({s.stage, s.ms});
    return out;
}

void GpuTreeRunner::keep_path(std::span<const int> path) {
    std::vector<int> tokens;
    for (int node : path) {
        if (node < 0 || node >= block_.size()) throw std::out_of_range("an accepted node outside the last block");
        tokens.push_back(block_.tokens[node]);
    }
    model_.kv_cache().keep_path(block_.base, path, tokens);
}

std::unique_ptr<DraftStage> GpuTreeRunner::medusa_stage(const ModelFile& file, const MedusaHeads& heads, int depth,
                                                        int topk, std::span<const int> candidate) {
    auto stage = std::make_unique<GpuMedusaHeads>(model_, file, heads, depth, topk, candidate);
    const int nodes = stage->nodes();
    // Several stages may be alive at once (modes side by side): each keeps its recorded passes
    // until its handle goes, when they go too.
    return stages_.add(std::move(stage), nodes, [this](uint64_t serial) {
        std::erase_if(sequences_, [&](const auto& kv) {
            const bool gone = std::get<2>(kv.first) == serial;
            if (gone && last_ == kv.second.get()) last_ = nullptr;
            return gone;
        });
    });
}

}  // namespace medusa

namespace medusa {

void GpuTreeRunner::capture_layer_inputs(const std::vector<int>& layers) {
    // A change re-records every pass here, which bound the old feature cache.
    if (layers == model_.captured_layers()) return;
    for (auto& [shape, seq] : sequences_) seq->wait();
    sequences_.clear();
    last_ = nullptr;
    model_.capture_layer_inputs(layers);
}

std::unique_ptr<EagleRunner> GpuTreeRunner::eagle_runner(const ModelFile&, const EagleLayer& layer) {
    // The target's feature is the final-norm hidden state (EAGLE-1/2) or the inputs of EAGLE-3's
    // layers; the runner asks for its own before each prompt (another layer may share the target).
    const std::vector<int> captured = layer.eagle3() ? layer.target_layers : std::vector<int>{};
    capture_layer_inputs(captured);
    auto attach = [this, captured] { capture_layer_inputs(captured); };
    if (layer.eagle3()) return std::make_unique<GpuEagle3Runner>(model_, layer, attach);
    return std::make_unique<GpuEagleRunner>(model_, layer, attach);
}

}  // namespace medusa
