// The step controller on synthetic cost and acceptance tables: the arithmetic of shaping a step,
// and the choices it makes with real drafters (n-gram lookup, Medusa heads on the CPU reference)
// when verifying is expensive or free, and when the text turns to a copied passage.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "decode/controlled_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode_support.h"
#include "cache_env.h"
#include "model/load_model.h"
#include "setup/cost_measurement.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;

namespace {

// A verify pass of T tokens costing `first` + `per_token` * (T - 1) ms, up to 128 tokens.
CostModel synthetic_costs(double first, double per_token) {
    CostModel m;
    m.verify = CostCurve({{1, first}, {128, first + per_token * 127}});
    m.source = "synthetic";
    return m;
}

DraftContext context_of(const std::vector<int>& seq, Sampler& s) {
    DraftContext c;
    c.sequence = seq;
    c.base = int(seq.size()) - 1;
    c.max_nodes = 64;
    c.max_depth = 64;
    c.sampler = &s;
    return c;
}

// What verifying `tree` would say if none of its drafts were the model's.
VerifiedStep nothing_accepted(const CandidateTree& tree, int base) {
    VerifiedStep v;
    v.base = base;
    v.tree = tree;
    v.verdict.path = {0};
    v.verdict.bonus = 1;
    v.tokens = {1};
    return v;
}

// A sequence whose last four tokens occurred before, followed by eight more.
const std::vector<int> kRepeating = {1, 10, 11, 12, 13, 20, 21, 22, 23, 24, 25, 26, 27, 30, 10, 11, 12, 13};

}  // namespace

TEST_CASE("a tree plan keeps the shape with the most expected tokens per millisecond", "[controller]") {
    const std::vector<int> chain = {-1, 0, 1, 2};
    const std::vector<double> p = {1.0, 0.9, 0.81, 0.729};
    // Free verification: every drafted node pays.
    TreePlan free = plan_tree(chain, p, true, [](int) { return 1.0; }, 0.0);
    CHECK(free.kept == std::vector<int>{0, 1, 2, 3});
    CHECK(free.expected_tokens == Approx(3.439));
    // Each token costs as much as the first: 1.9 tokens in 2 ms beats 2.71 in 3 and 3.44 in 4.
    TreePlan linear = plan_tree(chain, p, true, [](int n) { return double(n); }, 0.0);
    CHECK(linear.kept == std::vector<int>{0, 1});
    CHECK(linear.expected_ms == Approx(2.0));
    // Two children of the root, the second likelier: any subtree keeps it, a prefix cannot.
    const std::vector<int> fan = {-1, 0, 0};
    const std::vector<double> q = {1.0, 0.2, 0.7};
    auto two = [](int n) { return n <= 2 ? 1.0 : 10.0; };
    CHECK(plan_tree(fan, q, true, two, 0.0).kept == std::vector<int>{0, 2});
    CHECK(plan_tree(fan, q, false, two, 0.0).kept == std::vector<int>{0, 1});
}

TEST_CASE("a level plan drafts deeper when levels are cheap and stops when they are not", "[controller]") {
    const std::vector<double> levels(8, 0.9);
    const auto flat = [](int) { return 1.0; };
    CHECK(plan_levels(DrafterKind::DraftModel, levels, 0.0, flat, 8).depth == 8);
    CHECK(plan_levels(DrafterKind::DraftModel, levels, 0.0, flat, 3).depth == 3);
    const ShapeOption costly = plan_levels(DrafterKind::DraftModel, levels, 5.0, flat, 8);
    CHECK(costly.depth == 1);  // the best drafted shape; whether it beats plain decoding is the controller's call
    CHECK(costly.tokens_per_ms() < 1.0);
    CHECK(shape_sizes(12) == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12});
}

TEST_CASE("with free verification the controller verifies the whole n-gram continuation", "[controller]") {
    NgramDrafter ngram({.max_tokens = 8});
    ControlledDrafter c({&ngram}, synthetic_costs(1.0, 0.0), {.learn_timing = false});
    Sampler s({0.0f, 1.0f, 0});
    const CandidateTree t = c.propose(context_of(kRepeating, s));
    CHECK(t.size() == 9);
    CHECK(t.token[1] == 20);
    REQUIRE(c.control());
    CHECK(c.control()->reason == ControlReason::Pays);
    CHECK(c.control()->choice().drafter == DrafterKind::Ngram);
    CHECK(c.control()->choice().nodes == 9);
}

TEST_CASE("expensive verification and rejected drafts make the controller decode plainly", "[controller]") {
    NgramDrafter ngram({.max_tokens = 8});
    ControlledDrafter c({&ngram}, synthetic_costs(1.0, 0.5), {.learn_timing = false});
    Sampler s({0.0f, 1.0f, 0});
    // At first the prior says a four-token match is worth drafting.
    CHECK(c.propose(context_of(kRepeating, s)).size() > 1);
    c.verified(nothing_accepted(c.propose(context_of(kRepeating, s)), int(kRepeating.size()) - 1));
    for (int i = 0; i < 30; ++i) {
        const CandidateTree t = c.propose(context_of(kRepeating, s));
        if (t.size() == 1) break;
        c.verified(nothing_accepted(t, int(kRepeating.size()) - 1));
    }
    const CandidateTree t = c.propose(context_of(kRepeating, s));
    CHECK(t.size() == 1);
    CHECK(c.control()->reason == ControlReason::NothingPays);
    CHECK(c.control()->weighed.size() == 2);  // it still weighed the lookup's shape
    CHECK(c.acceptance(0).node(1, 4) < 0.5);  // down from the prior of 0.8
}

