#include "decode/medusa_decoder.h"
#include "decode/step_output.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "llm/kernel_params.h"

namespace medusa {

using namespace kernels;

namespace {

// Mirrors shaders/medusa_layout.glsl and shaders/step_params.glsl.
constexpr uint32_t kNone = 0xffffffffu;
constexpr int kTMax = TokenBlock::kMaxTokens;
constexpr int kMaxPath = 8;
constexpr int T_NODES = 0, T_PATHS = 1, T_PATH_LEN = 2, T_TOPK = 3, T_INDEX = 16, T_DEPTH = 16 + kTMax,
              T_PARENT = 16 + 2 * kTMax, T_FIRST_CHILD = 16 + 3 * kTMax, T_NEXT_SIBLING = 16 + 4 * kTMax,
              T_PATH_NODES = 16 + 5 * kTMax;
constexpr int kTreeWords = T_PATH_NODES + kTMax * kMaxPath;
constexpr int S_ROOT = 0, S_SEED = 4, kStateWords = 16;
constexpr int R_ACCEPTED = 0, R_BONUS = 1, R_BASE = 3, R_PATH = 8, R_TOKEN = 16, R_MODEL_P = 16 + kTMax,
              R_HEAD_P = 16 + 2 * kTMax, R_LIMIT = 16 + 3 * kTMax, R_STATUS = 16 + 4 * kTMax,
              kTraceWords = 16 + 5 * kTMax;

struct TopkPush {
    uint32_t vocab, stride, topk;
};
struct NodeStatsPush {
    uint32_t vocab, n_nodes;
    float temperature;
};
struct AcceptPush {
    uint32_t vocab, rule;
    float temperature, eps, delta;
};
struct CommitPush {
    uint32_t n_layers, kv_dim, ctx, dim;
};

// A Tensor view over floats the heads own, for upload_matrix.
Tensor f32_view(const std::vector<float>& v, int rows, int cols) {
    Tensor t;
    t.name = "medusa head";
    t.type = DType::F32;
    t.shape = {rows, cols};
    t.data = reinterpret_cast<const uint8_t*>(v.data());
    t.nbytes = v.size() * 4;
    return t;
}

std::unique_ptr<gpu::Buffer> device_buffer(gpu::Context& ctx, size_t bytes) {
    auto b = std::make_unique<gpu::Buffer>(ctx, bytes, gpu::MemoryKind::Device);
    b->fill_zero();
    return b;
}

}  // namespace

// The K heads a tree uses, stacked so that each of their layers is one dispatch: layer l's W1 of
// every head as one matrix of K*dim rows (and its biases), and the K vocabulary projections.
struct MedusaDecoder::Heads {
    int count = 0;
    std::vector<GpuMatrix> w1;
    std::vector<std::unique_ptr<gpu::Buffer>> b1;
    GpuMatrix w2;                    // empty when every head shares the model's classifier
    bool shares_classifier = false;  // then the classifier runs once over K rows of input
};

MedusaDecoder::MedusaDecoder(GpuModel& model, const ModelFile& file, const MedusaHeads& heads,
                             const TreeBuffers& tree, MedusaOptions options)
    : model_(model), tree_(tree), options_(options) {
    auto& ctx = model.context();
    const LlamaConfig& cfg = model.config();
    n_nodes_ = tree.num_nodes;
    if (n_nodes_ < 1 || n_nodes_ > kTMax) throw std::invalid_argument("trees must have 1 to 128 nodes");
    const int depth = tree.max_depth;  // deepest node, the root at 0
    if (depth >= kMaxPath) throw std::invalid_argument("trees may be at most 7 levels deep");
    if (n_nodes_ > 1) {
        heads.check_fits(cfg);
        if (heads.count() < depth)
            throw std::invalid_argument("the tree is " + std::to_string(depth) + " levels deep but only " +
                                        std::to_string(heads.count()) + " Medusa heads are loaded");
    }
    if (options_.rule == AcceptRule::Typical && options_.temperature <= 0) options_.rule = AcceptRule::Greedy;
    if (options_.rule != AcceptRule::Greedy && options_.temperature <= 0) options_.rule = AcceptRule::Greedy;
    topk_ = 1;
    for (int i = 1; i < n_nodes_; ++i) topk_ = std::max(topk_, tree.rank[i] + 1);
    if (topk_ > 32) throw std::invalid_argument("tree ranks must be below 32");

    const int n_heads_used = n_nodes_ > 1 ? depth : 0;
    heads_ = std::make_unique<Heads>();
    heads_->count = n_heads_used;
    if (n_heads_used > 0) {
        for (int l = 0; l < heads.layers; ++l) {
            std::vector<Tensor> views;
            std::vector<float> bias;
            for (int k = 0; k < n_heads_used; ++k) {
                views.push_back(f32_view(heads.heads[k].w1[l], cfg.dim, cfg.dim));
                bias.insert(bias.end(), heads.heads[k].b1[l].begin(), heads.heads[k].b1[l].end());
            }
            std::vector<const Tensor*> parts;
            for (const Tensor& v : views) parts.push_back(&v);
            heads_->w1.push_back(upload_matrix(ctx, parts));
            heads_->b1.push_back(device_buffer(ctx, bias.size() * 4));
            heads_->b1.back()->upload(bias.data(), bias.size() * 4);
        }
        heads_->shares_classifier = true;
        for (int k = 0; k < n_heads_used; ++k) heads_->shares_classifier &= heads.w2_is_classifier(k, file);
        if (!heads_->shares_classifier) {
            std::vector<Tensor> views;
            for (int k = 0; k < n_heads_used; ++k) views.push_back(f32_view(heads.heads[k].w2, cfg.vocab_size, cfg.dim));
            std::vector<const Tensor*> parts;
            for (const Tensor& v : views) parts.push_back(&v);
            heads_->w2 = upload_matrix(ctx, parts);
        }
    }
    vocab_stride_ = (cfg.vocab_size + 63) / 64 * 64;  // keeps each head's logits 256-byte aligned
    head_in_ = device_buffer(ctx, cfg.dim * 4);
    head_tmp_[0] = device_buffer(ctx, size_t(std::max(1, n_heads_used)) * cfg.dim * 4);
    head_tmp_[1] = device_buffer(ctx, size_t(std::max(1, n_heads_used)) * cfg.dim * 4);
    head_logits_ = device_buffer(ctx, size_t(std::max(1, n_heads_used)) * vocab_stride_ * 4);
    cand_tokens_ = device_buffer(ctx, size_t(1 + std::max(1, n_heads_used) * topk_) * 4);
    cand_probs_ = device_buffer(ctx, size_t(1 + std::max(1, n_heads_used) * topk_) * 4);
    stats_ = device_buffer(ctx, size_t(kTMax) * 2 * 4);
    state_ = device_buffer(ctx, kStateWords * 4);
    trace_ = std::make_unique<gpu::Buffer>(ctx, kTraceWords * 4, gpu::MemoryKind::Host);

    // The tree's static description.
    std::vector<uint32_t> t(kTreeWords, kNone);
    t[T_NODES] = uint32_t(n_nodes_);
    t[T_PATHS] = uint32_t(tree.retrieve_indices.size());
    t[T_PATH_LEN] = uint32_t(depth + 1);
    t[T_TOPK] = uint32_t(topk_);
    std::vector<int> last_child(n_nodes_, -1);
    for (int i = 0; i < n_nodes_; ++i) {
        // The GPU packs each head's candidates at stride topk_ (the tree's largest rank + 1), not
        // the buffers' nominal top-k, so index by depth and rank rather than tree_indices.
        t[T_INDEX + i] = i == 0 ? 0u : uint32_t(1 + (tree.depth[i] - 1) * topk_ + tree.rank[i]);
        t[T_DEPTH + i] = uint32_t(tree.depth[i]);
        t[T_PARENT + i] = tree.parent[i] < 0 ? kNone : uint32_t(tree.parent[i]);
    }
    // Children in rank order: nodes are sorted by depth then path, so scanning in index order
    // visits each parent's children by increasing rank.
    for (int i = 1; i < n_nodes_; ++i) {
        const int par = tree.parent[i];
        if (last_child[par] < 0) t[T_FIRST_CHILD + par] = uint32_t(i);
        else t[T_NEXT_SIBLING + last_child[par]] = uint32_t(i);
        last_child[par] = i;
    }
    if (tree.retrieve_indices.size() > size_t(kTMax)) throw std::invalid_argument("too many tree paths");
    for (size_t r = 0; r < tree.retrieve_indices.size(); ++r)
        for (size_t d = 0; d < tree.retrieve_indices[r].size() && d < size_t(kMaxPath); ++d)
            if (tree.retrieve_indices[r][d] >= 0) t[T_PATH_NODES + r * kMaxPath + d] = uint32_t(tree.retrieve_indices[r][d]);
    tree_buf_ = device_buffer(ctx, t.size() * 4);
    tree_buf_->upload(t.data(), t.size() * 4);

    auto kernel = [&](const char* name, uint32_t buffers, uint32_t push) {
        kernels_[name] = std::make_unique<gpu::Kernel>(ctx, name, buffers, push);
    };
    kernel("medusa_topk", 3, sizeof(TopkPush));
    kernel("medusa_gather", 4, 0);
    kernel("medusa_node_stats", 2, sizeof(NodeStatsPush));
    kernel("medusa_accept", 8, sizeof(AcceptPush));
    kernel("medusa_commit", 5, sizeof(CommitPush));
    step_ = std::make_unique<gpu::CommandSequence>(ctx, options_.timestamps);
    record_step();
}

MedusaDecoder::~MedusaDecoder() = default;

void MedusaDecoder::record_step() {
    const LlamaConfig& cfg = model_.config();
    auto buf = model_.buffers();
    const uint32_t dim = cfg.dim, vocab = cfg.vocab_size;
    auto& seq = *step_;
    seq.begin();
    if (const int K = heads_->count; K > 0) {
        seq.stage("heads");
        // Every head starts from the same hidden state (input stride 0), then reads its own row.
        const gpu::Buffer* x = head_in_.get();
        uint32_t x_stride = 0;
        for (size_t l = 0; l < heads_->w1.size(); ++l) {
            const gpu::Buffer* y = head_tmp_[l % 2].get();
            model_.record_matmul(seq, heads_->w1[l], *x, *y, heads_->b1[l].get(), kMatmulResblock, K * dim, 1,
                                 x_stride, dim, int(dim));
            x = y;
            x_stride = dim;
        }
        if (heads_->shares_classifier)  // K rows through the classifier, as a block of K tokens
            model_.record_matmul(seq, model_.classifier(), *x, *head_logits_, nullptr, 0, vocab, K, x_stride,
                                 uint32_t(vocab_stride_));
        else
            model_.record_matmul(seq, heads_->w2, *x, *head_logits_, nullptr, 0, K * vocab, 1, x_stride,
                                 uint32_t(vocab_stride_), int(vocab));
        seq.stage("topk");
        seq.dispatch(*kernels_["medusa_topk"], {*head_logits_, *cand_tokens_, *cand_probs_},
                     TopkPush{vocab, uint32_t(vocab_stride_), uint32_t(topk_)}, uint32_t(K));
    }
    seq.stage("gather");
    seq.dispatch_raw(*kernels_["medusa_gather"], {*tree_buf_, *cand_tokens_, *state_, buf.params}, nullptr, 0, 1);
    model_.record_forward(seq, n_nodes_);
    seq.stage("accept");
    seq.dispatch(*kernels_["medusa_node_stats"], {buf.logits, *stats_},
                 NodeStatsPush{vocab, uint32_t(n_nodes_), options_.temperature}, uint32_t(n_nodes_));
    seq.dispatch(*kernels_["medusa_accept"],
                 {buf.logits, buf.argmax, *stats_, *tree_buf_, buf.params, *state_, *trace_, *cand_probs_},
                 AcceptPush{vocab, uint32_t(options_.rule), options_.temperature, options_.typical_eps,
                            options_.typical_delta},
                 1);
    seq.stage("commit");
    const uint32_t kv = cfg.kv_dim();
    seq.dispatch(*kernels_["medusa_commit"], {*state_, buf.key_cache, buf.value_cache, buf.hidden, *head_in_},
                 CommitPush{uint32_t(cfg.n_layers), kv, uint32_t(cfg.seq_len), dim},
                 div_up(std::max(uint32_t(cfg.n_layers) * kv, dim), 64));
    seq.end();
}

StepTrace MedusaDecoder::read_trace(int step) const {
    std::vector<uint32_t> r(kTraceWords);
    trace_->download(r.data(), r.size() * 4);
    auto f = [&](int i) {
        float v;
        std::memcpy(&v, &r[i], 4);
        return v;
    };
    StepTrace s;
    s.step = step;
    s.base = int(r[R_BASE]);
    s.accepted = int(r[R_ACCEPTED]);
    s.bonus = int(r[R_BONUS]);
    for (int d = 0; d <= s.accepted; ++d) s.path.push_back(int(r[R_PATH + d]));
    for (int i = 0; i < n_nodes_; ++i) {
        TreeNodeTrace n;
        n.token = int(r[R_TOKEN + i]);
        n.parent = tree_.parent[i];
        n.depth = tree_.depth[i];
        n.rank = i == 0 ? 0 : tree_.rank[i];
        n.model_prob = f(R_MODEL_P + i);
        n.head_prob = f(R_HEAD_P + i);
        n.limit = f(R_LIMIT + i);
        n.accepted = r[R_STATUS + i] & 1;
        n.passes = r[R_STATUS + i] & 2;
        n.tried = r[R_STATUS + i] & 4;
        s.nodes.push_back(n);
    }
    for (int d = 1; d <= s.accepted; ++d) s.emitted.push_back(s.nodes[s.path[d]].token);
    s.emitted.push_back(s.bonus);
    for (const auto& st : step_->stage_times()) s.stage_ms.push_back({st.stage, st.ms});
    return s;
}

GenerationStats MedusaDecoder::generate(const std::vector<int>& prompt,
                                        const std::function<bool(const StepTrace&)>& on_step) {
    using Clock = std::chrono::steady_clock;
    GenerationStats stats;
    stats.prompt_tokens = int(prompt.size());
    const LlamaConfig& cfg = model_.config();
    auto t0 = Clock::now();
    if (prompt != cached_prompt_ || model_.forward_count() != cached_forward_count_) {
        const int row = prefill(model_, prompt);
        auto l = model_.logits(row);
        cached_logits_.assign(l.begin(), l.end());
        cached_hidden_ = model_.hidden(row);
        cached_prompt_ = prompt;
        cached_forward_count_ = model_.forward_count();
    }
    // The first token comes from the prompt's own logits; the heads start from its hidden state.
    Sampler sampler({options_.temperature, 1.0f, options_.seed});
    const int first = options_.rule == AcceptRule::Greedy ? argmax(cached_logits_) : sampler.sample(cached_logits_);
    head_in_->upload(cached_hidden_.data(), cached_hidden_.size() * 4);
    uint32_t state[kStateWords] = {};
    state[S_ROOT] = uint32_t(first);
    state[S_SEED] = uint32_t(options_.seed ^ (options_.seed >> 32));
    state_->upload(state, sizeof state);
    // The tree's attention mask is fixed: write it once; the GPU fills in tokens and positions.
    TokenBlock mask_block;
    mask_block.base = int(prompt.size());
    mask_block.tokens.assign(n_nodes_, 0);
    mask_block.positions.assign(n_nodes_, int(prompt.size()));
    mask_block.mask.assign(n_nodes_, std::vector<uint8_t>(n_nodes_, 0));
    for (int i = 0; i < n_nodes_; ++i)
        for (int a = i; a >= 0; a = tree_.parent[a]) mask_block.mask[i][a] = 1;
    if (int(prompt.size()) + n_nodes_ <= cfg.seq_len) model_.write_params(mask_block);
    stats.prefill_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

    t0 = Clock::now();
    StepTrace first_step;
    first_step.base = int(prompt.size());
    first_step.bonus = first;
    bool done = !emit_first_token(first_step, first, options_.stop_tokens, options_.max_new_tokens, stats, on_step);
    int base = int(prompt.size());
    for (int step = 1; !done && stats.new_tokens < options_.max_new_tokens; ++step) {
        if (base + n_nodes_ > cfg.seq_len) {
            stats.stop_reason = "context";
            break;
        }
        auto ts = Clock::now();
        step_->run();
        ++stats.forward_passes;
        StepTrace tr = read_trace(step);
        tr.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - ts).count();
        base = tr.base + tr.accepted + 1;
        done = !keep_step_tokens(tr.emitted, options_.stop_tokens, options_.max_new_tokens, stats);
        if (!on_step(tr)) stats.stop_reason = "cancelled", done = true;
    }
    model_.set_last_block_size(n_nodes_);
    stats.decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return stats;
}

}  // namespace medusa
