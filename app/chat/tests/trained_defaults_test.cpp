// What the app's settings leave to the cache: empty heads and tree fields mean the heads and tuned
// tree trained for whatever model is loaded (found by its content when drafting is built, tested
// in tests/test_trained_files.cpp); "init" and a named tree are kept whatever the cache holds.
#include <catch2/catch.hpp>

#include "decode_settings.h"

using namespace medusa;
using namespace medusa::chat;

TEST_CASE("trained defaults: empty heads and tree are left to the cache, chosen ones are not", "[chat]") {
    DecodeSettings s;
    s.cache_dir = "/some/cache";
    const auto medusa_of = [](const DecodeSettings& d) { return std::get<MedusaSpec>(d.spec().drafter); };
    MedusaSpec m = medusa_of(s);
    CHECK(m.trained_cache == "/some/cache");
    CHECK(m.cached_heads);
    CHECK(m.cached_tree);
    CHECK_FALSE(m.heads);
    CHECK(m.tree == "mc_sim_7b_63");  // what stands when the cache holds nothing for the model
    set_tree_field(s, "chain:3");
    m = medusa_of(s);
    CHECK(m.cached_heads);
    CHECK_FALSE(m.cached_tree);
    CHECK(m.tree == "chain:3");
    set_heads_field(s, "/my/heads");
    m = medusa_of(s);
    CHECK_FALSE(m.cached_heads);
    CHECK(m.heads == "/my/heads");
    // Auto looks up the cache's heads and EAGLE layer unless heads are set to stay untrained.
    s.mode = DrafterKind::Auto;
    set_heads_field(s, "");
    CHECK(std::get<AutoSpec>(s.spec().drafter).trained_cache == "/some/cache");
    CHECK_FALSE(std::get<AutoSpec>(s.spec().drafter).medusa.has_value());
    set_heads_field(s, "init");
    CHECK(std::get<AutoSpec>(s.spec().drafter).trained_cache.empty());
}

TEST_CASE("heads 'init', as the command line takes it, are the model's own initialised heads", "[chat]") {
    DecodeSettings s;
    set_heads_field(s, "init");
    const DecodingSpec spec = s.spec();
    const auto* medusa = std::get_if<MedusaSpec>(&spec.drafter);
    REQUIRE(medusa);
    CHECK_FALSE(medusa->heads);
    CHECK_FALSE(medusa->cached_heads);  // untrained, whatever the cache holds
}

TEST_CASE("mode names for the turn table", "[chat]") {
    DecodeSettings s;
    CHECK(s.mode_name() == "medusa (mc_sim_7b_63, 4 heads, greedy)");
    s.mode = DrafterKind::Plain;
    CHECK(s.mode_name() == "plain decoding");
    s.mode = DrafterKind::DraftModel;
    s.draft.gamma = 5;
    s.draft.adaptive_gamma = true;
    CHECK(s.mode_name() == "draft (stories260K_q80, gamma 5 adaptive, greedy)");
    const auto key = s.decoder_key();
    s.rule = AcceptRule::Sample;
    CHECK_THAT(s.mode_name(), Catch::StartsWith("draft (stories260K_q80, gamma 5 adaptive, sample T="));
    CHECK(s.decoder_key() != key);
}
