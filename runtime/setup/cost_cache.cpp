#include "setup/cost_cache.h"

#include <algorithm>
#include <filesystem>
#include <new>
#include <vector>

#include "decode/cost_model.h"
#include "model/atomic_file.h"
#include "model/json_file.h"
#include "model/model_file.h"
#include "model/runtime_warning.h"

namespace medusa {

using nlohmann::json;

namespace {

bool is_drafter_key(const std::string& key) { return key.rfind("drafter ", 0) == 0; }

// A count: a whole number >= 0 (parsed text gives unsigned ones, code may give signed ones).
bool is_count(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); }

uint64_t saved_count(const json& entry) {
    const auto s = entry.find("saved");
    return s != entry.end() && is_count(*s) ? s->get<uint64_t>() : 0;
}

void check_entry(const std::string& key, const json& entry, const std::string& where) {
    if (!entry.is_object()) throw FormatError(where + ": is a " + entry.type_name() + ", not an object");
    if (entry.contains("saved") && !is_count(entry["saved"]))
        throw FormatError(where + ": \"saved\" must be a count, not " + json_excerpt(entry["saved"]));
    if (!is_drafter_key(key)) {
        (void)CostModel::from_json(entry, where);
        return;
    }
    const auto ms = entry.find("level_ms");
    if (ms == entry.end() || !ms->is_number() || !(ms->get<double>() >= 0))
        throw FormatError(where + ": needs \"level_ms\" (a number of ms, >= 0)");
}

// The text an entry takes in the file, its key's included.
size_t entry_bytes(const std::string& key, const json& entry) {
    return json_text(json(key), -1).size() + 1 + json_text(entry, -1).size();
}

}  // namespace

void check_cost_cache(const json& cache, const std::string& name) {
    if (!cache.is_object()) throw FormatError(name + ": the cost model cache must be a JSON object");
    for (const auto& [device, entries] : cache.items()) {
        const std::string where = name + ": device " + json_excerpt(json(device));
        if (!entries.is_object())
            throw FormatError(where + " holds a " + entries.type_name() + ", not an object of entries");
        for (const auto& [key, entry] : entries.items()) check_entry(key, entry, where + ", entry " + json_excerpt(json(key)));
    }
}

std::string bounded_cost_cache_text(const json& cache) {
    struct Device {
        std::string key;
        std::vector<std::pair<uint64_t, std::string>> entries;  // (saved, key), newest first
        uint64_t newest = 0;
    };
    std::vector<Device> devices;
    for (const auto& [device, entries] : cache.items()) {
        if (json_text(json(device), -1).size() > kMaxCostKeyBytes || !entries.is_object()) continue;
        Device d{device, {}, 0};
        for (const auto& [key, entry] : entries.items())
            if (entry_bytes(key, entry) <= kMaxCostEntryBytes) d.entries.push_back({saved_count(entry), key});
        if (d.entries.empty()) continue;
        std::stable_sort(d.entries.begin(), d.entries.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        if (d.entries.size() > kMaxCostEntries) d.entries.resize(kMaxCostEntries);
        d.newest = d.entries.front().first;
        devices.push_back(std::move(d));
    }
    std::stable_sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) { return a.newest > b.newest; });
    if (devices.size() > kMaxCostDevices) devices.resize(kMaxCostDevices);
    json out = json::object();
    for (const Device& d : devices)
        for (const auto& [saved, key] : d.entries) out[d.key][key] = cache[d.key][key];
    return json_text(out, -1);
}

namespace {

// The cache at `path`, checked; what cannot be read is set aside (see the header). `writable`
// turns false when the file could be neither read nor set aside: writing would lose it.
json load_cost_cache(const std::string& path, bool& writable) {
    std::string problem;
    try {
        json cache = read_cache_object(path, "the cost model cache");
        check_cost_cache(cache, path);
        return cache;
    } catch (const std::bad_alloc&) {
        problem = path + ": too large to read in this machine's memory";
    } catch (const std::exception& e) {
        problem = e.what();
    }
    for (int n = 1; n <= 9; ++n) {
        const std::string bad = path + ".bad" + (n == 1 ? "" : "." + std::to_string(n));
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::symlink_status(bad, ec))) continue;
        std::filesystem::rename(path, bad, ec);
        if (!ec) {
            runtime_warning(problem + "; set aside as " + bad + ", the costs are measured again");
            return json::object();
        }
        runtime_warning(problem + "; it cannot be set aside as " + bad + " (" + ec.message() +
                        "), so the costs measured now are not saved");
        writable = false;
        return json::object();
    }
    runtime_warning(problem + "; left in place since " + path + ".bad to .bad.9 exist, so the costs measured now are not saved");
    writable = false;
    return json::object();
}

}  // namespace

CostCache::CostCache(std::string path) : path_(std::move(path)) {
    if (path_.empty()) {
        writable_ = false;
        cache_ = json::object();
        return;
    }
    cache_ = load_cost_cache(path_, writable_);
}

const json* CostCache::find(const std::string& device, const std::string& key) const {
    const auto d = cache_.find(device);
    if (d == cache_.end()) return nullptr;
    const auto e = d->find(key);
    return e == d->end() ? nullptr : &*e;
}

void CostCache::put(const std::string& device, const std::string& key, json entry) {
    if (!writable_) return;
    // What other runs saved since this cache was read (a measurement takes seconds) is kept.
    cache_ = load_cost_cache(path_, writable_);
    if (!writable_) return;
    uint64_t newest = 0;
    for (const auto& [d, entries] : cache_.items())
        for (const auto& [k, e] : entries.items()) newest = std::max(newest, saved_count(e));
    entry["saved"] = newest + 1;
    cache_[device][key] = std::move(entry);
    try {
        std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
        write_file_atomically(path_, bounded_cost_cache_text(cache_));
    } catch (const std::exception& e) {
        runtime_warning(std::string("the cost model was not saved: ") + e.what());
    }
}

}  // namespace medusa
