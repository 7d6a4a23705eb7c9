// Lossless speculative sampling, checked statistically: over 6,000 seeded generations the first
// tokens that Medusa (trained heads, a 3-level tree), a sampled draft tree and chain, and n-gram
// lookup emit follow the target's own distribution (chi-squared against the exact probabilities
// of the CPU reference), at T = 1 and at T = 0.7 with top-k, top-p and a repetition penalty; a
// sampler that forgets to take rejected mass out of the residual fails the same test with every
// drafter. The acceptance logic is the same whatever the engine, so the CPU reference runs these
// (and is the very model the expectations come from); tests/test_medusa.cpp shows its Medusa
// stage drafts what the GPU's does.
#include <catch2/catch.hpp>
#include <set>

#include <cmath>
#include <map>
#include <memory>

#include "decode/controlled_drafter.h"
#include "decode/draft_model_drafter.h"
#include "decode/eagle_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode_support.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "model/load_model.h"
#include "model/tokenizer.h"
#include "test_paths.h"
#include "trained_heads.h"

using namespace medusa;
using namespace medusa::test;

namespace {

// The deliberately broken rule: after a rejection the residual keeps the rejected mass, so later
// siblings are tested against, and the bonus drawn from, the full distribution.
class ForgetfulSampling final : public SpeculativeSampling {
protected:
    void reject(Residual&, int, const std::vector<float>&) const override {}
};

constexpr int kRuns = 6000, kBrokenRuns = 4000, kTokens = 4;
const SamplingParams kHot = {1.0f, 1.0f, 0};
const SamplingParams kShaped = {0.7f, 0.95f, 0, 40, 1.2f, 64, 0.05f};  // top-p, top-k, penalty, min-p: to p and q alike

struct ChiSquared {
    double statistic = 0;
    int dof = 0;
    double critical() const {  // Wilson-Hilferty approximation of the 99.9% quantile
        const double k = dof, z = 3.09;
        return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    }
};

using Continuations = std::map<std::vector<int>, double>;

// The target's probability of every kTokens-token continuation of `prompt` that expects at
// least 8 of `runs` hits, by walking the CPU reference's shaped distributions.
Continuations expected_continuations(const ModelFile& file, const std::vector<int>& prompt, SamplingParams s,
                                     int runs) {
    CpuReferenceModel cpu(file);
    const Sampler shaping(s);
    Continuations out;
    std::vector<int> seq = prompt;
    std::function<void(double)> walk = [&](double prob) {
        if (int(seq.size() - prompt.size()) == kTokens) {
            out[std::vector<int>(seq.begin() + prompt.size(), seq.end())] = prob;
            return;
        }
        cpu.forward(TokenBlock::causal(0, seq));
        const auto p = shaping.distribution(cpu.logits(int(seq.size()) - 1), seq);
        for (size_t t = 0; t < p.size(); ++t) {
            if (prob * p[t] * runs < 8) continue;
            seq.push_back(int(t));
            walk(prob * p[t]);
            seq.pop_back();
        }
    };
    walk(1.0);
    return out;
}

ChiSquared chi_squared(const Continuations& expected, const std::map<std::vector<int>, int>& counts, int runs) {
    ChiSquared c;
    double pooled_p = 1;
    int pooled_o = runs;
    for (const auto& [key, p] : expected) {
        auto it = counts.find(key);
        const int o = it == counts.end() ? 0 : it->second;
        c.statistic += (o - p * runs) * (o - p * runs) / (p * runs);
        pooled_p -= p;
        pooled_o -= o;
        ++c.dof;  // the explicit bins plus the pooled one, minus one
    }
    if (pooled_p * runs > 1e-9) c.statistic += (pooled_o - pooled_p * runs) * (pooled_o - pooled_p * runs) / (pooled_p * runs);
    return c;
}

// Seeded generations; the first kTokens tokens of each. Steps may draft deeper than kTokens.
std::map<std::vector<int>, int> sample_continuations(TreeRunner& runner, Drafter& drafter, SamplingParams s,
                                                     bool broken, const std::vector<int>& prompt, int runs,
                                                     int* deepest) {
    DecodeOptions o;
    o.max_new_tokens = kTokens + 4;
    o.sampling = s;
    o.rule = AcceptRule::Sample;
    SpeculativeDecoder d(runner, drafter, o);
    if (broken) d.set_rule(std::make_unique<ForgetfulSampling>());
    std::map<std::vector<int>, int> counts;
    for (int r = 0; r < runs; ++r) {
        d.reseed(1 + uint64_t(r) * 7919 + (broken ? 99 : 0));
        std::vector<int> out;
        d.generate(prompt, [&](const StepTrace& st) {
            // How deep this step's accepted drafts reach among the tested tokens.
            *deepest = std::max(*deepest, std::min(st.accepted, kTokens - int(out.size())));
            out.insert(out.end(), st.emitted.begin(), st.emitted.end());
            return int(out.size()) < kTokens;
        });
        REQUIRE(int(out.size()) >= kTokens);
        out.resize(kTokens);
        counts[out]++;
    }
    return counts;
}

// The good rule passes at every setting; the forgetful one fails. Some step must have accepted
// `min_depth` drafted tokens within the tested ones, so the check reaches that depth of the trees.
struct Setting {
    std::vector<int> prompt;
    SamplingParams sampling;
};

void check_lossless(const ModelFile& file, TreeRunner& runner, Drafter& drafter, const std::vector<Setting>& settings,
                    int min_depth = 3) {
    int deepest_of_all = 0;
    for (const auto& [prompt, s] : settings) {
        INFO("T " << s.temperature << ", top-k " << s.top_k << ", top-p " << s.top_p << ", penalty " << s.repeat_penalty);
        const Continuations e = expected_continuations(file, prompt, s, kRuns);
        REQUIRE(e.size() >= 15);
        int deepest = 0;
        const ChiSquared c = chi_squared(e, sample_continuations(runner, drafter, s, false, prompt, kRuns, &deepest), kRuns);
        INFO("chi2 " << c.statistic << " with " << c.dof << " dof, critical " << c.critical() << "; deepest accepted "
                     << deepest);
        WARN("T " << s.temperature << ": chi2 " << c.statistic << " with " << c.dof << " dof (critical "
                  << c.critical() << "), deepest accepted " << deepest);
        CHECK(c.statistic < c.critical());
        deepest_of_all = std::max(deepest_of_all, deepest);
    }
    CHECK(deepest_of_all >= min_depth);
    const auto& [prompt, s] = settings.front();
    const Continuations e = expected_continuations(file, prompt, s, kBrokenRuns);
    int deepest = 0;
    const ChiSquared c =
        chi_squared(e, sample_continuations(runner, drafter, s, true, prompt, kBrokenRuns, &deepest), kBrokenRuns);
    INFO("forgetful sampler: chi2 " << c.statistic << " with " << c.dof << " dof, critical " << c.critical());
    CHECK(c.statistic > c.critical());
}

std::vector<int> encode(const std::string& text) {
    return Tokenizer::from_file(model_path("tok512.model")).encode(text, true);
}

}  // namespace

