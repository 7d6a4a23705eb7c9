// The log-probabilities the API gives for each token: log softmax of the target's logits at the
// node the token follows, equal under every drafter to plain decoding's (the verify pass of a tree
// computes the same distribution as one token's pass), and equal to the CPU reference's own
// forward over the whole text.
#include <catch2/catch.hpp>

#include <cmath>

#include "decode/draft_model_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode/token_logprobs.h"
#include "decode_support.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "decode/tree.h"

using namespace medusa;
using namespace medusa::test;

namespace {

struct Logprobbed {
    std::vector<int> tokens;
    std::vector<TokenLogprobs> logprobs;
};

Logprobbed decode_with_logprobs(TreeRunner& runner, Drafter& drafter, const std::vector<int>& prompt, int n, int top) {
    DecodeOptions o = greedy_options(n);
    o.logprobs = top;
    SpeculativeDecoder d(runner, drafter, o);
    Logprobbed out;
    d.generate(prompt, [&](const StepTrace& st) {
        REQUIRE(st.logprobs.size() == st.emitted.size());
        out.tokens.insert(out.tokens.end(), st.emitted.begin(), st.emitted.end());
        out.logprobs.insert(out.logprobs.end(), st.logprobs.begin(), st.logprobs.end());
        return true;
    });
    return out;
}

// Same tokens, log-probabilities within `tol`, and the same likeliest tokens wherever two of them
// are not all but tied.
void check_same(const Logprobbed& a, const Logprobbed& b, float tol) {
    REQUIRE(a.tokens == b.tokens);
    REQUIRE(a.logprobs.size() == b.logprobs.size());
    for (size_t i = 0; i < a.logprobs.size(); ++i) {
        INFO("token " << i);
        const TokenLogprobs &x = a.logprobs[i], &y = b.logprobs[i];
        CHECK(x.token == a.tokens[i]);
        CHECK(std::fabs(x.logprob - y.logprob) < tol);
        REQUIRE(x.top.size() == y.top.size());
        for (size_t k = 0; k < x.top.size(); ++k) {
            CHECK(std::fabs(x.top[k].logprob - y.top[k].logprob) < tol);
            const bool near_tie = (k > 0 && x.top[k - 1].logprob - x.top[k].logprob < 1e-2f) ||
                                  (k + 1 < x.top.size() && x.top[k].logprob - x.top[k + 1].logprob < 1e-2f);
            if (!near_tie) CHECK(x.top[k].token == y.top[k].token);
        }
    }
}

}  // namespace

TEST_CASE("a token's log-probability is log softmax of the logits, with the likeliest tokens first", "[logprobs]") {
    const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
    const double z = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + std::exp(3.0));
    const TokenLogprobs l = token_logprobs(logits, 2, 3);
    CHECK(l.token == 2);
    CHECK(l.logprob == Approx(2.0 - z).epsilon(1e-6));
    REQUIRE(l.top.size() == 3);
    CHECK(l.top[0] == TopLogprob{1, float(3.0 - z)});  // a tie: the lower id first
    CHECK(l.top[1].token == 3);
    CHECK(l.top[2].token == 2);
    CHECK(token_logprobs(logits, 0, 0).top.empty());
    CHECK(token_logprobs(logits, 0, 9).top.size() == 4);
    // Large logits neither overflow nor lose the small differences.
    const TokenLogprobs big = token_logprobs(std::vector<float>{1000.0f, 999.0f}, 1, 1);
    CHECK(big.logprob == Approx(-std::log1p(std::exp(1.0))).epsilon(1e-5));
}

TEST_CASE("log-probabilities are the CPU reference's own, and every drafter's equal plain decoding's", "[logprobs]") {
    const std::vector<int>& prompt = kStoryPrompts[0];
    const int n = 40, top = 3;
    {
        // The CPU reference: the decoder's against one forward over the prompt and the whole text.
        const ModelFile file = load_model(model_path("stories260K.bin"));
        CpuReferenceModel cpu(file);
        CpuTreeRunner runner(cpu);
        NoDrafter plain;
        const Logprobbed got = decode_with_logprobs(runner, plain, prompt, n, top);
        std::vector<int> text = prompt;
        text.insert(text.end(), got.tokens.begin(), got.tokens.end() - 1);
        CpuReferenceModel whole(file);
        whole.forward(TokenBlock::causal(0, text));
        Logprobbed expected{got.tokens, {}};
        for (size_t i = 0; i < got.tokens.size(); ++i)
            expected.logprobs.push_back(token_logprobs(whole.logits(int(prompt.size() + i) - 1), got.tokens[i], top));
        check_same(got, expected, 1e-4f);
    }
    test::ValidationGuard guard;
    GpuTarget target("stories260K.bin"), draft("stories260K_q80.bin");
    NoDrafter plain;
    const Logprobbed reference = decode_with_logprobs(target.runner, plain, prompt, n, top);
    MedusaDrafter medusa(target.runner, target.file, MedusaHeads::init_from_model(target.file, 3),
                         build_tree_buffers(load_tree("dense:2,2,2"), 10));
    NgramDrafter ngram({.max_tokens = 8, .branches = 2});
    DraftModelDrafter chain(draft.model, {.gamma = 4});
    for (Drafter* d : std::initializer_list<Drafter*>{&medusa, &ngram, &chain}) {
        INFO(drafter_kind_name(d->kind()));
        const Logprobbed got = decode_with_logprobs(target.runner, *d, prompt, n, top);
        check_same(got, reference, 2e-3f);
    }
}
