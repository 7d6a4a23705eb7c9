// The buffer and push-constant layouts C++ and GLSL share (shaders/layouts/*.h) are declared
// once; this checks that both compilers lay every member out at the same offset: the C++
// offsetof against the Offset decorations glslang wrote into the SPIR-V of a shader that uses
// them all (shaders/layout_probe.comp, compiled with its names kept).
#include <catch2/catch.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "gpu/embedded_shaders.h"
#include "layouts/block_params.h"
#include "layouts/eagle_inputs.h"
#include "layouts/kv_commit.h"
#include "layouts/medusa_gather_map.h"
#include "layouts/push_constants.h"

using namespace medusa;

namespace {

struct SpirvStruct {
    std::map<int, std::string> member_name;
    std::map<int, uint32_t> member_offset;
};

// Struct types by name, with their members' names and offsets.
std::map<std::string, SpirvStruct> reflect(std::span<const uint32_t> words) {
    constexpr uint32_t kOpName = 5, kOpMemberName = 6, kOpMemberDecorate = 72, kOffset = 35;
    std::map<uint32_t, std::string> names;
    std::map<uint32_t, SpirvStruct> by_id;
    auto text = [&](size_t at, size_t end) {
        std::string s;
        for (size_t w = at; w < end; ++w)
            for (int b = 0; b < 4; ++b) {
                const char c = char((words[w] >> (8 * b)) & 0xff);
                if (!c) return s;
                s += c;
            }
        return s;
    };
    for (size_t i = 5; i < words.size();) {
        const uint32_t op = words[i] & 0xffff, count = words[i] >> 16;
        REQUIRE(count > 0);
        if (op == kOpName) names[words[i + 1]] = text(i + 2, i + count);
        if (op == kOpMemberName) by_id[words[i + 1]].member_name[int(words[i + 2])] = text(i + 3, i + count);
        if (op == kOpMemberDecorate && words[i + 3] == kOffset)
            by_id[words[i + 1]].member_offset[int(words[i + 2])] = words[i + 4];
        i += count;
    }
    std::map<std::string, SpirvStruct> out;
    for (const auto& [id, s] : by_id)
        if (names.count(id)) out[names[id]] = s;
    return out;
}

using Members = std::vector<std::pair<std::string, size_t>>;

void check_struct(const std::map<std::string, SpirvStruct>& spirv, const std::string& name, const Members& cpp) {
    INFO(name);
    REQUIRE(spirv.count(name) == 1);
    const SpirvStruct& s = spirv.at(name);
    CHECK(s.member_name.size() == cpp.size());  // a member added on one side only is noticed
    for (size_t m = 0; m < cpp.size(); ++m) {
        INFO("member " << m << " " << cpp[m].first);
        REQUIRE(s.member_name.count(int(m)) == 1);
        CHECK(s.member_name.at(int(m)) == cpp[m].first);
        CHECK(s.member_offset.at(int(m)) == cpp[m].second);
    }
}

#define M(S, f) {#f, offsetof(layout::S, f)}

}  // namespace

