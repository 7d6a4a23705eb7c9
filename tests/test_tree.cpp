// Medusa candidate trees: buffers against the reference implementation's vectors, the tree
// specs the CLI accepts, and the errors bad trees must raise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "decode/tree.h"
#include "test_paths.h"

using namespace medusa;
using Catch::Contains;
using Matrix = std::vector<std::vector<int>>;

namespace {

nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    REQUIRE(f.good());
    return nlohmann::json::parse(f);
}

// parent/depth/rank must agree with the reference fields they summarise.
void check_consistent(const TreeBuffers& b) {
    REQUIRE(int(b.tree_indices.size()) == b.num_nodes);
    REQUIRE(b.parent[0] == -1);
    REQUIRE(b.depth[0] == 0);
    for (int i = 0; i < b.num_nodes; ++i) {
        CHECK(b.depth[i] == b.position_ids[i]);
        if (i > 0) {
            CHECK(b.parent[i] < i);
            CHECK(b.depth[b.parent[i]] + 1 == b.depth[i]);
            CHECK(b.tree_indices[i] == 1 + (b.depth[i] - 1) * b.topk + b.rank[i]);
        }
        std::vector<int> row(b.num_nodes, 0);
        for (int a = i; a >= 0; a = b.parent[a]) row[a] = 1;
        CHECK(b.attn_mask[i] == row);
    }
    for (const auto& r : b.retrieve_indices) REQUIRE(int(r.size()) == b.max_depth + 1);
}

void check_reference(const nlohmann::json& ref, const TreeBuffers& b) {
    CHECK(b.tree_indices == ref["tree_indices"].get<std::vector<int>>());
    CHECK(b.position_ids == ref["position_ids"].get<std::vector<int>>());
    CHECK(b.retrieve_indices == ref["retrieve_indices"].get<Matrix>());
    CHECK(b.attn_mask == ref["attn_mask"].get<Matrix>());
}

}  // namespace

TEST_CASE("tree buffers equal the reference Medusa buffers", "[tree]") {
    const auto data = read_json(test::testdata_path("medusa_tree_buffers.json"));
    const int topk = data["topk"].get<int>();
    REQUIRE(data["trees"].size() >= 2);
    for (const auto& ref : data["trees"]) {
        const std::string name = ref["name"].get<std::string>();
        INFO("tree " << name);
        auto choices = ref["choices"].get<Matrix>();
        const TreeBuffers b = build_tree_buffers(make_tree(choices, name), topk);
        check_reference(ref, b);
        check_consistent(b);
        CHECK(b.num_nodes == int(choices.size()) + 1);

        // Medusa sorts the choices first, so their order must not matter.
        std::shuffle(choices.begin(), choices.end(), std::mt19937(7));
        check_reference(ref, build_tree_buffers(MedusaTree{choices, name}, topk));
    }
    // The same trees through the specs the CLI takes.
    check_reference(data["trees"][0], build_tree_buffers(load_tree("mc_sim_7b_63")));
    check_reference(data["trees"][1], build_tree_buffers(load_tree("dense:2,3")));
}

TEST_CASE("every preset is valid and matches its file in models/trees", "[tree]") {
    const auto names = tree_preset_names();
    for (const char* want : {"mc_sim_7b_63", "vicuna_7b_stage2", "vicuna_7b_stage1", "zephyr_stage2"})
        CHECK(std::find(names.begin(), names.end(), want) != names.end());
    const std::filesystem::path dir = std::filesystem::path(MEDUSA_SOURCE_DIR) / "models" / "trees";
    for (const auto& name : names) {
        INFO("preset " << name);
        const MedusaTree t = load_tree(name);
        CHECK(t.num_nodes() == 64);
        const TreeBuffers b = build_tree_buffers(t);
        check_consistent(b);
        CHECK(read_tree_file((dir / (name + ".json")).string()).choices == t.choices);
    }
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
        INFO("file " << f.path());
        CHECK(tree_presets().count(f.path().stem().string()) == 1);
    }
}