TEST_CASE("Medusa speculative sampling with trained heads is lossless and a forgetful sampler is caught",
          "[sampling]") {
    const ModelFile& file = distill_fixture().file;
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    // Siblings at every level, three levels deep, in ten nodes.
    const MedusaTree tree = make_tree({{0}, {1}, {2}, {0, 0}, {0, 1}, {1, 0}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}});
    MedusaDrafter medusa(runner, file, trained_heads(), build_tree_buffers(tree, 10));
    // A confident start lets the heads be right three times in a row now and then.
    check_lossless(file, runner, medusa, {{encode("Once upon a time"), kHot}, {kStoryPrompts[2], kShaped}});
}

TEST_CASE("a sampled draft tree is lossless and a forgetful sampler is caught", "[sampling]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    const ModelFile draft_file = load_model(model_path("llama2xs.bin"));  // disagrees often: many rejections
    CpuReferenceModel cpu(file), draft(draft_file);
    CpuTreeRunner runner(cpu);
    DraftModelDrafter tree(draft, {.gamma = 3, .branches = 2});
    check_lossless(file, runner, tree, {{kStoryPrompts[2], kHot}, {kStoryPrompts[2], kShaped}});
}

TEST_CASE("a sampled draft chain is lossless and a forgetful sampler is caught", "[sampling]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    const ModelFile draft_file = load_model(model_path("llama2xs.bin"));
    CpuReferenceModel cpu(file), draft(draft_file);
    CpuTreeRunner runner(cpu);
    DraftModelDrafter chain(draft, {.gamma = 3});
    check_lossless(file, runner, chain, {{kStoryPrompts[2], kShaped}});
}

