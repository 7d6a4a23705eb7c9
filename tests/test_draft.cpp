// Draft-model speculative decoding: greedy equals plain greedy decoding token for token, rejection
// sampling keeps the target's own distribution (chi-squared over seeded runs) while a broken
// variant without residual resampling is caught, and a draft with another vocabulary is refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "decode/draft_decoder.h"
#include "gpu_fixture.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/synthetic_model.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::gpu_context;
using medusa::test::greedy_ar;
using medusa::test::model_path;

namespace {

const std::vector<std::vector<int>> kPrompts = {{1, 403, 407, 261, 378}, {1, 70, 81}, {1, 339, 16, 269, 290, 3}};

std::vector<int> run_draft(DraftDecoder& d, const std::vector<int>& prompt, size_t stop_after = SIZE_MAX) {
    std::vector<int> out;
    d.generate(prompt, [&](const StepTrace& st) {
        out.insert(out.end(), st.emitted.begin(), st.emitted.end());
        return out.size() < stop_after;
    });
    return out;
}

}  // namespace

TEST_CASE("greedy draft speculation reproduces greedy autoregressive decoding", "[draft]") {
    test::ValidationGuard guard;
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    GpuModel target(gpu_context(), target_file);
    for (const char* draft_name : {"llama2xs.bin", "stories260K_q80.bin"}) {
        ModelFile draft_file = load_model(model_path(draft_name));
        GpuModel draft(gpu_context(), draft_file);
        for (int gamma : {1, 3, 6}) {
            for (bool adaptive : {false, true}) {
                if (adaptive && gamma != 3) continue;
                DraftOptions o;
                o.gamma = gamma;
                o.adaptive_gamma = adaptive;
                o.max_new_tokens = 80;
                DraftDecoder d(target, draft, o);
                for (const auto& prompt : kPrompts) {
                    INFO("draft " << draft_name << ", gamma " << gamma << (adaptive ? " adaptive" : "")
                                  << ", prompt of " << prompt.size());
                    const auto expected = greedy_ar(target, prompt, o.max_new_tokens);
                    const auto got = run_draft(d, prompt);
                    CHECK(got == expected);
                    const DraftStats& s = d.draft_stats();
                    CHECK(s.accepted <= s.drafted);
                    CHECK(s.tau() >= 1.0);
                }
            }
        }
        // The int8 copy agrees with its original nearly always; the other model much less.
        if (std::string(draft_name) == "stories260K_q80.bin") {
            DraftOptions o;
            o.gamma = 4;
            DraftDecoder d(target, draft, o);
            run_draft(d, kPrompts[0]);
            CHECK(d.draft_stats().alpha() > 0.8);
        }
    }
}

TEST_CASE("greedy draft speculation runs to the end of the context past the draft's", "[draft]") {
    // llama2xs has a 256-token context, stories260K 512: past 256 the decoder verifies alone.
    test::ValidationGuard guard;
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile draft_file = load_model(model_path("llama2xs.bin"));
    GpuModel target(gpu_context(), target_file), draft(gpu_context(), draft_file);
    DraftOptions o;
    o.gamma = 5;
    o.adaptive_gamma = true;
    o.max_new_tokens = 600;
    DraftDecoder d(target, draft, o);
    const auto expected = greedy_ar(target, kPrompts[1], o.max_new_tokens);
    CHECK(expected.size() == size_t(512 - 3 + 1));
    GenerationStats stats;
    std::vector<int> got;
    stats = d.generate(kPrompts[1], [&](const StepTrace& st) {
        got.insert(got.end(), st.emitted.begin(), st.emitted.end());
        return true;
    });
    CHECK(got == expected);
    CHECK(stats.stop_reason == "context");
}

