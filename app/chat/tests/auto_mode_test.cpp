// Auto mode in the app: the worker decodes with the step controller choosing among n-gram lookup
// and the draft model step by step (no heads or EAGLE layer named), the text equals plain greedy
// decoding's, and every step carries what the controller weighed, explained in words that name
// the drafter the step actually used.
#include <catch2/catch.hpp>

#include <map>

#include "control_explain.h"
#include "decode_worker.h"
#include "decode/decoding_kinds.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

namespace {

const char* kRepeating =
    "Lily had a red ball. She liked to play with it in the park. One day, Lily had a red ball. She liked to";

std::vector<int> emitted(const std::vector<StepRecord>& steps) {
    std::vector<int> out;
    for (const StepRecord& r : steps) out.insert(out.end(), r.trace.emitted.begin(), r.trace.emitted.end());
    return out;
}

}  // namespace

TEST_CASE("auto uses n-gram lookup always and each drafter its settings have a file for", "[chat][auto]") {
    DecodeSettings s;
    set_heads_field(s, "");
    s.eagle.layer.clear();
    CHECK(auto_drafters(s) == std::vector{DrafterKind::Ngram, DrafterKind::DraftModel});
    s.draft.model.clear();
    CHECK(auto_drafters(s) == std::vector{DrafterKind::Ngram});
    set_heads_field(s, "heads");
    s.eagle.layer = "eagle";
    CHECK(auto_drafters(s) == std::vector{DrafterKind::Ngram, DrafterKind::Medusa, DrafterKind::Eagle});
    // Auto is the controller choosing: a fixed shape left on from another mode does not apply.
    s.mode = DrafterKind::Auto;
    s.fixed_shape = true;
    CHECK(s.spec().shaping == StepShaping::Controlled);
}

TEST_CASE("auto mode writes plain greedy text and explains every step's choice", "[chat][auto]") {
    const int validation_before = context().validation_messages();
    DecodeSettings s;
    s.max_new_tokens = 60;
    s.mode = DrafterKind::Plain;
    const std::vector<int> plain = emitted(decode_turn(s, kRepeating).steps());

    s.mode = DrafterKind::Auto;  // greedy (the default rule); n-gram lookup and the draft model
    const StepLogReader reader = decode_turn(s, kRepeating);
    CHECK_THAT(reader.turns()[0].mode, Catch::StartsWith("auto (n-gram + draft"));
    CHECK(reader.turns()[0].drafter == DrafterKind::Auto);
    const std::vector<StepRecord>& steps = reader.steps();
    REQUIRE(steps.size() > 1);
    std::map<std::string, int> used;
    int ngram_weighed = 0;
    for (const StepRecord& r : steps) {
        const StepTrace& t = r.trace;
        INFO("step " << t.step << ", " << drafter_word(t.drafter));
        REQUIRE(t.control.has_value());
        CHECK(r.controlled);
        const ControlTrace& c = *t.control;
        REQUIRE(!c.weighed.empty());
        CHECK(c.weighed[0].drafter == DrafterKind::Plain);
        REQUIRE(c.chosen >= 0);
        REQUIRE(c.chosen < int(c.weighed.size()));
        // The step's drafter is the controller's choice; plain only when nothing drafted or paid.
        CHECK(c.choice().drafter == t.drafter);
        const bool plain_step = t.drafter == DrafterKind::Plain;
        CHECK(plain_step == (c.reason == ControlReason::NothingPays || c.reason == ControlReason::NothingDrafted));
        if (plain_step) CHECK(t.nodes.size() == 1);
        CHECK(t.drafter != DrafterKind::Auto);
        CHECK((r.source == StepSource::Draft) == (t.drafter == DrafterKind::DraftModel));
        for (const ShapeOption& o : c.weighed) ngram_weighed += o.drafter == DrafterKind::Ngram;
        const std::string why = control_sentence(c);
        INFO(why);
        CHECK(!why.empty());
        CHECK_THAT(why, Catch::Contains(drafter_word(t.drafter)));
        CHECK(shape_rows(c).size() == c.weighed.size());
        ++used[drafter_word(t.drafter)];
    }
    std::string summary;
    for (const auto& [word, n] : used) summary += word + " " + std::to_string(n) + "; ";
    INFO("steps by drafter: " << summary);
    CHECK(emitted(steps) == plain);
    // The prompt repeats itself: the lookup has a continuation to offer on some step.
    CHECK(ngram_weighed > 0);
    CHECK(context().validation_messages() == validation_before);
}
