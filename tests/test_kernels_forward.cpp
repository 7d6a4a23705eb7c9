// The forward pass's shaders other than matmul (embed, rmsnorm, rope_kv, attention in both of
// its layouts), each against the plain C++ computation on random inputs and a random tree mask.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "block_params_fixture.h"
#include "gpu/command_sequence.h"
#include "gpu/kernel.h"
#include "llm/cpu_attention.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_matrix.h"
#include "llm/kernel_params.h"
#include "llm/matmul_recorder.h"
#include "model/dequantize.h"
#include "model/half_float.h"

using namespace medusa;
using namespace medusa::kernels;
using namespace medusa::test;

TEST_CASE("embed copies each block token's row, dequantized", "[kernels]") {
    ValidationGuard guard;
    const int vocab = 50, dim = 64;
    auto values = random_floats(size_t(vocab) * dim, 3, 0.5f);
    for (DType type : {DType::F32, DType::Q8_0}) {
        CAPTURE(dtype_name(type));
        std::vector<uint8_t> storage;
        Tensor t;
        t.name = "embeddings";
        t.type = type;
        t.shape = {vocab, dim};
        if (type == DType::F32) {
            storage.resize(values.size() * 4);
            std::memcpy(storage.data(), values.data(), storage.size());
        } else {  // Q8_0 blocks: an f16 scale and 32 int8 values
            t.group_size = 32;
            for (size_t b = 0; b < values.size() / 32; ++b) {
                const uint16_t d = float_to_half(0.01f + 0.001f * float(b % 5));
                storage.push_back(uint8_t(d & 0xff));
                storage.push_back(uint8_t(d >> 8));
                for (int k = 0; k < 32; ++k) storage.push_back(uint8_t(int8_t((b * 7 + k * 13) % 255 - 127)));
            }
        }
        t.data = storage.data();
        t.nbytes = storage.size();
        const GpuMatrix gm = upload_matrix(gpu_context(), {&t});
        const GpuMatrix::Segment& m = gm.only();
        const TokenBlock block = random_tree_block(0, 9, vocab, 5);
        auto params = block_params_buffer(block);
        gpu::Buffer x(gpu_context(), size_t(block.size()) * dim * 4, gpu::MemoryKind::Device);
        gpu::Kernel k(gpu_context(), embed_shader(m.variant), 4, sizeof(EmbedPush));
        run_once([&](gpu::CommandSequence& s) {
            s.dispatch(k, {*m.words, *m.scales, *params, x}, EmbedPush{uint32_t(dim), m.group_shift(), uint32_t(vocab), 1.5f},
                       div_up(dim / elements_per_word(m.variant), 64), uint32_t(block.size()));
        });
        const auto got = read(x, size_t(block.size()) * dim);
        const auto table = dequantize(t);
        // Every value times the scale (Gemma's sqrt(dim); 1.5 here).
        std::vector<float> scaled(table.size());
        for (size_t i = 0; i < table.size(); ++i) scaled[i] = table[i] * 1.5f;
        for (int i = 0; i < block.size(); ++i)
            CHECK(max_abs_diff(&got[size_t(i) * dim], &scaled[size_t(block.tokens[i]) * dim], dim) == 0.0f);
    }
}

