// Draft-model drafting: its int8 copy is nearly always right, sampled drafts are reproducible
// for a seed, trees have the shape asked for, and a draft with another vocabulary is refused.
#include <catch2/catch.hpp>

#include <set>

#include "decode/draft_model_drafter.h"
#include "decode_support.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "model/load_model.h"
#include "model/synthetic_model.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

TEST_CASE("the int8 copy of the target drafts nearly every token right", "[draft]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft("stories260K_q80.bin");
    TreeRunner& runner = target.runner;
    DraftModelDrafter chain(draft.model, {.gamma = 4});
    GenerationStats s;
    decode(runner, chain, greedy_options(120), kStoryPrompts[0], &s);
    CHECK(s.acceptance() > 0.8);
    CHECK(s.tokens_per_step() > 3.0);
}

TEST_CASE("sampled draft speculation is seeded, reproducible and mostly accepts its int8 copy", "[draft]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft("stories260K_q80.bin");
    TreeRunner& runner = target.runner;
    for (int branches : {1, 2}) {
        CAPTURE(branches);
        DraftModelDrafter drafter(draft.model, {.gamma = 4, .branches = branches, .adaptive_gamma = true});
        DecodeOptions o;
        o.max_new_tokens = 60;
        o.sampling = {0.8f, 0.95f, 5, 40, 1.1f, 64};
        GenerationStats s;
        const auto a = decode(runner, drafter, o, kStoryPrompts[0], &s);
        CHECK(s.acceptance() > 0.6);
        CHECK(a == decode(runner, drafter, o, kStoryPrompts[0]));
        o.sampling.seed = 6;
        CHECK(a != decode(runner, drafter, o, kStoryPrompts[0]));
        CHECK(a.size() == 60);
    }
}

TEST_CASE("a draft tree expands the K likeliest nodes of each level into K distinct children", "[draft]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft("llama2xs.bin");
    TreeRunner& runner = target.runner;
    for (bool sampled : {false, true}) {
        CAPTURE(sampled);
        DraftModelDrafter drafter(draft.model, {.gamma = 3, .branches = 3});
        DecodeOptions o;
        o.max_new_tokens = 40;
        o.sampling = {sampled ? 1.0f : 0.0f, 1.0f, 2};
        std::vector<StepTrace> steps;
        decode(runner, drafter, o, kStoryPrompts[1], nullptr, &steps);
        int full_trees = 0;
        for (const StepTrace& s : steps) {
            std::map<int, std::set<int>> children;  // parent -> child tokens
            std::map<int, int> per_depth_parents;
            int depth = 0;
            for (size_t i = 1; i < s.nodes.size(); ++i) {
                const auto& n = s.nodes[i];
                CHECK(children[n.parent].insert(n.token).second);  // siblings are distinct tokens
                CHECK(n.sampled == sampled);
                depth = std::max(depth, n.depth);
            }
            std::map<int, std::set<int>> parents_at_depth;
            for (const auto& [p, c] : children) {
                CHECK(c.size() <= 3);
                parents_at_depth[s.nodes[p].depth].insert(p);
            }
            for (const auto& [d, ps] : parents_at_depth) CHECK(ps.size() <= 3);
            CHECK(depth <= 3);
            full_trees += depth == 3 && s.nodes.size() == 1 + 3 + 9 + 9;
        }
        CHECK(full_trees > 0);
    }
}

TEST_CASE("a draft model with another vocabulary is refused", "[draft]") {
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile other = make_synthetic_model("stories15m", DType::F32);  // 32000-token vocabulary
    try {
        check_draft_compatible(target_file.config, other.config, "stories260K.bin", "synthetic:stories15m");
        FAIL("no error");
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        CHECK(msg.find("stories260K.bin") != std::string::npos);
        CHECK(msg.find("synthetic:stories15m") != std::string::npos);
        CHECK(msg.find("32000") != std::string::npos);
        CHECK(msg.find("512") != std::string::npos);
        CHECK(msg.find("tokenizer") != std::string::npos);
    }
}

TEST_CASE("a sampled step that rejects its draft records p, q and the residual its token was drawn from", "[draft]") {
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft("llama2xs.bin");  // another model: rejections
    DraftModelDrafter drafter(draft.model, {.gamma = 3});
    DecodeOptions o;
    o.max_new_tokens = 60;
    o.sampling = {1.0f, 1.0f, 3};
    std::vector<StepTrace> steps;
    decode(target.runner, drafter, o, kStoryPrompts[1], nullptr, &steps);
    int checked = 0;
    for (const StepTrace& s : steps) {
        int rejected = -1;  // the draft token tried and refused after the accepted path (a chain: one)
        for (const TreeNodeTrace& n : s.nodes)
            if (n.parent == s.path.back() && n.tried && !n.passes) rejected = n.token;
        CHECK(s.rejection.empty() == (rejected < 0));
        if (rejected < 0) continue;
        ++checked;
        CAPTURE(s.step);
        CHECK(int(s.rejection.size()) <= StepTrace::kRejectionBars);
        auto bar = [&](int token) -> const RejectionBar* {
            for (const RejectionBar& b : s.rejection)
                if (b.token == token) return &b;
            return nullptr;
        };
        REQUIRE(bar(s.bonus));
        REQUIRE(bar(rejected));
        CHECK(bar(s.bonus)->residual > 0);  // drawn from the residual
        for (const RejectionBar& b : s.rejection) {
            CHECK((b.p >= 0 && b.p <= 1 && b.q >= 0 && b.q <= 1 && b.residual >= 0 && b.residual <= 1));
            if (b.p <= b.q) CHECK(b.residual == 0.0f);  // norm(max(0, p - q))
        }
        // One rejection: the residual is max(0, p - q) up to one factor, the same for every token.
        const RejectionBar& d = *bar(s.bonus);
        for (const RejectionBar& b : s.rejection)
            if (b.residual > 1e-4f && d.residual > 1e-4f)
                CHECK(b.residual / d.residual == Approx((b.p - b.q) / (d.p - d.q)).epsilon(1e-3));
    }
    CHECK(checked > 0);
}