TEST_CASE("n-gram lookup with speculative sampling is lossless and a forgetful sampler is caught", "[sampling]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    NgramDrafter ngram({.max_tokens = 6, .branches = 2});
    // A retold story: the lookup finds the rest of the sentence in the prompt.
    const auto prompt = encode("Once upon a time, there was a little girl named Lily. She loved to play. "
                               "Once upon a time, there was a");
    check_lossless(file, runner, ngram, {{prompt, kHot}, {prompt, kShaped}});
}

TEST_CASE("auto's changing shapes keep speculative sampling lossless and a forgetful sampler is caught",
          "[sampling]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    const ModelFile draft_file = load_model(model_path("llama2xs.bin"));
    CpuReferenceModel cpu(file), draft(draft_file);
    CpuTreeRunner runner(cpu);
    NgramDrafter ngram({.max_tokens = 6, .branches = 2});
    DraftModelDrafter tree(draft, {.gamma = 3, .branches = 2});
    // Verification cheap enough that drafting pays, dear enough that the shape follows what the
    // controller has learnt of acceptance: it changes from step to step and run to run.
    CostModel costs;
    costs.verify = CostCurve({{1, 1.0}, {128, 1.0 + 0.1 * 127}});
    ControlledDrafter controlled({&ngram, &tree}, costs, {.learn_timing = false});
    const auto prompt = encode("Once upon a time, there was a little girl named Lily. She loved to play. "
                               "Once upon a time, there was a");
    // The shapes change from step to step: more than one drafter and more than one size.
    std::set<std::pair<DrafterKind, size_t>> shapes;
    DecodeOptions o;
    o.max_new_tokens = 60;
    o.sampling = kHot;
    o.rule = AcceptRule::Sample;
    SpeculativeDecoder d(runner, controlled, o);
    d.generate(prompt, [&](const StepTrace& st) { return shapes.insert({st.drafter, st.nodes.size()}), true; });
    CHECK(shapes.size() >= 3);
    check_lossless(file, runner, controlled, {{prompt, kHot}, {kStoryPrompts[2], kShaped}});
}

TEST_CASE("EAGLE drafting with speculative sampling is lossless and a forgetful sampler is caught", "[sampling]") {
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    auto layer = runner.eagle_runner(file, EagleLayer::init(file.config, 1));
    EagleDrafter eagle(*layer, {.top_k = 2, .depth = 3, .nodes = 6});
    check_lossless(file, runner, eagle, {{encode("Once upon a time"), kHot}, {kStoryPrompts[2], kShaped}}, 2);
}

TEST_CASE("EAGLE-3 drafting with speculative sampling is lossless and a forgetful sampler is caught", "[sampling]") {
    // A briefly trained layer fusing three layers, its reduced draft vocabulary mapped back to
    // the target's: drafts deep enough to be rejected in later rounds.
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    const EagleLayer& e3 = trained_eagle3();
    REQUIRE(e3.fuses());
    REQUIRE(e3.draft_vocab() < file.config.vocab_size);
    auto layer = runner.eagle_runner(file, e3);
    EagleDrafter eagle(*layer, {.top_k = 2, .depth = 3, .nodes = 6});
    check_lossless(file, runner, eagle, {{encode("Once upon a time"), kHot}, {kStoryPrompts[2], kShaped}}, 2);
}
