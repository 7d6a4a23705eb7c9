// The cost model cache stays readable: it is written compactly and within bounds (the oldest
// entries dropped), and a file it cannot read is set aside with one warning and rebuilt, never
// failing the run.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "cache_env.h"
#include "captured_warnings.h"
#include "cli_runner.h"
#include "model/load_model.h"
#include "setup/cost_cache.h"
#include "setup/cost_measurement.h"
#include "file_text.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "model/file_bytes.h"
#include "model/json_file.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
using nlohmann::json;

namespace {

// MEDUSA_CACHE pointed at a fresh folder for the scope.
struct CacheFolder {
    TempDir dir;
    ScopedCacheDir env;
    explicit CacheFolder(const std::string& name) : dir(name), env(dir.path.string()) {}
};

// A measured cost model's entry: 15 block sizes, as measure_costs writes.
json cost_entry(double scale) {
    json v = json::array();
    int i = 0;
    for (int n : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 127, 128})
        v.push_back({{"tokens", n}, {"ms", scale * (1.0 + 0.25 * ++i)}});
    return {{"verify_ms", v}, {"position", 58}};
}

}  // namespace

TEST_CASE("the cost cache keeps the newest entries of the devices saved to last, within its size", "[cost-cache]") {
    json cache = json::object();
    for (int d = 0; d < 10; ++d)
        for (int e = 1; e <= 70; ++e) {
            json entry = cost_entry(1 + d);
            entry["saved"] = d * 100 + e;
            cache["device " + std::to_string(d)]["model " + std::to_string(e)] = entry;
        }
    cache["device 9"]["drafter huge"] = {{"level_ms", 1.0}, {"saved", 5000}, {"pad", std::string(5000, 'x')}};
    cache[std::string(2000, 'd')]["model"] = cost_entry(1);  // a key longer than any this program writes
    const std::string text = bounded_cost_cache_text(cache);
    CHECK(text.find('\n') == std::string::npos);  // compact
    const json kept = json::parse(text);
    check_cost_cache(kept, "kept");
    REQUIRE(kept.size() == kMaxCostDevices);
    for (int d = 2; d < 10; ++d) {  // devices 0 and 1 saved to longest ago
        const json& entries = kept["device " + std::to_string(d)];
        REQUIRE(entries.size() == kMaxCostEntries);
        for (int e = 1; e <= 70; ++e)
            CHECK(entries.contains("model " + std::to_string(e)) == (e > 70 - int(kMaxCostEntries)));
        CHECK(entries["model 70"] == cache["device " + std::to_string(d)]["model 70"]);
    }
    CHECK_FALSE(kept["device 9"].contains("drafter huge"));
    // The largest file the bounds allow: every device and entry at its largest.
    json full = json::object();
    for (size_t d = 0; d < kMaxCostDevices + 2; ++d) {
        const std::string device = std::to_string(d) + std::string(kMaxCostKeyBytes - 2 - 3, 'k');
        for (size_t e = 0; e < kMaxCostEntries + 2; ++e) {
            const std::string key = "drafter " + std::to_string(1000 + e);
            json entry = {{"level_ms", 1.5}, {"saved", 1}, {"pad", ""}};
            entry["pad"] = std::string(kMaxCostEntryBytes - json_text(json(key), -1).size() - 1 -
                                           json_text(entry, -1).size(), 'p');
            full[device][key] = entry;
        }
    }
    const std::string largest = bounded_cost_cache_text(full);
    CHECK(json::parse(largest).size() == kMaxCostDevices);
    CHECK(largest.size() > kMaxCostCacheBytes - kMaxCostDevices * (kMaxCostEntries + 4));
    CHECK(largest.size() <= kMaxCostCacheBytes);
    CHECK(kMaxCostCacheBytes < kMaxTextFileBytes / 16);
}

