// Token colours and teaching captions come from the trace alone; check them on hand-made steps.
#include <catch2/catch.hpp>

#include "step_explain.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

// root -> a (rank 0) -> b (rank 0); root -> c (rank 1). Accepted: a, b; bonus: d.
StepRecord three_token_step() {
    StepRecord r;
    r.trace.step = 4;
    r.trace.drafter = DrafterKind::Medusa;
    r.trace.nodes.resize(4);
    r.trace.nodes[1].parent = 0, r.trace.nodes[1].depth = 1, r.trace.nodes[1].rank = 0;
    r.trace.nodes[2].parent = 0, r.trace.nodes[2].depth = 1, r.trace.nodes[2].rank = 1;
    r.trace.nodes[3].parent = 1, r.trace.nodes[3].depth = 2, r.trace.nodes[3].rank = 0;
    r.trace.path = {0, 1, 3};
    r.trace.accepted = 2;
    r.trace.bonus = 9;
    r.trace.emitted = {5, 6, 9};
    r.node_text = {" time", " upon", " there", " a"};
    r.bonus_text = " little";
    return r;
}

}  // namespace

TEST_CASE("emitted tokens are coloured by the head that guessed them, the last by the model", "[chat]") {
    StepRecord r = three_token_step();
    CHECK(token_origin(r.trace, 0) == 1);
    CHECK(token_origin(r.trace, 1) == 2);
    CHECK(token_origin(r.trace, 2) == 0);
    StepTrace plain;
    plain.emitted = {3};
    CHECK(token_origin(plain, 0) == 0);
}

TEST_CASE("the caption names the accepted guesses, their ranks and the count", "[chat]") {
    const std::string c = step_caption(three_token_step());
    CHECK_THAT(c, Catch::Contains("head 1 guessed ' upon' (rank 1)"));
    CHECK_THAT(c, Catch::Contains("head 2 guessed ' a' (rank 1)"));
    CHECK_THAT(c, Catch::Contains("the model agreed"));
    CHECK_THAT(c, Catch::Contains("3 tokens this step"));
}

TEST_CASE("the caption says what the model chose when every guess was rejected", "[chat]") {
    StepRecord r = three_token_step();
    r.trace.path = {0};
    r.trace.accepted = 0;
    r.trace.emitted = {9};
    const std::string c = step_caption(r);
    CHECK_THAT(c, Catch::Contains("head 1 guessed ' upon' but the model chose ' little'"));
    CHECK_THAT(c, Catch::Contains("1 token this step"));
    CHECK_THAT(c, !Catch::Contains("agreed"));
}

namespace {

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

}  // namespace

TEST_CASE("a node's explanation gives the number that decided it under each rule", "[chat]") {
    StepRecord r = three_token_step();
    r.greedy_text = {"", " upon", " upon", " a"};
    r.trace.rule = AcceptRule::Greedy;
    for (auto& n : r.trace.nodes) n.tried = true;
    r.trace.nodes[1].accepted = r.trace.nodes[3].accepted = true;
    r.trace.nodes[1].passes = r.trace.nodes[3].passes = true;
    r.trace.nodes[0].accepted = true;
    CHECK_THAT(joined(node_explanation(r, 2)), Catch::Contains("fails: the model's own choice here is ' upon'"));
    CHECK_THAT(joined(node_explanation(r, 1)), Catch::Contains("ACCEPTED"));

    r.trace.rule = AcceptRule::Typical;
    r.trace.nodes[2].model_prob = 0.05f;
    r.trace.nodes[2].limit = 0.09f;
    CHECK_THAT(joined(node_explanation(r, 2)), Catch::Contains("fails: p 0.050 <= threshold 0.090"));

    r.trace.rule = AcceptRule::Sample;
    r.trace.nodes[1].draw = 0.25f, r.trace.nodes[1].ratio = 0.80f;
    r.trace.nodes[2].tried = false;  // its sibling (node 1) was tried first and accepted
    r.trace.nodes[3].draw = 0.90f, r.trace.nodes[3].ratio = 0.40f, r.trace.nodes[3].passes = false;
    r.trace.nodes[3].accepted = false;
    CHECK_THAT(joined(node_explanation(r, 1)), Catch::Contains("accepted: drawn u = 0.250 < r(x)/q(x) = 0.800"));
    CHECK_THAT(joined(node_explanation(r, 2)), Catch::Contains("not tried: a sibling tried before it was accepted"));
    CHECK_THAT(joined(node_explanation(r, 3)), Catch::Contains("rejected: drawn u = 0.900 >= r(x)/q(x) = 0.400"));
    CHECK_THAT(joined(node_explanation(r, 3)), !Catch::Contains("threshold"));
}

TEST_CASE("a step cut short by the turn's end says how many of its tokens were kept", "[chat]") {
    StepRecord r = three_token_step();
    r.trace.emitted = {5};  // the budget ended the turn after the first accepted guess
    const std::string c = step_caption(r);
    CHECK_THAT(c, Catch::Contains("accepted 2 guesses + 1 own, of which the turn's end kept 1 token"));
    CHECK_THAT(c, !Catch::Contains("= 1 token"));
}