TEST_CASE("sampled draft speculation on the GPU is seeded and mostly accepts its int8 copy", "[draft]") {
    test::ValidationGuard guard;
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile draft_file = load_model(model_path("stories260K_q80.bin"));
    GpuModel target(gpu_context(), target_file), draft(gpu_context(), draft_file);
    DraftOptions o;
    o.rule = DraftRule::Sample;
    o.temperature = 0.8f;
    o.top_p = 0.95f;
    o.seed = 5;
    o.max_new_tokens = 60;
    o.adaptive_gamma = true;
    DraftDecoder d(target, draft, o);
    const auto a = run_draft(d, kPrompts[0]);
    CHECK(d.draft_stats().alpha() > 0.7);
    const auto b = run_draft(d, kPrompts[0]);
    CHECK(a == b);
    CHECK(a.size() == 60);
}

namespace {

// Below 1, with top-k and nucleus cuts and a repetition penalty, so all are checked to apply to p
// and q alike.
constexpr float kTemperature = 0.8f, kTopP = 0.95f, kPenalty = 1.3f;
constexpr int kTopK = 40;

SamplingParams sampling() { return {kTemperature, kTopP, 0, kTopK, kPenalty, 64}; }

// Chi-squared statistic of observed triples against expected probabilities; rare ones pooled.
struct TripleTest {
    std::map<std::vector<int>, double> expected_p;
    double statistic(const std::map<std::vector<int>, int>& counts, int runs, int* dof) const {
        double chi2 = 0, pooled_p = 1;
        int pooled_o = runs;
        for (const auto& [key, p] : expected_p) {
            auto it = counts.find(key);
            const int o = it == counts.end() ? 0 : it->second;
            chi2 += (o - p * runs) * (o - p * runs) / (p * runs);
            pooled_p -= p;
            pooled_o -= o;
        }
        if (pooled_p * runs > 0) chi2 += (pooled_o - pooled_p * runs) * (pooled_o - pooled_p * runs) / (pooled_p * runs);
        *dof = int(expected_p.size());
        return chi2;
    }
    static double critical(int dof) {  // Wilson-Hilferty, 99.9%
        const double k = dof, z = 3.09;
        return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    }
};

std::vector<float> next_dist(CpuReferenceModel& m, const std::vector<int>& seq) {
    m.forward(TokenBlock::causal(0, seq));
    return Sampler(sampling()).distribution(m.logits(int(seq.size()) - 1), seq);
}

std::vector<int> top(const std::vector<float>& p, int k) {
    std::vector<int> order(p.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return p[a] > p[b]; });
    order.resize(k);
    return order;
}

// The target's own probability of each first three tokens, for bins expecting >= 8 hits.
TripleTest expected_triples(const ModelFile& file, const std::vector<int>& prompt, int runs) {
    CpuReferenceModel cpu(file);
    TripleTest t;
    const auto p1 = next_dist(cpu, prompt);
    for (int t1 : top(p1, 5)) {
        auto s1 = prompt;
        s1.push_back(t1);
        const auto p2 = next_dist(cpu, s1);
        for (int t2 : top(p2, 5)) {
            if (p1[t1] * p2[t2] * runs < 8) continue;
            auto s2 = s1;
            s2.push_back(t2);
            const auto p3 = next_dist(cpu, s2);
            for (size_t t3 = 0; t3 < p3.size(); ++t3)
                if (double(p1[t1]) * p2[t2] * p3[t3] * runs >= 8)
                    t.expected_p[{t1, t2, int(t3)}] = double(p1[t1]) * p2[t2] * p3[t3];
        }
    }
    return t;
}

// Runs alternate gamma 1 (tests the bonus token) and gamma 2 (tests a second drafted position).
std::map<std::vector<int>, int> sample_triples(LanguageModel& target, LanguageModel& draft, DraftRule rule,
                                               const std::vector<int>& prompt, int runs, uint64_t seed0) {
    DraftOptions o;
    o.rule = rule;
    o.temperature = kTemperature;
    o.top_p = kTopP;
    o.top_k = kTopK;
    o.repeat_penalty = kPenalty;
    o.max_new_tokens = 64;
    o.gamma = 1;
    DraftDecoder g1(target, draft, o);
    o.gamma = 2;
    DraftDecoder g2(target, draft, o);
    std::map<std::vector<int>, int> counts;
    for (int r = 0; r < runs; ++r) {
        DraftDecoder& d = r % 2 ? g2 : g1;
        d.reseed(seed0 + uint64_t(r) * 7919);
        auto out = run_draft(d, prompt, 3);
        REQUIRE(out.size() >= 3);
        out.resize(3);
        counts[out]++;
    }
    return counts;
}

}  // namespace

