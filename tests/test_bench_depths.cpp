// `bench --compare` reports each drafting mode's acceptance by depth: per depth, the steps that
// drafted that deep and those whose accepted path got there, adding up to the accepted tokens.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
using nlohmann::json;

TEST_CASE("bench --compare reports acceptance by depth that adds up to the accepted tokens", "[bench][cli]") {
    medusa::test::TempDir dir("medusa-bench-depths");
    const std::string out = (dir.path / "bench.json").string();
    // Fixed shapes and one run: the first run (depths) is the reported run (accepted tokens).
    const auto r = medusa::test::run_medusa("bench -m " + model_path("stories260K.bin") + " --tokenizer " +
                                            model_path("tok512.model") +
                                            " --runs 1 --tokens 24 --max-block 8 --no-cpu --fixed-shape"
                                            " --compare plain,medusa,ngram --json " + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("accepted to depth k, of the steps that drafted that deep:") != std::string::npos);
    const json sets = json::parse(medusa::test::slurp(out))["compare"]["prompt_sets"];
    int modes_with_depths = 0;
    for (const auto& [set, modes] : sets.items())
        for (const auto& [mode, m] : modes.items()) {
            CAPTURE(set, mode);
            if (mode == "plain") {
                CHECK_FALSE(m.contains("acceptance_by_depth"));
                continue;
            }
            if (!m.contains("acceptance_by_depth")) continue;
            ++modes_with_depths;
            long reached_sum = 0, prev_drafted = -1, prev_reached = -1;
            int k = 0;
            for (const auto& d : m["acceptance_by_depth"]) {
                CHECK(d["depth"].get<int>() == ++k);
                const long drafted = d["drafted"].get<long>(), reached = d["reached"].get<long>();
                CHECK(reached <= drafted);
                // A step drafting (reaching) depth k drafted (reached) every depth above it.
                if (prev_drafted >= 0) {
                    CHECK(drafted <= prev_drafted);
                    CHECK(reached <= prev_reached);
                }
                CHECK(d["rate"].get<double>() == Approx(drafted ? double(reached) / drafted : 0.0));
                prev_drafted = drafted, prev_reached = reached;
                reached_sum += reached;
            }
            CHECK(reached_sum == m["accepted"].get<long>());
        }
    CHECK(modes_with_depths >= 2);
}