TEST_CASE("a controller that may not drop its drafter verifies the best drafted shape where plain would pay", "[controller]") {
    // The same costs and rejections that make the controller above decode plainly.
    NgramDrafter ngram({.max_tokens = 8});
    ControlledDrafter c({&ngram}, synthetic_costs(1.0, 0.5), {.learn_timing = false, .always_draft = true});
    Sampler s({0.0f, 1.0f, 0});
    const int base = int(kRepeating.size()) - 1;
    for (int i = 0; i < 30; ++i) {
        const CandidateTree t = c.propose(context_of(kRepeating, s));
        REQUIRE(t.size() > 1);  // every step drafts
        c.verified(nothing_accepted(t, base));
    }
    const CandidateTree t = c.propose(context_of(kRepeating, s));
    const ControlTrace& trace = *c.control();
    CHECK(trace.reason == ControlReason::DraftedAnyway);
    REQUIRE(trace.weighed.size() == 2);
    CHECK(trace.chosen == 1);
    CHECK(trace.weighed[1].tokens_per_ms() < trace.weighed[0].tokens_per_ms());  // plain was expected to pay better
    // Shaped all the same: the rejections cut the eight-token continuation to its best prefix.
    CHECK(t.size() == trace.choice().nodes);
    CHECK(t.size() < 9);
}

TEST_CASE("auto goes to n-gram lookup on a copied passage and to the heads elsewhere", "[controller]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 2);
    const TreeBuffers tree = build_tree_buffers(load_tree("dense:2,2"), 10);
    // The model's own story, then its first words again: it retells it, which the lookup finds.
    const std::vector<int> story_start = kStoryPrompts[0];
    std::vector<int> story = story_start;
    const auto told = greedy_ar(cpu, story_start, 80);
    story.insert(story.end(), told.begin(), told.end());
    std::vector<int> retell = story;
    retell.insert(retell.end(), story_start.begin() + 1, story_start.end());

    auto steps_by_drafter = [&](const std::vector<int>& prompt, std::map<DrafterKind, int>& by) {
        NgramDrafter ngram({.max_tokens = 8});
        MedusaDrafter medusa(runner, file, heads, tree);
        ControlledDrafter c({&ngram, &medusa}, synthetic_costs(1.0, 0.15), {.learn_timing = false});
        std::vector<StepTrace> steps;
        const auto got = decode(runner, c, greedy_options(40), prompt, nullptr, &steps);
        CHECK(got == greedy_ar(cpu, prompt, 40));
        for (const auto& st : steps) ++by[st.drafter];
    };
    std::map<DrafterKind, int> copied, free;
    steps_by_drafter(retell, copied);
    steps_by_drafter(story_start, free);
    INFO("copied: n-gram " << copied[DrafterKind::Ngram] << ", medusa " << copied[DrafterKind::Medusa] << "; free: n-gram "
                           << free[DrafterKind::Ngram] << ", medusa " << free[DrafterKind::Medusa]);
    CHECK(copied[DrafterKind::Ngram] > copied[DrafterKind::Medusa]);
    CHECK(free[DrafterKind::Medusa] > free[DrafterKind::Ngram]);
}

TEST_CASE("a cost model round-trips through its JSON and a malformed one is named", "[controller]") {
    const CostModel m = synthetic_costs(2.0, 0.5);
    const CostModel back = CostModel::from_json(m.to_json(), "cost.json");
    CHECK(back.verify.at(1) == Approx(2.0));
    CHECK(back.verify.at(65) == Approx(34.0));
    CHECK(back.verify_ratio(128) == Approx((2.0 + 0.5 * 127) / 2.0));
    CHECK_THROWS_WITH(CostModel::from_json(nlohmann::json{{"verify_ms", 3}}, "cost.json"),
                      Catch::Contains("cost.json") && Catch::Contains("verify_ms"));
    CHECK_THROWS_WITH(
        CostModel::from_json(nlohmann::json::parse(R"({"verify_ms":[{"tokens":2,"ms":1},{"tokens":1,"ms":1}]})"),
                             "cost.json"),
        Catch::Contains("increase"));
}

TEST_CASE("a missing cost model entry is measured and kept", "[controller]") {
    const medusa::test::TempDir dir("cost-cache");
    const medusa::test::ScopedCacheDir cache(dir.path.string());
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    const DraftingTarget target{.file = file, .runner = runner};
    // Nothing cached: measured (sizes up to 64), then read back from the file unchanged.
    const CostModel measured = target_costs(target);
    CHECK(measured.source == "measured");
    CHECK(measured.verify.points().back().first == 64);
    const CostModel cached = target_costs(target);
    CHECK(cached.source == cost_model_path());
    CHECK(cached.verify.at(8) == measured.verify.at(8));
    CHECK(drafter_cost_ms(target, "test", [] { return 1.25; }) == 1.25);
    CHECK(drafter_cost_ms(target, "test", [] { return 9.0; }) == 1.25);  // kept from the first call
}