TEST_CASE("dense trees give every node the same number of children", "[tree]") {
    const std::vector<int> widths = {2, 3, 2};
    const MedusaTree t = load_tree("dense:2,3,2");
    CHECK(t.name == "dense:2,3,2");
    const TreeBuffers b = build_tree_buffers(t);
    CHECK(b.num_nodes == 1 + 2 + 6 + 12);
    CHECK(b.max_depth == 3);
    CHECK(b.retrieve_indices.size() == 12);  // one row per leaf
    check_consistent(b);
    for (int i = 0; i < b.num_nodes; ++i) {
        std::vector<int> ranks;
        for (int c = 1; c < b.num_nodes; ++c)
            if (b.parent[c] == i) ranks.push_back(b.rank[c]);
        std::vector<int> want;
        if (b.depth[i] < 3)
            for (int r = 0; r < widths[b.depth[i]]; ++r) want.push_back(r);
        CHECK(ranks == want);
    }
    // Full-width levels use the whole top-k; one more rank than top-k does not fit.
    CHECK(build_tree_buffers(load_tree("dense:10,5")).num_nodes == 61);
    CHECK_THROWS_WITH(load_tree("dense:11"), Contains("widths must be in 1..10"));
    CHECK_THROWS_WITH(load_tree("dense:3,0"), Contains("widths must be in 1..10"));
}

TEST_CASE("chain trees are a single path of rank 0", "[tree]") {
    const TreeBuffers b = build_tree_buffers(load_tree("chain:4"));
    CHECK(b.num_nodes == 5);
    CHECK(b.max_depth == 4);
    CHECK(b.tree_indices == std::vector<int>{0, 1, 11, 21, 31});
    CHECK(b.position_ids == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(b.retrieve_indices == Matrix{{0, 1, 2, 3, 4}});
    CHECK(b.parent == std::vector<int>{-1, 0, 1, 2, 3});
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) CHECK(b.attn_mask[i][j] == (j <= i ? 1 : 0));
    CHECK(build_tree_buffers(load_tree("chain:3"), 4).tree_indices == std::vector<int>{0, 1, 5, 9});
}

TEST_CASE("a root-only tree is plain decoding", "[tree]") {
    for (const char* spec : {"1", "ar", "chain:0"}) {
        INFO(spec);
        const TreeBuffers b = build_tree_buffers(load_tree(spec));
        CHECK(b.num_nodes == 1);
        CHECK(b.max_depth == 0);
        CHECK(b.tree_indices == std::vector<int>{0});
        CHECK(b.position_ids == std::vector<int>{0});
        CHECK(b.retrieve_indices == Matrix{{0}});
        CHECK(b.attn_mask == Matrix{{1}});
        CHECK(b.parent == std::vector<int>{-1});
    }
}

