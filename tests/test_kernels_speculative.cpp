// The speculative step's shaders (the heads' top-k, the gather into the verify block, the
// per-node statistics, the KV compaction and the hidden-state hand-over) against the plain C++
// computation on random inputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "block_params_fixture.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "layouts/kv_commit.h"
#include "layouts/medusa_gather_map.h"
#include "llm/kernel_params.h"

using namespace medusa;
using namespace medusa::kernels;
using namespace medusa::test;

namespace {

template <class T>
std::unique_ptr<gpu::Buffer> host_struct(const T& v) {
    auto b = std::make_unique<gpu::Buffer>(gpu_context(), sizeof v, gpu::MemoryKind::Host);
    b->upload(&v, sizeof v);
    return b;
}

}  // namespace

TEST_CASE("medusa_topk finds each head's top-k (ties to the lower id) and their probabilities", "[kernels]") {
    ValidationGuard guard;
    for (bool texel : {false, true}) {
        CAPTURE(texel);
        const int vocab = 301, stride = 320, heads = 3, topk = 5;  // a vocabulary that ends inside a quad
        auto logits = random_floats(size_t(heads) * stride, 41, 3.0f);
        logits[stride + 7] = logits[stride + 250] = 9.0f;  // a tie for head 1's best: id 7 first
        auto lb = buffer_with(logits);
        const size_t n = 1 + heads * topk;
        auto tokens = buffer_with(std::vector<uint32_t>(n, 0)), probs = buffer_with(std::vector<float>(n, 0));
        gpu::Kernel k(gpu_context(), medusa_topk_shader(texel), medusa_topk_bindings(texel),
                      sizeof(TopkPush));
        const TopkPush push{uint32_t(vocab), uint32_t(stride), uint32_t(topk)};
        run_once([&](gpu::CommandSequence& s) {
            if (texel)
                s.dispatch(k, {*lb, *tokens, *probs, gpu::texel(*lb, gpu::TexelFormat::F32x4)}, push, heads);
            else
                s.dispatch(k, {*lb, *tokens, *probs}, push, heads);
        });
        const auto got_t = read<uint32_t>(*tokens, n);
        const auto got_p = read(*probs, n);
        for (int h = 0; h < heads; ++h) {
            const float* l = &logits[size_t(h) * stride];
            std::vector<int> order(vocab);
            for (int v = 0; v < vocab; ++v) order[v] = v;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
            const double m = l[order[0]];
            double z = 0;
            for (int v = 0; v < vocab; ++v) z += std::exp(l[v] - m);
            for (int r = 0; r < topk; ++r) {
                CAPTURE(h, r);
                CHECK(int(got_t[1 + h * topk + r]) == order[r]);
                CHECK(got_p[1 + h * topk + r] == Approx(std::exp(l[order[r]] - m) / z).epsilon(1e-4));
            }
        }
        CHECK(got_t[1 + topk] == 7);
        CHECK(got_t[2 + topk] == 250);
    }
}

TEST_CASE("medusa_gather lays candidates into the block and leaves the root to the CPU", "[kernels]") {
    ValidationGuard guard;
    const TokenBlock block = random_tree_block(20, 11, 500, 3);
    auto params = block_params_buffer(block);
    layout::MedusaGatherMap map{};
    map.nodes = 14;  // the full tree; the block uses a prefix of it
    std::vector<uint32_t> cand(40);
    std::vector<float> cand_p(40);
    for (int c = 0; c < 40; ++c) cand[c] = uint32_t(1000 + c), cand_p[c] = 0.01f * float(c);
    for (int i = 0; i < 14; ++i) map.candidate[i] = uint32_t(i == 0 ? 0 : (i * 7) % 39 + 1);
    auto mb = host_struct(map);
    auto cb = buffer_with(cand), pb = buffer_with(cand_p);
    layout::DraftProbs probs{};
    auto out = host_struct(probs);
    gpu::Kernel k(gpu_context(), gpu::Shader::medusa_gather, 5, 0);
    run_once([&](gpu::CommandSequence& s) { s.dispatch_raw(k, {*mb, *cb, *pb, *params, *out}, nullptr, 0, 1); });
    const auto* p = static_cast<const layout::BlockParams*>(params->mapped());
    const auto* q = static_cast<const layout::DraftProbs*>(out->mapped());
    CHECK(int(p->tokens[0]) == block.tokens[0]);
    CHECK(q->prob[0] == 1.0f);
    for (int i = 1; i < block.size(); ++i) {
        CHECK(p->tokens[i] == cand[map.candidate[i]]);
        CHECK(q->prob[i] == cand_p[map.candidate[i]]);
    }
    CHECK(p->tokens[block.size()] == 0);  // past the block: untouched
}