TEST_CASE("a large cost cache is still readable, and far smaller, after a run saves to it", "[cost-cache]") {
    CacheFolder folder("cost-cache-large");
    // 32 MB, written compactly (by another program, or this one before it kept the cache small):
    // pretty-printed, it grew past the 64 MiB that a JSON file may have to be read at all.
    json big = json::object();
    for (int d = 0; d < 100; ++d)
        for (int e = 0; e < 850; ++e)
            big["device " + std::to_string(d)]["f32 64x172x5 v512 ctx " + std::to_string(e)] = cost_entry(1 + e % 7);
    const std::string text = big.dump();
    REQUIRE(text.size() > 32'000'000);
    REQUIRE(big.dump(2).size() > kMaxTextFileBytes);
    write_text(cost_model_path(), text);
    big = json();

    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    const DraftingTarget target{.file = file, .runner = runner};
    CapturedWarnings warnings;
    const CostModel measured = target_costs(target);  // read, then the measurement saved
    CHECK(measured.source == "measured");
    CHECK(warnings.lines.empty());
    const auto size = std::filesystem::file_size(cost_model_path());
    CHECK(size <= kMaxCostCacheBytes);
    const CostModel cached = target_costs(target);  // read back
    CHECK(cached.source == cost_model_path());
    CHECK(cached.verify.points() == measured.verify.points());
    CHECK(warnings.lines.empty());
}

TEST_CASE("a cost cache that cannot be read is set aside with one warning and rebuilt", "[cost-cache]") {
    CacheFolder folder("cost-cache-damaged");
    const std::string path = cost_model_path();
    const ModelFile file = load_model(model_path("stories260K.bin"));
    CpuReferenceModel cpu(file);
    CpuTreeRunner runner(cpu);
    const DraftingTarget target{.file = file, .runner = runner};
    const std::string device = cost_device_key(target);
    const std::pair<std::string, std::string> cases[] = {
        {"{\"dev\": {\"m\": {\"verify_ms\"", "malformed JSON"},
        {"[1, 2]", "must be a JSON object"},
        {json{{device, 3}}.dump(), "holds a number, not an object of entries"},
        {json{{device, {{cost_model_key(target), {{"verify_ms", "fast"}}}}}}.dump(), "verify_ms"},
        {json{{device, {{"drafter test", {{"level_ms", -1}}}}}}.dump(), "level_ms"},
        {json{{device, {{"drafter test", {{"level_ms", 2}, {"saved", "yesterday"}}}}}}.dump(), "\"saved\" must be a count"},
        {std::string(kMaxTextFileBytes + 1, ' '), "too large"},
    };
    int n = 0;
    for (const auto& [text, why] : cases) {
        CAPTURE(why);
        write_text(path, text);
        const std::string bad = path + ".bad" + (n++ == 0 ? "" : "." + std::to_string(n));
        CapturedWarnings warnings;
        CHECK(drafter_cost_ms(target, "test", [] { return 1.25; }) == 1.25);
        CHECK(drafter_cost_ms(target, "test", [] { return 9.0; }) == 1.25);  // saved in the rebuilt cache
        REQUIRE(warnings.lines.size() == 1);
        CHECK_THAT(warnings.lines[0], Catch::Contains(path) && Catch::Contains(why) && Catch::Contains("set aside as " + bad));
        CHECK(read_text(bad) == text);  // nothing lost
        check_cost_cache(json::parse(read_text(path)), path);
    }
    // The target's own curve too: measured again over a damaged file.
    write_text(path, "{\"dev\": ");
    CapturedWarnings warnings;
    CHECK(target_costs(target).source == "measured");
    CHECK(warnings.lines.size() == 1);
    CHECK(target_costs(target).source == path);
}

TEST_CASE("generate decodes speculatively over a damaged cost cache, with one warning", "[cost-cache][cli]") {
    TempDir dir("cost-cache-cli");
    const std::string path = (dir.path / "cost-model.json").string();
    write_text(path, "{\"llvmpipe\": [");
    const auto r = run_medusa("generate -m " + model_path("stories260K.bin") + " -p 'Once upon a time' -n 24 --ngram 8 --quiet",
                              "MEDUSA_CACHE=" + dir.path.string());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("Once upon a time"));
    const size_t at = r.err.find("warning: " + path + ": malformed JSON");
    CHECK(at != std::string::npos);
    CHECK(r.err.find("warning:", at + 1) == std::string::npos);
    CHECK(read_text(path + ".bad") == "{\"llvmpipe\": [");
    check_cost_cache(json::parse(read_text(path)), path);
}