TEST_CASE("draft rejection sampling is lossless; resampling without the residual is caught", "[draft][sampling]") {
    // The acceptance logic runs on the CPU whatever the engine; the CPU reference engine spares
    // 14,000 runs the Vulkan submits (~40 s here) and is the very model the expectations use.
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile draft_file = load_model(model_path("llama2xs.bin"));  // disagrees often: many rejections
    CpuReferenceModel target(target_file), draft(draft_file);
    const std::vector<int>& prompt = kPrompts[2];  // an uncertain continuation: ~75 bins
    {
        const int runs = 10000;
        TripleTest t = expected_triples(target_file, prompt, runs);
        REQUIRE(t.expected_p.size() >= 30);
        int dof = 0;
        const double chi2 = t.statistic(sample_triples(target, draft, DraftRule::Sample, prompt, runs, 1), runs, &dof);
        INFO("chi2 " << chi2 << " with " << dof << " dof, critical " << TripleTest::critical(dof));
        CHECK(chi2 < TripleTest::critical(dof));
    }
    {
        const int runs = 4000;
        TripleTest t = expected_triples(target_file, prompt, runs);
        int dof = 0;
        const double chi2 =
            t.statistic(sample_triples(target, draft, DraftRule::SampleWithoutResidual, prompt, runs, 99), runs, &dof);
        INFO("broken variant: chi2 " << chi2 << " with " << dof << " dof, critical " << TripleTest::critical(dof));
        CHECK(chi2 > TripleTest::critical(dof));
    }
}

TEST_CASE("greedy draft speculation with a repetition penalty reproduces penalised greedy decoding", "[draft]") {
    test::ValidationGuard guard;
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile draft_file = load_model(model_path("stories260K_q80.bin"));
    GpuModel target(gpu_context(), target_file), draft(gpu_context(), draft_file);
    GenerationOptions ar;
    ar.max_new_tokens = 80;
    ar.sampling = {0.0f, 1.0f, 0, 0, 1.5f, 32};
    std::vector<int> expected, plain;
    generate_autoregressive(target, kPrompts[0], ar, [&](int t) { return expected.push_back(t), true; });
    plain = greedy_ar(target, kPrompts[0], 80);
    REQUIRE(expected != plain);  // the penalty changes the text, so the comparison below means something
    DraftOptions o;
    o.gamma = 4;
    o.max_new_tokens = 80;
    o.repeat_penalty = 1.5f;
    o.repeat_last_n = 32;
    DraftDecoder d(target, draft, o);
    CHECK(run_draft(d, kPrompts[0]) == expected);
}

TEST_CASE("a draft model with another vocabulary is refused", "[draft]") {
    ModelFile target_file = load_model(model_path("stories260K.bin"));
    ModelFile other = make_synthetic_model("stories15m", DType::F32);  // 32000-token vocabulary
    CpuReferenceModel target(target_file), draft(other);
    try {
        DraftDecoder d(target, draft, {});
        FAIL("accepted a 32000-token draft for a 512-token target");
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        CHECK(msg.find("32000") != std::string::npos);
        CHECK(msg.find("512") != std::string::npos);
        CHECK(msg.find("tokenizer") != std::string::npos);
    }
    try {
        check_draft_compatible(target_file.config, other.config, "stories260K.bin", "synthetic:stories15m");
        FAIL("no error");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("stories260K.bin") != std::string::npos);
        CHECK(std::string(e.what()).find("synthetic:stories15m") != std::string::npos);
    }
}