TEST_CASE("node_stats gives each node's log-normaliser and Medusa's entropy at the temperature", "[kernels]") {
    ValidationGuard guard;
    // Storage reads (any vocabulary) and texel reads (a multiple of 4), over more tokens than one
    // workgroup's subgroups hold; a subgroup a row (width 0), or a workgroup of 64 or the GPUs'
    // width a row.
    const int T = 11;
    const uint32_t gpu_width = logit_row_width(gpu_context(), false);
    for (const auto& [vocab, texel] : {std::pair{701, false}, {700, false}, {700, true}})
    for (uint32_t width : {0u, 64u, gpu_width}) {
        for (float temperature : {1.0f, 0.6f}) {
            CAPTURE(vocab, texel, width, temperature);
            const auto logits = random_floats(size_t(vocab) * T, 51, 6.0f);
            auto lb = buffer_with(logits);
            gpu::Buffer stats(gpu_context(), size_t(T) * 2 * 4, gpu::MemoryKind::Host);
            gpu::Kernel k(gpu_context(), logit_rows_shader(LogitRows::NodeStats, texel), logit_rows_bindings(texel),
                          sizeof(NodeStatsPush), width > 0 ? std::vector<uint32_t>{width, 1u} : std::vector<uint32_t>{});
            const NodeStatsPush push{uint32_t(vocab), uint32_t(T), temperature};
            run_once([&](gpu::CommandSequence& s) { record_logit_rows(s, k, *lb, stats, push, T, width > 0); });
            const auto got = read(stats, size_t(T) * 2);
            for (int t = 0; t < T; ++t) {
                const float* l = &logits[size_t(t) * vocab];
                double m = -1e30, z = 0, h = 0;
                for (int v = 0; v < vocab; ++v) m = std::max(m, double(l[v]) / temperature);
                for (int v = 0; v < vocab; ++v) z += std::exp(double(l[v]) / temperature - m);
                const double lse = m + std::log(z);
                for (int v = 0; v < vocab; ++v) {
                    const double p = std::exp(double(l[v]) / temperature - lse);
                    h -= p * std::log(p + 1e-5);
                }
                CHECK(got[2 * t] == Approx(lse).epsilon(1e-5));
                CHECK(got[2 * t + 1] == Approx(h).epsilon(1e-4));
            }
        }
    }
}

TEST_CASE("kv_compact moves an accepted path's rows to consecutive slots in every layer and the features", "[kernels]") {
    ValidationGuard guard;
    // Layer 1 is a local layer's ring of 16 rows (slot s in row s % 16); the others keep every slot.
    const int layers = 3, ctx = 40, kv = 16, base = 10, fdim = 24;
    const std::vector<int> rows = {ctx, 16, ctx};
    std::vector<uint32_t> table;
    size_t floats = 0;
    for (int r : rows) table.insert(table.end(), {uint32_t(floats), uint32_t(r)}), floats += size_t(r) * kv;
    const auto keys = random_floats(floats, 61), values = random_floats(keys.size(), 62);
    const auto features = random_floats(size_t(ctx) * fdim, 63);
    auto kc = buffer_with(keys), vc = buffer_with(values), fc = buffer_with(features);
    gpu::Buffer tb(gpu_context(), table.size() * 4, gpu::MemoryKind::Device);
    tb.upload(table.data(), table.size() * 4);
    layout::KvCommit c{};
    const std::vector<int> path = {0, 2, 3, 7, 12};
    c.kept = uint32_t(path.size());
    c.old_base = base;
    for (size_t d = 0; d < path.size(); ++d) c.path[d] = uint32_t(path[d]);
    auto cb = host_struct(c);
    gpu::Kernel k(gpu_context(), gpu::Shader::kv_compact, 5, sizeof(KvCompactPush));
    run_once([&](gpu::CommandSequence& s) {
        s.dispatch(k, {*cb, *kc, *vc, *fc, tb}, KvCompactPush{layers, kv, ctx, fdim}, div_up(layers * kv + fdim, 64));
    });
    const auto k_got = read(*kc, keys.size()), v_got = read(*vc, values.size()), f_got = read(*fc, features.size());
    // Slot base + d holds what path[d] held; every other slot is unchanged.
    auto from = [&](int slot) {
        return slot > base && slot < base + int(path.size()) ? base + path[slot - base] : slot;
    };
    for (int slot = 0; slot < ctx; ++slot)
        CHECK(max_abs_diff(&f_got[size_t(slot) * fdim], &features[size_t(from(slot)) * fdim], fdim) == 0.0f);
    for (int l = 0; l < layers; ++l)
        for (int slot = 0; slot < rows[l]; ++slot) {
            // A ring row holds the slot of the verified block that maps to it (base .. base + 12).
            const int s = rows[l] == ctx ? slot : (slot - base % rows[l] + rows[l]) % rows[l] + base;
            const int f = from(s);
            const size_t at = table[2 * l] + size_t(slot) * kv, src = table[2 * l] + size_t(f % rows[l]) * kv;
            CAPTURE(l, slot);
            CHECK(max_abs_diff(&k_got[at], &keys[src], kv) == 0.0f);
            CHECK(max_abs_diff(&v_got[at], &values[src], kv) == 0.0f);
        }
}

TEST_CASE("select_row hands over the hidden state of the path's last node", "[kernels]") {
    ValidationGuard guard;
    const int dim = 48, T = 9;
    const auto hidden = random_floats(size_t(T) * dim, 71);
    auto hb = buffer_with(hidden);
    gpu::Buffer out(gpu_context(), dim * 4, gpu::MemoryKind::Device);
    layout::KvCommit c{};
    c.kept = 3;
    c.path[0] = 0, c.path[1] = 4, c.path[2] = 6;
    auto cb = host_struct(c);
    gpu::Kernel k(gpu_context(), gpu::Shader::select_row, 3, sizeof(RowPush));
    run_once([&](gpu::CommandSequence& s) { s.dispatch(k, {*cb, *hb, out}, RowPush{dim}, 1); });
    CHECK(max_abs_diff(read(out, dim).data(), &hidden[6 * dim], dim) == 0.0f);
}