TEST_CASE("rmsnorm normalises every token's row, applies the gains and fills the feature cache", "[kernels]") {
    ValidationGuard guard;
    const int dim = 96, T = 11, ctx = 40, base = 20;  // more tokens than one workgroup's subgroups
    const auto x = random_floats(size_t(T) * dim, 11, 2.0f), g = random_floats(dim, 12, 1.0f);
    auto xb = buffer_with(x), gb = buffer_with(g);
    gpu::Buffer y(gpu_context(), x.size() * 4, gpu::MemoryKind::Device);
    auto features = buffer_with(std::vector<float>(size_t(ctx) * dim, -1.0f));
    auto params = block_params_buffer(TokenBlock::causal(base, std::vector<int>(T, 3)));
    gpu::Kernel k(gpu_context(), gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
    run_once([&](gpu::CommandSequence& s) {
        s.dispatch(k, {*xb, *gb, y, *features, *params}, RmsnormPush{uint32_t(dim), uint32_t(T), 1e-5f, 1u, 0u},
                   subgroup_item_groups(gpu_context(), T));
    });
    const auto got = read(y, x.size()), cache = read(*features, size_t(ctx) * dim);
    std::vector<float> want(dim);
    for (int t = 0; t < T; ++t) {
        rmsnorm(want.data(), &x[size_t(t) * dim], g.data(), dim, 1e-5f);
        CHECK(max_abs_diff(&got[size_t(t) * dim], want.data(), dim) < 1e-5f);
        CHECK(max_abs_diff(&cache[size_t(base + t) * dim], want.data(), dim) < 1e-5f);
    }
    CHECK(cache[size_t(base - 1) * dim] == -1.0f);  // other slots untouched
    CHECK(cache[size_t(base + T) * dim] == -1.0f);
}

TEST_CASE("rope_kv and head_rope_kv add the biases, [normalise each head,] rotate q in place and write rotated k "
          "and plain v into the cache slots", "[kernels]") {
    ValidationGuard guard;
    const int n_heads = 8, n_kv = 4, hd = 8, dim = n_heads * hd, kv = n_kv * hd, ctx = 80, layers = 2, layer = 1;
    const int base = 30;
    const float theta = 10000.0f, eps = 1e-6f;
    const TokenBlock block = random_tree_block(base, 12, 100, 7);
    const int T = block.size(), stride = dim + 2 * kv;
    // Plain (zeros, ones, 1, whole heads, every slot) and with Qwen2's biases, Llama 3's per-pair
    // frequency divisors, linear position scaling, partial RoPE with LongRoPE's attention factor
    // and a local layer's ring of 16 rows; each through rope_kv and, with q/k norms, head_rope_kv.
    for (const bool scaled : {false, true})
        for (const bool norms : {false, true}) {
            CAPTURE(scaled, norms);
            const auto qkv = random_floats(size_t(T) * stride, 21, 1.0f);
            auto bias = random_floats(size_t(stride), 22, scaled ? 0.5f : 0.0f);
            const int rotated = scaled ? 6 : hd;
            std::vector<float> factors(size_t(rotated) / 2, 1.0f);
            if (scaled) factors = {1.0f, 1.55f, 2.7f};
            const float position_scale = scaled ? 2.0f : 1.0f, attn_factor = scaled ? 1.2f : 1.0f;
            const uint32_t rows = scaled ? 16u : uint32_t(ctx);
            const auto gains = random_floats(size_t(2 * hd), 23, 1.0f);
            auto qkvb = buffer_with(qkv), biasb = buffer_with(bias), factorsb = buffer_with(factors), gainsb = buffer_with(gains);
            std::vector<float> zeros(size_t(layers) * ctx * kv, 0.0f);
            auto kc = buffer_with(zeros), vc = buffer_with(zeros);
            auto params = block_params_buffer(block);
            const uint32_t offset = uint32_t(layer * ctx * kv);
            const RopePush push{dim, kv, hd, theta, offset, position_scale, uint32_t(rotated), attn_factor, rows,
                                n_heads, n_kv, eps};
            gpu::Kernel k(gpu_context(), norms ? gpu::Shader::head_rope_kv : gpu::Shader::rope_kv, norms ? 7 : 6,
                          sizeof(RopePush));
            run_once([&](gpu::CommandSequence& s) {
                if (norms)
                    s.dispatch(k, {*qkvb, *kc, *vc, *params, *biasb, *factorsb, *gainsb}, push,
                               subgroup_item_groups(gpu_context(), uint32_t(T * (n_heads + n_kv))));
                else
                    s.dispatch(k, {*qkvb, *kc, *vc, *params, *biasb, *factorsb}, push, div_up(dim / 2 + kv / 2 + kv, 64),
                               uint32_t(T));
            });
            const auto q_got = read(*qkvb, qkv.size()), k_got = read(*kc, zeros.size()), v_got = read(*vc, zeros.size());
            const RopeRotation rope{hd, rotated, theta, factors.data(), position_scale, attn_factor};
            for (int t = 0; t < T; ++t) {
                const float* row = &qkv[size_t(t) * stride];
                std::vector<float> q(dim), kk(kv), v(kv);
                for (int i = 0; i < dim; ++i) q[i] = row[i] + bias[i];
                for (int i = 0; i < kv; ++i) kk[i] = row[dim + i] + bias[dim + i], v[i] = row[dim + kv + i] + bias[dim + kv + i];
                if (norms) {
                    for (int h = 0; h < n_heads; ++h) rmsnorm(&q[size_t(h) * hd], &q[size_t(h) * hd], gains.data(), hd, eps);
                    for (int h = 0; h < n_kv; ++h) rmsnorm(&kk[size_t(h) * hd], &kk[size_t(h) * hd], gains.data() + hd, hd, eps);
                }
                rope_rotate(q.data(), dim, block.positions[t], rope);
                rope_rotate(kk.data(), kv, block.positions[t], rope);
                const size_t slot = offset + size_t((base + t) % rows) * kv;
                CHECK(max_abs_diff(&q_got[size_t(t) * stride], q.data(), dim) < 1e-4f);
                CHECK(max_abs_diff(&k_got[slot], kk.data(), kv) < 1e-4f);
                CHECK(max_abs_diff(&v_got[slot], v.data(), kv) == 0.0f);
            }
            CHECK(k_got[offset - 1] == 0.0f);  // the other layer's slots stay untouched
        }
}

TEST_CASE("rmsnorm's accumulate mode adds each normed row to the output's (a post-norm's residual add)", "[kernels]") {
    ValidationGuard guard;
    const int dim = 40, T = 9;
    const auto y = random_floats(size_t(T) * dim, 31, 3.0f), g = random_floats(dim, 32, 1.0f);
    const auto x = random_floats(size_t(T) * dim, 33, 1.0f);
    auto yb = buffer_with(y), gb = buffer_with(g), xb = buffer_with(x);
    auto params = block_params_buffer(TokenBlock::causal(0, std::vector<int>(T, 3)));
    gpu::Kernel k(gpu_context(), gpu::Shader::rmsnorm, 5, sizeof(RmsnormPush));
    run_once([&](gpu::CommandSequence& s) {
        s.dispatch(k, {*yb, *gb, *xb, *xb, *params}, RmsnormPush{uint32_t(dim), uint32_t(T), 1e-6f, 0u, 1u},
                   subgroup_item_groups(gpu_context(), T));
    });
    const auto got = read(*xb, x.size());
    std::vector<float> want(dim);
    for (int t = 0; t < T; ++t) {
        rmsnorm(want.data(), &y[size_t(t) * dim], g.data(), dim, 1e-6f);
        for (int i = 0; i < dim; ++i) want[i] += x[size_t(t) * dim + i];
        CHECK(max_abs_diff(&got[size_t(t) * dim], want.data(), dim) < 1e-5f);
    }
}

TEST_CASE("the qkv matmul's fused RoPE writes what the matmul and rope_kv write", "[kernels]") {
    ValidationGuard guard;
    auto& ctx = gpu_context();
    const int dim = 64, kv = 32, hd = 8, in = 64, ctx_len = 80, layers = 2, layer = 1, base = 30;
    const float theta = 10000.0f, position_scale = 2.0f;
    // 12 tokens: a whole tile of 8 and a partial one.
    const TokenBlock block = random_tree_block(base, 12, 100, 9);
    const int T = block.size(), stride = dim + 2 * kv;
    // q|k in F32 and v in F16: two segments, so the second dispatch's rows start at row_offset.
    const auto wqk = random_floats(size_t(dim + kv) * in, 41, 0.3f), wv32 = random_floats(size_t(kv) * in, 42, 0.3f);
    std::vector<uint16_t> wv16(wv32.size());
    for (size_t i = 0; i < wv32.size(); ++i) wv16[i] = float_to_half(wv32[i]);
    Tensor tqk = f32_tensor("qk", wqk, {dim + kv, in}), tv;
    tv.name = "v", tv.type = DType::F16, tv.shape = {kv, in};
    tv.data = reinterpret_cast<const uint8_t*>(wv16.data()), tv.nbytes = wv16.size() * 2;
    GpuMatrix m = upload_matrix(ctx, {&tqk, &tv});
    REQUIRE(m.segments.size() == 2);
    const auto x = random_floats(size_t(T) * in, 43), gain = random_floats(size_t(in), 44, 1.0f);
    const auto bias = random_floats(size_t(stride), 45, 0.5f);
    auto xb = buffer_with(x), gb = buffer_with(gain);
    MatmulCall call;
    // The lane-per-row layout through texel views; the subgroup layout through storage loads, a
    // word a lane with one row a subgroup asked for (two are taken, so that RoPE's pairs meet), and
    // quads with four rows.
    struct Layout {
        bool lane_per_row;
        MatmulConfig config;
    };
    MatmulConfig quads{.texel = false, .workgroup = 128, .rows = 4};
    quads.quads = true;
    for (const auto& [lane_per_row, config] : {Layout{true, MatmulConfig{.texel = true, .workgroup = 64}},
                                               Layout{false, MatmulConfig{.texel = false, .workgroup = 64, .rows = 1}},
                                               Layout{false, quads}}) {
        MatmulRecorder recorder(ctx, lane_per_row, 1e-5f, config);
        // Whole heads, and LongRoPE's partial RoPE (6 of 8 dimensions) with its attention factor into
        // a local layer's ring of 16 rows.
        for (const bool partial : {false, true}) {
            CAPTURE(lane_per_row, config.name(), partial);
            const std::vector<float> factors = partial ? std::vector<float>{1.0f, 1.55f, 2.7f} : std::vector<float>{1.0f, 1.55f, 2.7f, 8.0f};
            const int rotated = partial ? 6 : hd;
            const float attn_factor = partial ? 1.2f : 1.0f;
            const uint32_t rows = partial ? 16u : uint32_t(ctx_len);
            auto biasb = buffer_with(bias), factorsb = buffer_with(factors);
            auto yb = buffer_with(std::vector<float>(size_t(T) * stride, 0.0f));
            std::vector<float> zeros(size_t(layers) * ctx_len * kv, 0.0f);
            auto kc = buffer_with(zeros), vc = buffer_with(zeros);
            auto params = block_params_buffer(block);
            const uint32_t offset = uint32_t(layer * ctx_len * kv);
            const MatmulRope rope{.keys = kc.get(), .values = vc.get(), .params = params.get(), .bias = biasb.get(),
                                  .factors = factorsb.get(), .q_dim = dim, .kv_dim = kv, .head_dim = hd,
                                  .cache_offset = offset, .rotated = uint32_t(rotated), .cache_rows = rows, .theta = theta,
                                  .position_scale = position_scale, .attn_factor = attn_factor};
            call = MatmulCall{.w = &m, .x = xb.get(), .y = yb.get(), .extra = gb.get(), .flags = kMatmulNorm | kMatmulRope,
                              .out_rows = stride, .tokens = T, .x_stride = in, .y_stride = uint32_t(stride), .rope = &rope};
            REQUIRE(recorder.fuses_rope(call));
            run_once([&](gpu::CommandSequence& s) { recorder.record(s, call); });
            const auto y_got = read(*yb, size_t(T) * stride), k_got = read(*kc, zeros.size()), v_got = read(*vc, zeros.size());

            std::vector<float> w(wqk);
            for (uint16_t h : wv16) w.push_back(half_to_float(h));
            std::vector<float> xn(in), qkv(stride);
            const RopeRotation rotation{hd, rotated, theta, factors.data(), position_scale, attn_factor};
            for (int t = 0; t < T; ++t) {
                CAPTURE(t);
                rmsnorm(xn.data(), &x[size_t(t) * in], gain.data(), in, 1e-5f);
                matvec(qkv.data(), xn.data(), w.data(), in, stride);
                for (int i = 0; i < stride; ++i) qkv[i] += bias[i];
                rope_rotate(qkv.data(), dim, block.positions[t], rotation);
                rope_rotate(qkv.data() + dim, kv, block.positions[t], rotation);
                const size_t slot = offset + size_t((base + t) % rows) * kv;
                CHECK(max_abs_diff(&y_got[size_t(t) * stride], qkv.data(), dim) < 1e-4f);
                CHECK(max_abs_diff(&k_got[slot], qkv.data() + dim, kv) < 1e-4f);
                CHECK(max_abs_diff(&v_got[slot], qkv.data() + dim + kv, kv) < 1e-4f);
            }
            CHECK(k_got[offset - 1] == 0.0f);  // the other layer's slots stay untouched
        }
    }
    auto yb = buffer_with(std::vector<float>(size_t(T) * stride, 0.0f));
    call.y = yb.get();
    call.rope = nullptr;  // a call whose buffers are gone: the check comes first

    // The lane-per-row layout reading storage buffers cannot take it: the layer records rope_kv
    // for it instead.
    MatmulRecorder storage(ctx, true, 1e-5f, MatmulConfig{.texel = false, .workgroup = 64});
    CHECK_FALSE(storage.fuses_rope(call));
    gpu::CommandSequence seq(ctx);
    seq.begin();
    CHECK_THROWS_WITH(storage.record(seq, call), Catch::Contains("fused RoPE"));
    seq.end();
}

TEST_CASE("attention over the cache prefix and each node's ancestors matches the CPU, in both layouts", "[kernels]") {
    ValidationGuard guard;
    const int dim = 64, kv = 32, hd = 8, heads = 8, kv_mul = heads / (kv / hd), ctx = 192, base = 41;
    // A small tree, and a full block whose masks fill every word of a row (the texel variant
    // reads a row as one uvec4): the last `window` cached slots are seen as a random subset.
    for (const auto& [tokens, window] : {std::pair{17, 12}, {MAX_BLOCK_TOKENS, 40}}) {
        CAPTURE(tokens, window);
        TokenBlock block = random_tree_block(base, tokens, 100, 9);
        block.window = window;
        std::mt19937 rng(4);
        block.window_mask.assign(block.size(), std::vector<uint8_t>(block.window));
        for (auto& row : block.window_mask)
            for (auto& bit : row) bit = uint8_t(rng() % 2);
        const int T = block.size(), stride = dim + 2 * kv;
        const auto qkv = random_floats(size_t(T) * stride, 31, 1.0f);
        const auto kcache = random_floats(size_t(ctx) * kv, 32, 1.0f);
        const auto vcache = random_floats(size_t(ctx) * kv, 33, 1.0f);
        // A global layer, and a local one: a sliding window of 20 positions, another scale, its
        // cache a ring of T + 23 rows (slot s in row s % rows).
        for (const bool local : {false, true}) {
        CAPTURE(local);
        const float scale = local ? 0.3f : 1.0f / std::sqrt(float(hd));
        const int sliding = local ? 20 : 0;
        const uint32_t rows = local ? uint32_t(T + 23) : uint32_t(ctx);
        auto ring = [&](const std::vector<float>& full) {
            if (!local) return full;
            std::vector<float> r(size_t(rows) * kv, std::nanf(""));  // rows no visible slot maps to stay NaN
            for (int s = std::max(0, base + T - int(rows)); s < base + T; ++s)
                std::copy_n(&full[size_t(s) * kv], kv, &r[size_t(s % rows) * kv]);
            return r;
        };
        const auto kring = ring(kcache), vring = ring(vcache);
        auto seen = [&](int t, int s) { return block.sees_slot(t, s) && within_window(block, t, s, sliding); };
        // The CPU: softmax(scale q.k) v over the visible slots.
        std::vector<float> want(size_t(T) * dim);
        for (int t = 0; t < T; ++t)
            for (int h = 0; h < heads; ++h) {
                const float* q = &qkv[size_t(t) * stride + h * hd];
                const int kvh = h / kv_mul;
                std::vector<double> w(base + T, 0.0);
                double m = -1e30, z = 0;
                for (int s = 0; s < base + T; ++s) {
                    if (!seen(t, s)) continue;
                    double d = 0;
                    for (int i = 0; i < hd; ++i) d += double(q[i]) * kcache[size_t(s) * kv + kvh * hd + i];
                    w[s] = d * scale;
                    m = std::max(m, w[s]);
                }
                for (int s = 0; s < base + T; ++s) {
                    w[s] = seen(t, s) ? std::exp(w[s] - m) : 0.0;
                    z += w[s];
                }
                for (int i = 0; i < hd; ++i) {
                    double acc = 0;
                    for (int s = 0; s < base + T; ++s)
                        if (w[s] > 0) acc += w[s] * vcache[size_t(s) * kv + kvh * hd + i];
                    want[size_t(t) * dim + h * hd + i] = float(acc / z);
                }
            }
        // The one-pass layout (CPU drivers), and it reading the cache as texels, with one token a
        // subgroup and with runs of 3 (the block's last run partial) and 8 (each key fetched once
        // for them).
        struct Layout {
            bool texel;
            uint32_t tokens_per_subgroup;
        };
        const uint32_t one = uint32_t(hd);
        for (const Layout& l : {Layout{false, 1u}, {true, 1u}, {false, 3u}, {true, 3u}, {true, 8u}}) {
            const auto [texel, tokens_per_subgroup] = l;
            CAPTURE(texel, tokens_per_subgroup);
            auto qkvb = buffer_with(qkv), kc = buffer_with(kring), vc = buffer_with(vring);
            auto params = block_params_buffer(block);
            gpu::Buffer out(gpu_context(), size_t(T) * dim * 4, gpu::MemoryKind::Device);
            gpu::Kernel k(gpu_context(), attention_shader(texel), attention_bindings(texel),
                          sizeof(AttentionPush), {one, tokens_per_subgroup});
            const AttentionPush push{dim, kv, hd, heads, uint32_t(kv_mul), ctx, 0, 1, scale, uint32_t(sliding), rows};
            const uint32_t groups =
                subgroup_item_groups(gpu_context(), uint32_t(heads) * div_up(uint32_t(T), tokens_per_subgroup));
            run_once([&, texel = texel](gpu::CommandSequence& s) {  // clang 14 captures no structured binding
                if (texel)
                    s.dispatch(k, {*qkvb, *kc, *vc, *params, out, gpu::texel(*kc, gpu::TexelFormat::F32x4),
                                   gpu::texel(*vc, gpu::TexelFormat::F32x4), gpu::texel(*qkvb, gpu::TexelFormat::F32x4),
                                   gpu::texel(*params, gpu::TexelFormat::U32x4)},
                               push, groups);
                else
                    s.dispatch(k, {*qkvb, *kc, *vc, *params, out}, push, groups);
            });
            CHECK(max_abs_diff(read(out, want.size()).data(), want.data(), want.size()) < 1e-4f);
        }
        // The GPU layout: the keys in 1 range (written directly) or in 2, 3 and 7 that the last to
        // finish merges, 7 leaving the last tokens' ranges shorter and some of a 17-token tree's
        // without a key it sees; twice in a row, as a layer after another (the arrival counts
        // must be back to zero in between).
        for (uint32_t splits : {1u, 2u, 3u, 7u}) {
            CAPTURE(splits);
            auto qkvb = buffer_with(qkv), kc = buffer_with(kring), vc = buffer_with(vring);
            auto params = block_params_buffer(block);
            auto scores = buffer_with(std::vector<float>(size_t(T) * heads * ctx, std::nanf("")));  // stale partials
            auto arrivals = buffer_with(std::vector<float>(size_t(T) * heads, 0.0f));
            gpu::Buffer out(gpu_context(), size_t(T) * dim * 4, gpu::MemoryKind::Device);
            gpu::Kernel split(gpu_context(), gpu::Shader::attention_split, 7, sizeof(AttentionPush));
            const AttentionPush push{dim, kv, hd, heads, uint32_t(kv_mul), ctx, 0, splits, scale, uint32_t(sliding), rows};
            run_once([&](gpu::CommandSequence& s) {
                for (int layer = 0; layer < 2; ++layer)
                    s.dispatch(split, {*qkvb, *kc, *vc, *params, *scores, out, *arrivals}, push,
                               uint32_t(heads * T) * splits);
            });
            CHECK(read(*arrivals, size_t(T) * heads) == std::vector<float>(size_t(T) * heads, 0.0f));
            CHECK(max_abs_diff(read(out, want.size()).data(), want.data(), want.size()) < 1e-4f);
        }
        }
    }
}
