// Lossless speculative sampling: over many seeded runs, the first two tokens Medusa emits
// follow the model's own distribution (chi-squared test), and a deliberately broken sampler
// (bonus drawn from the full distribution instead of the residual) fails the same test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "decode/medusa_decoder.h"
#include "decode/sampler.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "test_paths.h"

using namespace medusa;
using medusa::test::gpu_context;
using medusa::test::model_path;

namespace {

const std::vector<int> kPrompt = {1, 403, 407, 261, 378};
constexpr float kTemperature = 1.0f;

struct ChiSquared {
    double statistic = 0;
    int dof = 0;
    // Wilson-Hilferty approximation of the 99.9% quantile.
    double critical() const {
        const double k = dof, z = 3.09;
        return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
    }
};

// Expected probability of each (t1, t2) pair from the CPU reference; rare pairs are pooled.
struct PairModel {
    std::map<std::pair<int, int>, double> pair_p;  // bins with enough expected mass
    std::vector<int> top_first;
    ChiSquared test(const std::map<std::pair<int, int>, int>& counts, int runs) const {
        ChiSquared c;
        double pooled_expected = 1.0;
        int pooled_observed = runs;
        for (const auto& [pair, p] : pair_p) {
            auto it = counts.find(pair);
            const int o = it == counts.end() ? 0 : it->second;
            const double e = p * runs;
            c.statistic += (o - e) * (o - e) / e;
            pooled_expected -= p;
            pooled_observed -= o;
            ++c.dof;
        }
        const double e = pooled_expected * runs;
        if (e > 0) c.statistic += (pooled_observed - e) * (pooled_observed - e) / e;
        return c;  // bins - 1 degrees of freedom: the explicit bins plus the pooled one, minus one
    }
};

PairModel expected_pairs(const ModelFile& file, int runs) {
    CpuReferenceModel cpu(file);
    Sampler dist({kTemperature, 1.0f, 0});
    cpu.forward(TokenBlock::causal(0, kPrompt));
    auto p1 = dist.distribution(cpu.logits(int(kPrompt.size()) - 1));
    std::vector<int> order(p1.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return p1[a] > p1[b]; });
    PairModel m;
    for (int k = 0; k < 6; ++k) {
        const int t1 = order[k];
        if (p1[t1] * runs < 20) break;
        std::vector<int> seq = kPrompt;
        seq.push_back(t1);
        cpu.forward(TokenBlock::causal(0, seq));
        auto p2 = dist.distribution(cpu.logits(int(seq.size()) - 1));
        for (size_t t2 = 0; t2 < p2.size(); ++t2)
            if (p1[t1] * p2[t2] * runs >= 8) m.pair_p[{t1, int(t2)}] = double(p1[t1]) * p2[t2];
        m.top_first.push_back(t1);
    }
    return m;
}

std::map<std::pair<int, int>, int> sample_pairs(MedusaDecoder& d, int runs, uint64_t seed0) {
    std::map<std::pair<int, int>, int> counts;
    for (int r = 0; r < runs; ++r) {
        d.reseed(seed0 + uint64_t(r) * 7919);
        std::vector<int> out;
        d.generate(kPrompt, [&](const StepTrace& st) {
            out.insert(out.end(), st.emitted.begin(), st.emitted.end());
            return true;
        });
        REQUIRE(out.size() >= 2);
        counts[{out[0], out[1]}]++;
    }
    return counts;
}

}  // namespace

TEST_CASE("Medusa speculative sampling is lossless; a broken variant is caught", "[medusa][sampling]") {
    test::ValidationGuard guard;
    ModelFile file = load_model(model_path("stories260K.bin"));
    GpuModel gpu(gpu_context(), file);
    const MedusaHeads heads = MedusaHeads::init_from_model(file, 4);
    // Three children at the root and two below each: sibling rejection and depth both exercised.
    TreeBuffers tree = build_tree_buffers(load_tree("dense:3,2"), 10);
    MedusaOptions o;
    o.rule = AcceptRule::Sample;
    o.temperature = kTemperature;
    o.max_new_tokens = 2;

    const int runs = 10000;
    PairModel expected = expected_pairs(file, runs);
    REQUIRE(expected.pair_p.size() >= 5);
    {
        MedusaDecoder d(gpu, file, heads, tree, o);
        ChiSquared c = expected.test(sample_pairs(d, runs, 1), runs);
        INFO("chi2 " << c.statistic << " with " << c.dof << " dof, critical " << c.critical());
        CHECK(c.statistic < c.critical());
    }
    {
        o.rule = AcceptRule::SampleWithoutResidual;
        MedusaDecoder d(gpu, file, heads, tree, o);
        const int broken_runs = 3000;
        PairModel e = expected_pairs(file, broken_runs);
        ChiSquared c = e.test(sample_pairs(d, broken_runs, 99), broken_runs);
        INFO("broken sampler: chi2 " << c.statistic << " with " << c.dof << " dof, critical " << c.critical());
        CHECK(c.statistic > c.critical());
    }
}
