// libFuzzer target: cost-model.json, as a whole cache and as one entry (the verify pass's
// milliseconds by block size).
// A cache that passes check_cost_cache is written back within kMaxCostCacheBytes, and what is
// written reads back as a cache whose entries are among those read, unchanged.
// An entry that loads must give a finite, positive cost for every block size, never less for a
// larger block past the last measured one, and read the same after a round trip through JSON.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "decode/cost_model.h"
#include "setup/cost_cache.h"
#include "fuzz_support.h"
#include "model/json_file.h"
#include "model/model_file.h"

using medusa::fuzz::check;
using nlohmann::json;

namespace {

void check_cache_round_trip(const json& cache) {
    try {
        medusa::check_cost_cache(cache, "fuzz.json");
    } catch (const medusa::FormatError&) {
        return;
    }
    const std::string text = medusa::bounded_cost_cache_text(cache);
    check(text.size() <= medusa::kMaxCostCacheBytes);
    const json back = medusa::parse_json_text(text, "written");
    medusa::check_cost_cache(back, "written");  // throws (a crash) if what was written is refused
    check(back.size() <= medusa::kMaxCostDevices);
    for (const auto& [device, entries] : back.items()) {
        check(cache.contains(device) && entries.size() <= medusa::kMaxCostEntries);
        for (const auto& [key, entry] : entries.items()) check(cache[device].contains(key) && cache[device][key] == entry);
    }
}

void check_entry(const json& j) {
    std::optional<medusa::CostModel> m;
    try {
        m = medusa::CostModel::from_json(j, "fuzz.json");
    } catch (const medusa::FormatError&) {
        return;
    }
    const int last = m->verify.points().back().first;
    for (int n = 1; n <= 4200; n += n < 200 ? 1 : 97) {
        const double ms = m->verify.at(n);
        check(std::isfinite(ms) && ms > 0);
        if (n > last) check(ms >= m->verify.at(last));
    }
    const medusa::CostModel back = medusa::CostModel::from_json(m->to_json(), "round trip");
    for (const auto& [n, ms] : m->verify.points()) check(back.verify.at(n) == ms);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::optional<json> j = medusa::fuzz::json_input(data, size);
    if (!j) return 0;
    check_cache_round_trip(*j);
    check_entry(*j);
    return 0;
}