TEST_CASE("bad trees are rejected with the path and the rule", "[tree]") {
    using E = std::invalid_argument;
    CHECK_THROWS_AS(make_tree({{0}, {0, 1, 0}}), E);
    CHECK_THROWS_WITH(make_tree({{0}, {0, 1, 0}}), Contains("[0, 1, 0] has no parent: [0, 1]"));
    CHECK_THROWS_WITH(make_tree({{1, 0}}), Contains("[1, 0] has no parent: [1]"));
    CHECK_THROWS_WITH(make_tree({{0}, {1}, {0}}), Contains("[0] is listed twice"));
    CHECK_THROWS_WITH(make_tree({{0}, {10}}), Contains("[10] uses rank 10"));
    CHECK_THROWS_WITH(make_tree({{0}, {0, -1}}), Contains("[0, -1] uses rank -1"));
    CHECK_THROWS_WITH(make_tree({{0}, {}}), Contains("empty"));
    CHECK_THROWS_WITH(make_tree({{0}, {1}, {2}}, "", {2}), Contains("[2] uses rank 2: ranks must be in 0..1"));

    // Too large: default 128 nodes, or a caller's own limit.
    CHECK_THROWS_WITH(load_tree("dense:10,10,2"), Contains("more than 128 nodes"));
    Matrix wide;
    for (int a = 0; a < 10; ++a) {
        wide.push_back({a});
        for (int b = 0; b < 10; ++b) wide.push_back({a, b});
        for (int b = 0; b < 10; ++b) wide.push_back({a, 0, b});
    }
    CHECK_THROWS_WITH(make_tree(wide), Contains("211 nodes"));
    CHECK_NOTHROW(make_tree({{0}, {1}, {2}}, "", {10, 4}));
    CHECK_THROWS_WITH(make_tree({{0}, {1}, {2}, {3}}, "", {10, 4}), Contains("at most 4"));

    // Too deep: default 7 levels, or a caller's own limit.
    CHECK_NOTHROW(load_tree("chain:7"));
    CHECK_THROWS_WITH(load_tree("chain:8"), Contains("deeper than 7"));
    CHECK_THROWS_WITH(parse_tree_json("[[0],[0,0],[0,0,0]]", "t.json", {10, 128, 2}),
                      Contains("t.json: tree path [0, 0, 0] is 3 levels deep; at most 2"));

    // Malformed input.
    CHECK_THROWS_WITH(parse_tree_json("[[0], [0, 1]", "x.json"), Contains("x.json: malformed JSON"));
    CHECK_THROWS_WITH(parse_tree_json("{\"heads\": 3}", "x.json"), Contains("list of paths"));
    CHECK_THROWS_WITH(parse_tree_json("[0, 1]", "x.json"), Contains("every path must be a list"));
    CHECK_THROWS_WITH(parse_tree_json("[[0], [0.5]]", "x.json"), Contains("not an integer"));
    CHECK_THROWS_WITH(parse_tree_json("[[0], [\"1\"]]", "x.json"), Contains("not an integer"));
    CHECK_THROWS_WITH(parse_tree_json("[[0], [1, 1]]", "x.json"), Contains("x.json: tree path [1, 1] has no parent: [1]"));
    CHECK(parse_tree_json("{\"medusa_choices\": [[1], [0]]}", "x.json").choices == Matrix{{0}, {1}});

    // Specs the CLI passes through.
    CHECK_THROWS_WITH(load_tree("no_such_tree"), Contains("neither a file nor a preset"));
    CHECK_THROWS_WITH(load_tree("dense:2,x"), Contains("'x' is not a non-negative number"));
    CHECK_THROWS_WITH(load_tree("dense:"), Contains("expected numbers"));
    CHECK_THROWS_WITH(load_tree("chain:2,3"), Contains("one length"));
    CHECK_THROWS_AS(read_tree_file("/nonexistent/tree.json"), E);

    // Buffers for a smaller top-k than the tree uses would alias candidates.
    CHECK_THROWS_WITH(build_tree_buffers(load_tree("dense:3"), 2), Contains("uses rank 2"));
    CHECK_THROWS_WITH(build_tree_buffers(MedusaTree{{{0, 0}}, "hand-made"}), Contains("has no parent"));
}

TEST_CASE("tree files and buffer JSON round-trip", "[tree]") {
    const auto data = read_json(test::testdata_path("medusa_tree_buffers.json"));
    for (const char* spec : {"mc_sim_7b_63", "dense:2,3,2", "chain:3", "ar"}) {
        INFO(spec);
        const TreeBuffers b = build_tree_buffers(load_tree(spec));
        const auto j = nlohmann::json::parse(tree_buffers_json(b));
        CHECK(j.size() == 4);
        check_reference(j, b);
    }
    check_reference(data["trees"][0], [&] {
        TreeBuffers b;
        const auto j = nlohmann::json::parse(tree_buffers_json(build_tree_buffers(load_tree("mc_sim_7b_63"))));
        b.tree_indices = j["tree_indices"].get<std::vector<int>>();
        b.position_ids = j["position_ids"].get<std::vector<int>>();
        b.retrieve_indices = j["retrieve_indices"].get<Matrix>();
        b.attn_mask = j["attn_mask"].get<Matrix>();
        return b;
    }());

    // A user's tree file, written as Medusa writes medusa_choices, loads by path.
    const auto path = std::filesystem::temp_directory_path() / "medusa_test_tree.json";
    std::ofstream(path) << data["trees"][1]["choices"].dump();
    const MedusaTree t = load_tree(path.string());
    CHECK(t.name == path.string());
    check_reference(data["trees"][1], build_tree_buffers(t));
    std::filesystem::remove(path);
}
