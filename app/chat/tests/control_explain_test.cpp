// The step controller's choice in words, from hand-made traces: each reason's sentence with its
// numbers, the table's rows, and the number formats.
#include <catch2/catch.hpp>

#include "control_explain.h"
#include "decode/decoding_kinds.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

ShapeOption option(DrafterKind d, int nodes, double tokens, double ms) {
    ShapeOption o;
    o.drafter = d;
    o.nodes = nodes;
    o.depth = nodes - 1;
    o.expected_tokens = tokens;
    o.expected_ms = ms;
    return o;
}

ControlTrace trace(std::vector<ShapeOption> weighed, int chosen, ControlReason reason) {
    ControlTrace c;
    c.weighed = std::move(weighed);
    c.chosen = chosen;
    c.reason = reason;
    return c;
}

}  // namespace

TEST_CASE("the controller's choice that pays names the drafter, its shape and the numbers against plain",
          "[chat][control]") {
    const ControlTrace c = trace({option(DrafterKind::Plain, 1, 1.0, 0.323), option(DrafterKind::Ngram, 4, 2.9, 0.61),
                                  option(DrafterKind::DraftModel, 3, 2.2, 1.9)},
                                 1, ControlReason::Pays);
    CHECK(control_sentence(c) ==
          "The controller chose n-gram lookup, 4 nodes: 2.9 tokens expected in 0.61 ms (4.8 tokens/ms, plain "
          "decoding 3.1).");
}

TEST_CASE("when no draft pays, the sentence names the best one and plain decoding's rate", "[chat][control]") {
    const ControlTrace c = trace({option(DrafterKind::Plain, 1, 1.0, 0.244), option(DrafterKind::DraftModel, 2, 1.4, 1.1),
                                  option(DrafterKind::Medusa, 3, 1.8, 0.5)},
                                 0, ControlReason::NothingPays);
    CHECK(control_sentence(c) ==
          "No draft was expected to pay: the best, Medusa with 3 nodes, 3.6 tokens/ms, against plain decoding's 4.1.");
}

TEST_CASE("rates that read the same at two digits get a third", "[chat][control]") {
    const ControlTrace c = trace({option(DrafterKind::Plain, 1, 1.0, 1 / 4.12), option(DrafterKind::Eagle, 2, 1.632, 0.4)},
                                 0, ControlReason::NothingPays);
    CHECK_THAT(control_sentence(c), Catch::Contains("EAGLE with 2 nodes, 4.08 tokens/ms, against plain decoding's 4.12."));
}

TEST_CASE("nothing drafted and re-measuring an idle drafter say so in plain words", "[chat][control]") {
    const ControlTrace none = trace({option(DrafterKind::Plain, 1, 1.0, 0.3)}, 0, ControlReason::NothingDrafted);
    CHECK(control_sentence(none) ==
          "Nothing to draft from (no earlier match, no hidden state yet, or no room): plain decoding.");
    const ControlTrace explore = trace({option(DrafterKind::Plain, 1, 1.0, 0.3), option(DrafterKind::Eagle, 2, 1.3, 0.9)},
                                       1, ControlReason::Explore);
    CHECK(control_sentence(explore) == "Re-measuring EAGLE, idle for a while: one level drafted to see whether it pays now.");
    const ControlTrace draft = trace({option(DrafterKind::Plain, 1, 1.0, 0.3), option(DrafterKind::DraftModel, 2, 1.3, 0.9)},
                                     1, ControlReason::Explore);
    CHECK_THAT(control_sentence(draft), Catch::StartsWith("Re-measuring the draft model, idle for a while"));
    CHECK(control_sentence(ControlTrace{}).empty());  // weighed nothing: nothing to say
}

TEST_CASE("the table of shapes weighed has one row per option, the chosen one marked", "[chat][control]") {
    const ControlTrace c = trace({option(DrafterKind::Plain, 1, 1.0, 0.25), option(DrafterKind::Ngram, 4, 2.9, 0.61)}, 1,
                                 ControlReason::Pays);
    const std::vector<ShapeRow> rows = shape_rows(c);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].drafter == "plain");
    CHECK(rows[0].nodes == "1");
    CHECK(rows[0].tokens == "1.00");
    CHECK(rows[0].ms == "0.25");
    CHECK(rows[0].per_ms == "4.0");
    CHECK_FALSE(rows[0].chosen);
    CHECK(rows[1].drafter == "n-gram");
    CHECK(rows[1].nodes == "4");
    CHECK(rows[1].tokens == "2.90");
    CHECK(rows[1].ms == "0.61");
    CHECK(rows[1].per_ms == "4.8");
    CHECK(rows[1].chosen);
}

TEST_CASE("numbers keep two significant digits, whole numbers whole", "[chat][control]") {
    CHECK(two_digits(0.061) == "0.061");
    CHECK(two_digits(0.614) == "0.61");
    CHECK(two_digits(4.754) == "4.8");
    CHECK(two_digits(48.3) == "48");
    CHECK(two_digits(123.4) == "123");
    CHECK(two_digits(0.0) == "0");
    CHECK(tokens_text(2.94) == "2.9");
}

TEST_CASE("each drafter's phrase holds the app's word for it", "[chat][control]") {
    for (DrafterKind k : {DrafterKind::Plain, DrafterKind::Medusa, DrafterKind::DraftModel, DrafterKind::Ngram,
                          DrafterKind::Eagle, DrafterKind::Auto})
        CHECK_THAT(drafter_phrase(k), Catch::Contains(drafter_word(k)));
}

TEST_CASE("a draft verified where plain decoding would have paid says the controller would have decoded plainly",
          "[chat][control]") {
    const ControlTrace c = trace({option(DrafterKind::Plain, 1, 1.0, 0.244), option(DrafterKind::Medusa, 3, 1.8, 0.5)},
                                 1, ControlReason::DraftedAnyway);
    CHECK(control_sentence(c) ==
          "The controller would have decoded plainly (plain decoding 4.1 tokens/ms, the best draft, Medusa with 3 "
          "nodes, 3.6); it drafted that anyway, to show Medusa's work.");
}
