// Draft mode from real decoding: the worker runs DraftDecoder on stories260K with its q8_0 copy
// as the draft, exactly as the app does, and every caption and token colour must say what that
// step's trace says (which token was rejected, p/q, the resampled token).
#include <catch2/catch.hpp>

#include <cstdio>

#include "decode_worker.h"
#include "palette.h"
#include "step_explain.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

namespace {

std::vector<StepRecord> decode(const DecodeSettings& s, const std::string& prompt) {
    const StepLogReader reader = decode_turn(s, prompt);
    CHECK(reader.turns()[0].done);
    return reader.steps();
}

std::vector<int> tokens_of(const std::vector<StepRecord>& steps) {
    std::vector<int> out;
    for (const auto& r : steps) out.insert(out.end(), r.trace.emitted.begin(), r.trace.emitted.end());
    return out;
}

// As the caption quotes a token: newlines shown as spaces.
std::string quoted(std::string s) {
    for (auto& c : s)
        if (c == '\n') c = ' ';
    return "'" + s + "'";
}

std::string fixed2(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

}  // namespace

TEST_CASE("draft captions from real sampling steps: proposal, accepted count, rejection with p/q, resample",
          "[chat][draft]") {
    const int validation_before = context().validation_messages();
    DecodeSettings s;
    s.mode = DrafterKind::DraftModel;
    s.rule = AcceptRule::Sample;
    s.sampling.temperature = 1.0f;
    s.draft.model = MEDUSA_SHARED_DIR "/models/llama2xs.bin";  // another model: rejections and full steps both
    s.draft.gamma = 3;
    s.sampling.seed = 3;
    s.max_new_tokens = 200;
    s.fixed_shape = true;  // every step drafts, whatever it costs on this machine
    const auto steps = decode(s, "Once upon a time");
    REQUIRE(steps.size() > 5);
    int rejections = 0, full = 0;
    for (const StepRecord& r : steps) {
        CHECK(r.source == StepSource::Draft);
        const StepTrace& t = r.trace;
        const std::string c = step_caption(r);
        INFO("step " << t.step << ": " << c);
        const int gamma = int(t.nodes.size()) - 1;
        if (gamma < 1) continue;  // the last step may have nothing left to draft
        CHECK(r.sampled);
        CHECK_THAT(c, Catch::Contains("the draft proposed " + std::to_string(gamma) + (gamma == 1 ? " token" : " tokens")));
        // The first drafted token the target tried and refused, found here from the flags alone.
        int rej = -1;
        for (int i = 1; i <= gamma && rej < 0; ++i)
            if (t.nodes[i].tried && !t.nodes[i].accepted) rej = i;
        CHECK(rejected_node(t) == rej);
        if (rej > 0) {
            ++rejections;
            CHECK(rej == t.accepted + 1);
            const TreeNodeTrace& n = t.nodes[rej];
            CHECK_THAT(c, Catch::Contains("the target accepted " + std::to_string(t.accepted) + "; at position " +
                                          std::to_string(rej) + " it rejected " + quoted(r.node_text[rej])));
            CHECK_THAT(c, Catch::Contains("(p/q = " + fixed2(n.model_prob / n.draft_prob) + ")"));
            CHECK(n.model_prob < n.draft_prob);  // only a token the target likes less than the draft can be rejected
            CHECK_THAT(c, Catch::Contains("resampled " + quoted(r.bonus_text)));
        } else {
            ++full;
            CHECK(t.accepted == gamma);
            CHECK_THAT(c, Catch::Contains("accepted all " + std::to_string(gamma) + " and added its own next token " +
                                          quoted(r.bonus_text)));
        }
        // Colours: accepted drafted tokens are draft tokens, the step's last token is the target's.
        for (int k = 0; k < int(t.emitted.size()); ++k) {
            if (k < t.accepted) {
                CHECK(token_origin(r, k) == kDraftOrigin);
                CHECK(t.emitted[k] == t.nodes[k + 1].token);
            } else {
                CHECK(token_origin(r, k) == 0);
                CHECK(t.emitted[k] == t.bonus);
            }
        }
    }
    INFO("steps with a rejection: " << rejections << ", fully accepted: " << full);
    CHECK(rejections > 0);
    CHECK(full > 0);
    CHECK(context().validation_messages() == validation_before);
}

TEST_CASE("greedy draft mode in the app writes plain greedy decoding's text", "[chat][draft]") {
    const int validation_before = context().validation_messages();
    DecodeSettings s;
    s.max_new_tokens = 80;
    s.mode = DrafterKind::Plain;
    const auto plain = decode(s, "The little dog");
    s.mode = DrafterKind::DraftModel;
    s.rule = AcceptRule::Greedy;
    s.draft.gamma = 5;
    s.fixed_shape = true;  // every step drafts: the captions of drafted steps are what is checked
    const auto draft = decode(s, "The little dog");
    CHECK(tokens_of(draft) == tokens_of(plain));
    CHECK(tokens_of(plain).size() > 20);
    int drafted = 0;
    for (const StepRecord& r : draft) {
        CHECK_FALSE(r.sampled);
        drafted += int(r.trace.nodes.size()) - 1;
        if (r.trace.nodes.size() > 1) {
            const std::string c = step_caption(r);
            INFO(c);
            CHECK_THAT(c, Catch::Contains(rejected_node(r.trace) > 0 ? "not the target's top choice" : "accepted all"));
        }
    }
    CHECK(drafted > 0);
    CHECK(context().validation_messages() == validation_before);
}
