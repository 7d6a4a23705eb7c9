// The cost model cache file, cost-model.json (setup/cost_measurement.h says what is in it):
//   { "<device> | <driver>": { "<entry key>": entry } }
// where an entry is a target's cost model (CostModel::to_json) or, under "drafter <key>", a
// drafter's {"level_ms": T}, each with "saved": a count that orders the entries by age.
// Reading never fails a run: a file that cannot be read (too large, not JSON, another shape) is
// set aside as PATH.bad (else PATH.bad.2, ...) with one warning, and the cache starts empty.
// Writing keeps it small and compact: the newest kMaxCostEntries entries of each of the
// kMaxCostDevices devices saved to most recently, entries and keys within a size.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace medusa {

constexpr size_t kMaxCostDevices = 8;
constexpr size_t kMaxCostEntries = 64;       // per device: a target and its drafters take a few
constexpr size_t kMaxCostKeyBytes = 1024;     // a device's key, as JSON text
constexpr size_t kMaxCostEntryBytes = 4096;  // an entry's key and value, as compact JSON text
// The largest file those bounds allow (2.1 MB), far below the 64 MiB a JSON file may have to be
// read at all: braces, and per device its key, a colon, braces and a comma, and per entry its
// text and a comma.
constexpr size_t kMaxCostCacheBytes =
    2 + kMaxCostDevices * (kMaxCostKeyBytes + 4 + kMaxCostEntries * (kMaxCostEntryBytes + 1));

// Throws FormatError "NAME: ..." naming the device and entry where `cache` is not of that shape.
void check_cost_cache(const nlohmann::json& cache, const std::string& name);
// The compact text of `cache` (of that shape) within the bounds: the oldest entries, and any
// larger than the bounds, dropped.
std::string bounded_cost_cache_text(const nlohmann::json& cache);

class CostCache {
public:
    // The cache at `path` ("": empty, and never written); see above for a file it cannot read.
    explicit CostCache(std::string path);
    // The entry (checked to be of its kind), or null.
    const nlohmann::json* find(const std::string& device, const std::string& key) const;
    // Adds or replaces the entry as the newest and writes the file atomically; a file that cannot
    // be written, or one that could be neither read nor set aside, is left as it is with a warning.
    void put(const std::string& device, const std::string& key, nlohmann::json entry);
    const std::string& path() const { return path_; }

private:
    std::string path_;
    nlohmann::json cache_;
    bool writable_ = true;
};

}  // namespace medusa
