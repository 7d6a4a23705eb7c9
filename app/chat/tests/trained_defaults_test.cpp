// The app's start-up choice of heads and tree: the cache that scripts/train_default_heads.sh
// fills is used for the default model when it is complete, and ignored otherwise. Each case
// builds its own cache folder, so nothing depends on ~/.cache.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "decode/tree.h"
#include "decode_settings.h"

using namespace medusa;
using namespace medusa::chat;
namespace fs = std::filesystem;

namespace {

struct TempCache {
    fs::path dir = fs::temp_directory_path() / ("medusa-chat-cache-" + std::to_string(::getpid()));
    TempCache() { fs::remove_all(dir); }
    ~TempCache() { fs::remove_all(dir); }
    void write(const std::string& rel, const std::string& text) const {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
};

// What tune-tree writes: medusa_choices plus the budget/time table.
const char* kTreeJson = R"({"device": "test", "medusa_choices": [[0], [0, 0], [1], [0, 0, 0]], "nodes": 5,
  "table": [{"nodes": 1, "step_ms": 2.5, "expected_tokens_per_s": 390.0, "expected_tokens_per_step": 1.0}]})";

}  // namespace

TEST_CASE("trained defaults: a complete cache gives the default model its heads and tuned tree", "[chat]") {
    TempCache c;
    c.write("stories260K/heads/medusa_lm_head.safetensors", "x");
    c.write("stories260K/tree.json", kTreeJson);
    DecodeSettings s;
    const std::string note = apply_trained_defaults(s, c.dir.string(), false, false);
    CHECK(s.heads_path == (c.dir / "stories260K/heads").string());
    CHECK(s.tree == (c.dir / "stories260K/tree.json").string());
    CHECK_THAT(note, Catch::Contains("Trained heads"));
    // The tree file as the tuner writes it is a tree the decoder accepts.
    const MedusaTree t = load_tree(s.tree);
    CHECK(t.choices.size() == 4);
    CHECK(build_tree_buffers(t).num_nodes == 5);
    CHECK_THAT(s.mode_name(), Catch::Contains("tree.json"));
}

TEST_CASE("trained defaults: missing pieces, other models and explicit choices keep the untrained defaults",
          "[chat]") {
    TempCache c;
    const DecodeSettings untouched;
    DecodeSettings s;
    CHECK_THAT(apply_trained_defaults(s, c.dir.string(), false, false), Catch::Contains("No trained heads"));
    CHECK(s.heads_path.empty());
    CHECK(s.tree == untouched.tree);

    c.write("stories260K/tree.json", kTreeJson);  // a tree without heads is not enough
    apply_trained_defaults(s, c.dir.string(), false, false);
    CHECK(s.heads_path.empty());
    CHECK(s.tree == untouched.tree);

    c.write("stories260K/heads/medusa_lm_head.safetensors", "x");
    DecodeSettings other;
    other.model_path = "/somewhere/else.gguf";
    CHECK(apply_trained_defaults(other, c.dir.string(), false, false).empty());
    CHECK(other.heads_path.empty());

    DecodeSettings chosen;
    chosen.tree = "chain:3";
    apply_trained_defaults(chosen, c.dir.string(), false, true);
    CHECK(chosen.tree == "chain:3");          // --tree given: kept
    CHECK_FALSE(chosen.heads_path.empty());  // heads not given: the trained ones
}