TEST_CASE("shared layouts have the same member offsets in C++ and in the shaders' SPIR-V", "[layouts]") {
    const auto words = gpu::embedded_shader(gpu::Shader::layout_probe).words;
    REQUIRE(!words.empty());
    const auto spirv = reflect(words);
    check_struct(spirv, "BlockParams",
                 {M(BlockParams, base), M(BlockParams, count), M(BlockParams, window), M(BlockParams, reserved),
                  M(BlockParams, tokens), M(BlockParams, positions), M(BlockParams, mask),
                  M(BlockParams, window_mask)});
    check_struct(spirv, "KvCommit", {M(KvCommit, kept), M(KvCommit, old_base), M(KvCommit, reserved), M(KvCommit, path)});
    check_struct(spirv, "MedusaGatherMap",
                 {M(MedusaGatherMap, nodes), M(MedusaGatherMap, reserved), M(MedusaGatherMap, candidate)});
    check_struct(spirv, "DraftProbs", {M(DraftProbs, prob)});
    check_struct(spirv, "EagleInputs", {M(EagleInputs, store_base), M(EagleInputs, reserved), M(EagleInputs, source)});
    check_struct(spirv, "MatmulPush",
                 {M(MatmulPush, in_dim), M(MatmulPush, out_dim), M(MatmulPush, n_tokens), M(MatmulPush, group_shift),
                  M(MatmulPush, x_stride), M(MatmulPush, y_stride), M(MatmulPush, eps),
                  M(MatmulPush, block_rows), M(MatmulPush, row_offset), M(MatmulPush, rope_q_dim),
                  M(MatmulPush, rope_kv_dim), M(MatmulPush, rope_head_dim), M(MatmulPush, rope_theta),
                  M(MatmulPush, rope_cache_offset), M(MatmulPush, rope_position_scale), M(MatmulPush, rope_rotated),
                  M(MatmulPush, rope_attn_factor), M(MatmulPush, rope_cache_rows)});
    check_struct(spirv, "EmbedPush",
                 {M(EmbedPush, dim), M(EmbedPush, group_shift), M(EmbedPush, rows), M(EmbedPush, scale)});
    check_struct(spirv, "RopePush", {M(RopePush, dim), M(RopePush, kv_dim), M(RopePush, head_dim), M(RopePush, theta),
                                     M(RopePush, cache_offset), M(RopePush, position_scale), M(RopePush, rotated),
                                     M(RopePush, attn_factor), M(RopePush, cache_rows), M(RopePush, n_heads),
                                     M(RopePush, n_kv_heads), M(RopePush, eps)});
    check_struct(spirv, "AttentionPush",
                 {M(AttentionPush, dim), M(AttentionPush, kv_dim), M(AttentionPush, head_dim), M(AttentionPush, n_heads),
                  M(AttentionPush, kv_mul), M(AttentionPush, ctx), M(AttentionPush, cache_offset),
                  M(AttentionPush, splits), M(AttentionPush, scale), M(AttentionPush, window),
                  M(AttentionPush, cache_rows)});
    check_struct(spirv, "RmsnormPush",
                 {M(RmsnormPush, dim), M(RmsnormPush, n_tokens), M(RmsnormPush, eps), M(RmsnormPush, store_features),
                  M(RmsnormPush, accumulate)});
    check_struct(spirv, "ArgmaxPush", {M(ArgmaxPush, vocab), M(ArgmaxPush, n_tokens)});
    check_struct(spirv, "NodeStatsPush",
                 {M(NodeStatsPush, vocab), M(NodeStatsPush, n_tokens), M(NodeStatsPush, temperature)});
    check_struct(spirv, "KvCompactPush", {M(KvCompactPush, n_layers), M(KvCompactPush, kv_dim), M(KvCompactPush, ctx),
                                          M(KvCompactPush, feature_dim)});
    check_struct(spirv, "RowPush", {M(RowPush, dim)});
    check_struct(spirv, "TopkPush", {M(TopkPush, vocab), M(TopkPush, stride), M(TopkPush, topk)});
    check_struct(spirv, "TrainMatmulPush",
                 {M(TrainMatmulPush, M), M(TrainMatmulPush, N), M(TrainMatmulPush, K), M(TrainMatmulPush, a_off),
                  M(TrainMatmulPush, a_rs), M(TrainMatmulPush, a_cs), M(TrainMatmulPush, b_off),
                  M(TrainMatmulPush, b_rs), M(TrainMatmulPush, b_cs), M(TrainMatmulPush, c_off),
                  M(TrainMatmulPush, c_rs), M(TrainMatmulPush, accumulate)});
    check_struct(spirv, "TrainResblockPush",
                 {M(TrainResblockPush, dim), M(TrainResblockPush, rows), M(TrainResblockPush, bias_off)});
    check_struct(spirv, "TrainSoftmaxCePush",
                 {M(TrainSoftmaxCePush, vocab), M(TrainSoftmaxCePush, target_off), M(TrainSoftmaxCePush, stats_off),
                  M(TrainSoftmaxCePush, scale_index)});
    check_struct(spirv, "TrainGradNormPush", {M(TrainGradNormPush, n)});
    check_struct(spirv, "TrainAdamwPush", {M(TrainAdamwPush, n), M(TrainAdamwPush, n_parts)});
    check_struct(spirv, "TrainBiasPush",
                 {M(TrainBiasPush, rows), M(TrainBiasPush, dim), M(TrainBiasPush, stride), M(TrainBiasPush, bias_off),
                  M(TrainBiasPush, accumulate)});
    check_struct(spirv, "TrainRmsnormPush",
                 {M(TrainRmsnormPush, rows), M(TrainRmsnormPush, dim), M(TrainRmsnormPush, gain_off),
                  M(TrainRmsnormPush, has_gain), M(TrainRmsnormPush, eps), M(TrainRmsnormPush, accumulate),
                  M(TrainRmsnormPush, x_off), M(TrainRmsnormPush, group), M(TrainRmsnormPush, group_stride)});
    check_struct(spirv, "TrainRopePush",
                 {M(TrainRopePush, rows), M(TrainRopePush, width), M(TrainRopePush, stride), M(TrainRopePush, head_dim),
                  M(TrainRopePush, theta), M(TrainRopePush, direction), M(TrainRopePush, rotated),
                  M(TrainRopePush, position_scale), M(TrainRopePush, attn_factor), M(TrainRopePush, has_factors),
                  M(TrainRopePush, factor_off)});
    check_struct(spirv, "TrainAttentionPush",
                 {M(TrainAttentionPush, rows), M(TrainAttentionPush, seq_len), M(TrainAttentionPush, n_heads),
                  M(TrainAttentionPush, n_kv_heads), M(TrainAttentionPush, stride), M(TrainAttentionPush, scale),
                  M(TrainAttentionPush, window)});
    check_struct(spirv, "TrainTttAttentionPush",
                 {M(TrainTttAttentionPush, rows), M(TrainTttAttentionPush, seq_len), M(TrainTttAttentionPush, n_heads),
                  M(TrainTttAttentionPush, n_kv_heads), M(TrainTttAttentionPush, stride), M(TrainTttAttentionPush, step),
                  M(TrainTttAttentionPush, step_floats), M(TrainTttAttentionPush, accumulate)});
    check_struct(spirv, "TrainSwigluPush",
                 {M(TrainSwigluPush, rows), M(TrainSwigluPush, hidden), M(TrainSwigluPush, gelu)});
    check_struct(spirv, "TrainSmoothL1Push",
                 {M(TrainSmoothL1Push, rows), M(TrainSmoothL1Push, dim), M(TrainSmoothL1Push, stats_off),
                  M(TrainSmoothL1Push, beta), M(TrainSmoothL1Push, weight), M(TrainSmoothL1Push, accumulate)});
    check_struct(spirv, "TrainSoftCePush",
                 {M(TrainSoftCePush, vocab), M(TrainSoftCePush, stats_off), M(TrainSoftCePush, rank_off),
                  M(TrainSoftCePush, weight)});
    check_struct(spirv, "TrainAxpyPush",
                 {M(TrainAxpyPush, n), M(TrainAxpyPush, x_off), M(TrainAxpyPush, y_off), M(TrainAxpyPush, alpha),
                  M(TrainAxpyPush, beta)});
}

TEST_CASE("the probe's reflection finds a shifted member (the check can fail)", "[layouts]") {
    // A hand-written struct whose second member sits at 8 in SPIR-V terms but 4 in C++ terms.
    const auto spirv = reflect(gpu::embedded_shader(gpu::Shader::layout_probe).words);
    REQUIRE(spirv.count("KvCommit") == 1);
    const Members wrong = {{"kept", 0}, {"old_base", 8}, {"reserved", 8}, {"path", 16}};
    const SpirvStruct& s = spirv.at("KvCommit");
    int mismatches = 0;
    for (size_t m = 0; m < wrong.size(); ++m) mismatches += s.member_offset.at(int(m)) != wrong[m].second;
    CHECK(mismatches == 1);
}
