#include "companion_fit.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "setup/trained_files.h"
#include "model/json_file.h"
#include "model/tokenizer.h"

namespace medusa::chat {

namespace fs = std::filesystem;

namespace {

// The file name without its extension: "stories260K" for /models/stories260K.bin or a Hub id's
// last part for "org/vicuna-7b-v1.3".
std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

// The config.json of a heads or EAGLE folder (or beside its file); null when there is none or it
// cannot be read (loading reports that).
nlohmann::json config_of(const std::string& path) {
    std::error_code ec;
    const fs::path folder = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
    const fs::path config = folder / "config.json";
    if (!fs::is_regular_file(config, ec)) return nullptr;
    try {
        nlohmann::json j = read_json_file(config.string());
        return j.is_object() ? j : nlohmann::json();
    } catch (const std::exception&) {
        return nullptr;
    }
}

// "" when `base` may be this model: the same name, or one the other begins with (stories260K and
// stories260K-f32 are one model exported twice).
std::string other_base(const std::string& base, const ModelFile& model) {
    if (base.empty() || base == "init") return "";  // heads saved before training name no model
    const std::string a = stem_of(base), b = stem_of(model.path);
    if (a.empty() || b.rfind(a, 0) == 0 || a.rfind(b, 0) == 0) return "";
    return a;
}

}  // namespace

std::vector<DroppedFile> ill_fitting_files(const DecodeSettings& s, const ModelFile& model) {
    // Only config.json and the tokenizer are read: heads and layers of a large model are gigabytes,
    // and what their config states is what loading them would check.
    std::vector<DroppedFile> out;
    const std::string model_name = fs::path(model.path).filename().string();
    auto check = [&](Companion what, const std::string& path, const char* vocab_key) {
        const nlohmann::json config = config_of(path);
        if (config.is_null()) return;
        auto number = [&](const char* key) {
            return config.contains(key) && config[key].is_number_integer() ? config[key].get<int64_t>() : int64_t(-1);
        };
        const auto base = config.find("base_model_name_or_path");
        // The model a checkpoint records settles it by content; else the name its config gives.
        const std::optional<TrainedOn> on = what == Companion::Tokenizer ? std::nullopt : trained_on(path, model);
        const std::string other =
            on ? (on->same ? "" : stem_of(on->model) + " (another model by content)")
               : other_base(base != config.end() && base->is_string() ? base->get<std::string>() : "", model);
        if (!other.empty())
            out.push_back({what, path, path + ": trained for " + other + ", not " + model_name});
        else if (const int64_t h = number("hidden_size"); h >= 0 && h != model.config.dim)
            out.push_back({what, path, path + ": hidden size " + std::to_string(h) + ", but " + model_name + " has " +
                                           std::to_string(model.config.dim)});
        else if (const int64_t v = number(vocab_key); v >= 0 && v != model.config.vocab_size)
            out.push_back({what, path, path + ": vocabulary " + std::to_string(v) + ", but " + model_name + " has " +
                                           std::to_string(model.config.vocab_size)});
    };
    if (!s.medusa.cached_heads && s.medusa.heads) check(Companion::Heads, *s.medusa.heads, "vocab_size");
    if (!s.eagle.layer.empty()) check(Companion::EagleLayer, s.eagle.layer, "vocab_size");
    if (!s.tokenizer_path.empty()) {
        try {
            check_vocab_match(model, Tokenizer::from_file(s.tokenizer_path));
        } catch (const std::exception& e) {
            out.push_back({Companion::Tokenizer, s.tokenizer_path, e.what()});
        }
    }
    return out;
}

void drop_files(DecodeSettings& s, const std::vector<DroppedFile>& dropped) {
    for (const DroppedFile& d : dropped) {
        switch (d.what) {
            case Companion::Heads: set_heads_field(s, ""); break;  // Medusa then starts from the model's own
            case Companion::EagleLayer:
                s.eagle.layer.clear();
                if (s.mode == DrafterKind::Eagle) s.mode = DrafterKind::Plain;
                break;
            case Companion::Tokenizer: s.tokenizer_path.clear(); break;  // the model's own vocabulary, if it has one
        }
    }
}

}  // namespace medusa::chat
