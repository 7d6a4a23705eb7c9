#include "setup/trained_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "model/json_file.h"
#include "model/model_digest.h"
#include "model/safetensors_file.h"
#include "train/checkpoint_identity.h"

namespace medusa {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxCacheFolders = 256;  // a cache holds a folder a model: more is not one of ours

// How deep a layer's greedy chains were accepted on held-out greedy text, per depth, from the
// accuracy.json its trainer wrote beside it (empty when there is none or it cannot be read).
std::vector<double> chain_accepted(const std::string& folder) {
    try {
        const nlohmann::json j = read_json_file(folder + "/accuracy.json");
        const nlohmann::json* greedy = nullptr;
        if (j.contains("draft_on_greedy_text")) greedy = &j["draft_on_greedy_text"];  // EAGLE-3's report
        else if (j.contains("trained") && j["trained"].contains("draft_on_greedy_text"))
            greedy = &j["trained"]["draft_on_greedy_text"];  // EAGLE-2's
        if (greedy && greedy->contains("chain_accepted")) return (*greedy)["chain_accepted"].get<std::vector<double>>();
    } catch (const std::exception&) {
    }
    return {};
}

double sum_first(const std::vector<double>& v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < std::min(n, v.size()); ++i) s += v[i];
    return s;
}

// The folder a piece's files are in: itself, or a file's parent.
fs::path piece_folder(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
}

// The hidden size a piece's config.json states (-1 when it states none or cannot be read).
int64_t stated_hidden_size(const fs::path& folder) {
    std::error_code ec;
    if (!fs::is_regular_file(folder / "config.json", ec)) return -1;
    try {
        const nlohmann::json j = read_json_file((folder / "config.json").string());
        if (j.is_object() && j.contains("hidden_size") && j["hidden_size"].is_number_integer())
            return j["hidden_size"].get<int64_t>();
    } catch (const std::exception&) {
    }
    return -1;
}

}  // namespace

std::string default_cache_dir() {
    if (const char* c = std::getenv("MEDUSA_CACHE"); c && *c) return c;
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/medusa-vk";
    return "";
}

std::optional<TrainedOn> trained_on(const std::string& path, const ModelFile& model) {
    const fs::path folder = piece_folder(path);
    std::error_code ec;
    // The training checkpoint beside the piece records the identity in its optimizer state
    // (training_setup.cpp puts it in <out>/checkpoint; training_progress.h writes it).
    const fs::path checkpoint = folder / "checkpoint" / "optimizer.safetensors";
    if (!fs::is_regular_file(checkpoint, ec)) return std::nullopt;
    train::CheckpointIdentity id;
    try {
        id = train::recorded_identity(read_safetensors_metadata(checkpoint.string()));
    } catch (const std::exception&) {
        return std::nullopt;  // loading the piece itself reports a damaged file
    }
    if (id.empty()) return std::nullopt;
    // A hidden size that differs settles it without hashing the model's every byte.
    if (const int64_t h = stated_hidden_size(folder); h >= 0 && h != model.config.dim) return TrainedOn{id.model, false};
    return TrainedOn{id.model, id.model_sha256 == model_sha256(model)};
}

TrainedFiles find_trained_files(const std::string& cache_dir, const ModelFile& model) {
    std::error_code ec;
    if (cache_dir.empty() || !fs::is_directory(cache_dir, ec)) return {};
    std::vector<fs::path> folders;
    for (auto it = fs::directory_iterator(cache_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec)) folders.push_back(it->path());
        if (int(folders.size()) >= kMaxCacheFolders) break;
    }
    std::sort(folders.begin(), folders.end());  // the same answer whatever order the directory lists
    auto ours = [&](const fs::path& piece, const char* file) {
        if (!fs::is_regular_file(piece / file, ec)) return false;
        const std::optional<TrainedOn> on = trained_on(piece.string(), model);
        return on && on->same;
    };
    for (const fs::path& folder : folders) {
        TrainedFiles t;
        if (ours(folder / "heads", "medusa_lm_head.safetensors")) {
            t.heads_path = (folder / "heads").string();
            if (fs::is_regular_file(folder / "tree.json", ec)) t.tree_path = (folder / "tree.json").string();
        }
        // The EAGLE layer whose held-out greedy chains went deeper, over the depths both reports
        // have (EAGLE-3 where only it has a report or neither has: it drafts deeper chains where
        // the model's last layer matters less).
        const fs::path e3 = folder / "eagle3", e2 = folder / "eagle";
        const bool has3 = ours(e3, "model.safetensors"), has2 = ours(e2, "model.safetensors");
        if (has3 && has2) {
            const std::vector<double> a3 = chain_accepted(e3.string()), a2 = chain_accepted(e2.string());
            const size_t depth = std::min(a3.size(), a2.size());
            t.eagle_path = (!a2.empty() && (a3.empty() || sum_first(a2, depth) > sum_first(a3, depth)) ? e2 : e3).string();
        } else if (has3 || has2) {
            t.eagle_path = (has3 ? e3 : e2).string();
        }
        if (!t.heads_path.empty() || !t.eagle_path.empty()) {
            t.folder = folder.string();
            return t;
        }
    }
    return {};
}

}  // namespace medusa