TEST_CASE("trained defaults: the note says what it set, and only while those files are in use", "[chat]") {
    TempCache c;
    c.write("stories260K/heads/medusa_lm_head.safetensors", "x");
    c.write("stories260K/tree.json", kTreeJson);
    DecodeSettings restored;  // settings a person saved: their heads and tree stay, and nothing is claimed
    restored.heads_path = "/my/heads";
    restored.tree = "chain:2";
    CHECK(apply_trained_defaults(restored, c.dir.string(), true, true).empty());
    CHECK(restored.heads_path == "/my/heads");
    DecodeSettings tree_given;
    tree_given.tree = "chain:2";
    CHECK(apply_trained_defaults(tree_given, c.dir.string(), false, true).rfind("Trained heads, from ", 0) == 0);
    DecodeSettings s;
    const std::string note = apply_trained_defaults(s, c.dir.string(), false, false);
    CHECK(note.rfind("Trained heads and the tree tuned for this device, from ", 0) == 0);
    const DecodeSettings noted = s;
    CHECK(defaults_note_applies(s, noted));
    s.mode = DrafterKind::Auto;
    CHECK(defaults_note_applies(s, noted));  // auto drafts with those heads too
    s.mode = DrafterKind::Eagle;
    CHECK_FALSE(defaults_note_applies(s, noted));
    s.mode = DrafterKind::Medusa;
    s.tree = "mc_sim_7b_63";
    CHECK_FALSE(defaults_note_applies(s, noted));
    s.tree = noted.tree;
    s.model_path = "/other/model.gguf";
    CHECK_FALSE(defaults_note_applies(s, noted));
}

TEST_CASE("heads 'init', as the command line takes it, are the model's own initialised heads", "[chat]") {
    DecodeSettings s;
    s.heads_path = "init";
    const DecodingSpec spec = s.spec();
    const auto* medusa = std::get_if<MedusaSpec>(&spec.drafter);
    REQUIRE(medusa);
    CHECK(medusa->heads.empty());
    DecodeSettings empty;
    CHECK(s.spec() == empty.spec());
}

TEST_CASE("mode names for the turn table", "[chat]") {
    DecodeSettings s;
    CHECK(s.mode_name() == "medusa (mc_sim_7b_63, 4 heads, greedy)");
    s.mode = DrafterKind::Plain;
    CHECK(s.mode_name() == "plain decoding");
    s.mode = DrafterKind::DraftModel;
    s.gamma = 5;
    s.adaptive_gamma = true;
    CHECK(s.mode_name() == "draft (stories260K_q80, gamma 5 adaptive, greedy)");
    const auto key = s.decoder_key();
    s.rule = AcceptRule::Sample;
    CHECK_THAT(s.mode_name(), Catch::StartsWith("draft (stories260K_q80, gamma 5 adaptive, sample T="));
    CHECK(s.decoder_key() != key);
}

TEST_CASE("trained defaults: of an EAGLE-2 and an EAGLE-3 layer, the one whose greedy chains went deeper", "[chat]") {
    TempCache c;
    c.write("stories260K/eagle/model.safetensors", "x");
    c.write("stories260K/eagle3/model.safetensors", "x");
    const auto eagle_of = [&] { return find_trained_defaults(c.dir.string(), "stories260K").eagle_path; };
    // No reports: EAGLE-3.
    CHECK(eagle_of() == (c.dir / "stories260K/eagle3").string());
    // EAGLE-2's report (train-eagle's layout, 5 deep) beats EAGLE-3's over their common 5 depths.
    c.write("stories260K/eagle/accuracy.json",
            R"({"trained": {"draft_on_greedy_text": {"chain_accepted": [0.9, 0.78, 0.67, 0.57, 0.49]}}})");
    c.write("stories260K/eagle3/accuracy.json",
            R"({"draft_on_greedy_text": {"chain_accepted": [0.8, 0.68, 0.56, 0.5, 0.45, 0.38]}})");
    CHECK(eagle_of() == (c.dir / "stories260K/eagle").string());
    // The other way round.
    c.write("stories260K/eagle3/accuracy.json",
            R"({"draft_on_greedy_text": {"chain_accepted": [0.88, 0.78, 0.7, 0.63, 0.56, 0.51]}})");
    CHECK(eagle_of() == (c.dir / "stories260K/eagle3").string());
    // An unreadable report counts as none.
    c.write("stories260K/eagle3/accuracy.json", "not json");
    CHECK(eagle_of() == (c.dir / "stories260K/eagle").string());
    // One layer alone is taken as it is.
    fs::remove_all(c.dir / "stories260K/eagle");
    CHECK(eagle_of() == (c.dir / "stories260K/eagle3").string());
}
