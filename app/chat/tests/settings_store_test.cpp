// The app's saved settings: the decoding mode and rule by name, read back as saved; files saved
// before names (the enums' indices) still read; unknown names and values keep the defaults.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "settings_store.h"
#include "temp_dir.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

SavedState read_back(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    const auto st = load_state(path);
    REQUIRE(st.has_value());
    return *st;
}

}  // namespace

TEST_CASE("saved settings keep the mode and rule by name, and read files saved by index", "[chat]") {
    test::TempDir dir("medusa-settings");
    const std::string path = (dir.path / "settings.json").string();
    SavedState st;
    st.settings.mode = DrafterKind::Ngram;
    st.settings.rule = AcceptRule::Typical;
    save_state(path, st);
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(text, Catch::Contains(R"("mode": "ngram")"));
    CHECK_THAT(text, Catch::Contains(R"("rule": "typical")"));
    const SavedState back = *load_state(path);
    CHECK(back.settings.mode == DrafterKind::Ngram);
    CHECK(back.settings.rule == AcceptRule::Typical);

    const SavedState old = read_back(path, R"({"mode": 2, "rule": 2})");
    CHECK(old.settings.mode == DrafterKind::DraftModel);
    CHECK(old.settings.rule == AcceptRule::Sample);
    const DecodeSettings defaults;
    for (const char* text : {R"({"mode": "fastest", "rule": 7})", R"({"mode": 9, "rule": "best"})",
                             R"({"mode": -1, "rule": [1]})"}) {
        CAPTURE(text);
        const SavedState bad = read_back(path, text);
        CHECK(bad.settings.mode == defaults.mode);
        CHECK(bad.settings.rule == defaults.rule);
    }
}

TEST_CASE("recent models: the latest first, each once, at most eight, kept across runs", "[chat]") {
    std::vector<std::string> recent;
    for (int i = 0; i < 10; ++i) remember_model(recent, "/m/" + std::to_string(i));
    remember_model(recent, "/m/5");
    REQUIRE(recent.size() == kRecentModels);
    CHECK(recent.front() == "/m/5");
    CHECK(recent[1] == "/m/9");
    CHECK(std::count(recent.begin(), recent.end(), "/m/5") == 1);
    const std::string path = (std::filesystem::temp_directory_path() / ("medusa_recent_" + std::to_string(getpid()))).string();
    SavedState st;
    st.recent_models = recent;
    save_state(path, st);
    CHECK(load_state(path)->recent_models == recent);
    std::filesystem::remove(path);
}

TEST_CASE("a tree left to the cache stays so; files from before read their default tree as left to it", "[chat]") {
    test::TempDir dir("medusa-settings-tree");
    const std::string path = (dir.path / "settings.json").string();
    SavedState st;
    save_state(path, st);
    CHECK(tree_field(load_state(path)->settings).empty());
    set_tree_field(st.settings, "mc_sim_7b_63");  // chosen in the tree list: kept
    save_state(path, st);
    CHECK(tree_field(load_state(path)->settings) == "mc_sim_7b_63");
    // Saved before an empty tree meant the tuned one: the default's name was saved when nobody chose.
    CHECK(tree_field(read_back(path, R"({"tree": "mc_sim_7b_63"})").settings).empty());
    CHECK(tree_field(read_back(path, R"({"tree": "chain:3"})").settings) == "chain:3");
}
