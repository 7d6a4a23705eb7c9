#include "model/hf_tokenizer.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "model/file_bytes.h"
#include "model/json_file.h"
#include "model/format_error.h"
#include "model/hf_sentencepiece_vocab.h"
#include "model/pretokenizer.h"

namespace medusa {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json parse_object(const std::string& text, const std::string& name) {
    check_json_depth(text.data(), text.data() + text.size(), name);
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw FormatError(name + ": not a JSON object");
    return j;
}

// A PCRE2 pattern matching `literal` exactly.
std::string escape_regex(const std::string& literal) {
    std::string out;
    for (char c : literal) {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

// The regexes of a pre_tokenizer entry (Split, ByteLevel, Digits, or a Sequence of them).
void pre_tokenizer_regexes(const json& p, std::vector<std::string>& out, const std::string& name, int depth = 0) {
    auto bad = [&](const std::string& what) {
        throw FormatError(name + ": pre_tokenizer " + what +
                          " is not supported (Split with Isolated behavior, ByteLevel, Digits and Sequence are)");
    };
    if (p.is_null()) return;
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string() || depth > 4) bad("of an unknown form");
    const std::string type = p["type"];
    if (type == "Sequence") {
        if (!p.contains("pretokenizers") || !p["pretokenizers"].is_array()) bad("Sequence without a list");
        for (const json& e : p["pretokenizers"]) pre_tokenizer_regexes(e, out, name, depth + 1);
    } else if (type == "ByteLevel") {
        if (p.value("add_prefix_space", false) == true) bad("ByteLevel with add_prefix_space");
        if (p.value("use_regex", true) == true) out.push_back(gpt2_regex());
    } else if (type == "Digits") {
        out.push_back(p.value("individual_digits", false) == true ? "\\p{N}" : "\\p{N}+");
    } else if (type == "Split") {
        if (p.value("behavior", "") != "Isolated" || p.value("invert", false) != false)
            bad("Split with behavior '" + p.value("behavior", std::string("?")) + "'");
        const json& pat = p.contains("pattern") ? p["pattern"] : json();
        if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string()) out.push_back(pat["Regex"]);
        else if (pat.is_object() && pat.contains("String") && pat["String"].is_string()) out.push_back(escape_regex(pat["String"]));
        else bad("Split without a pattern");
    } else {
        bad("'" + type + "'");
    }
}

int config_int(const json& cfg, const char* key, int fallback) {
    if (!cfg.contains(key)) return fallback;
    const json& v = cfg[key];
    if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < (1 << 22)) return int(v.get<int64_t>());
    if (v.is_array() && !v.empty() && v[0].is_number_integer()) return config_int(json{{"x", v[0]}}, "x", fallback);
    return fallback;
}

}  // namespace

namespace {

BpeVocab parse_hf_tokenizer_unchecked(const std::string& tokenizer_json, const std::string& tokenizer_config,
                                      const std::string& config, const std::string& name) {
    const json t = parse_object(tokenizer_json, name);
    const json tc = tokenizer_config.empty() ? json::object() : parse_object(tokenizer_config, name + " (tokenizer_config.json)");
    const json cfg = config.empty() ? json::object() : parse_object(config, name + " (config.json)");
    auto bad = [&](const std::string& what) { throw FormatError(name + ": " + what); };

    const json& model = t.contains("model") ? t["model"] : json();
    if (!model.is_object() || model.value("type", "BPE") != "BPE")
        bad("model type '" + (model.is_object() ? model.value("type", std::string("?")) : std::string("?")) +
            "' is not supported (byte-level BPE is)");
    if (model.value("byte_fallback", false) == true)
        bad("a sentencepiece-style BPE (byte_fallback) without the tokenizer.model beside it");
    if (t.contains("normalizer") && !t["normalizer"].is_null() &&
        !(t["normalizer"].is_object() && t["normalizer"].value("type", "") == "NFC"))  // NFC is ignored, as llama.cpp does
        bad("normalizer '" + (t["normalizer"].is_object() ? t["normalizer"].value("type", std::string("?")) : "?") +
            "' is not supported");
    if (!model.contains("vocab") || !model["vocab"].is_object()) bad("model.vocab is missing");

    // Tokens by id: the model's vocabulary, then the added tokens over it.
    std::map<int, std::pair<std::string, int32_t>> by_id;
    for (const auto& [text, id] : model["vocab"].items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (1 << 22))
            bad("token '" + text + "' has an invalid id");
        by_id[int(id.get<int64_t>())] = {text, kTokenNormal};
    }
    if (t.contains("added_tokens")) {
        if (!t["added_tokens"].is_array()) bad("added_tokens is not a list");
        for (const json& a : t["added_tokens"]) {
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
                !a["content"].is_string() || a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() >= (1 << 22))
                bad("an added token lacks an id or its content");
            const std::string text = a["content"];
            const bool looks_special = text.size() >= 4 && text.rfind("<|", 0) == 0 && text.compare(text.size() - 2, 2, "|>") == 0;
            by_id[int(a["id"].get<int64_t>())] = {
                text, a.value("special", false) == true || looks_special ? kTokenControl : kTokenUserDefined};
        }
    }
    if (by_id.empty()) bad("the vocabulary is empty");
    const int n = std::max(by_id.rbegin()->first + 1, config_int(cfg, "vocab_size", 0));
    BpeVocab v;
    v.tokens.resize(size_t(n));
    v.types.assign(size_t(n), kTokenUnused);
    for (int id = 0; id < n; ++id) v.tokens[size_t(id)] = "[PAD" + std::to_string(id) + "]";
    for (const auto& [id, tt] : by_id) v.tokens[size_t(id)] = tt.first, v.types[size_t(id)] = tt.second;

    if (model.contains("merges")) {
        if (!model["merges"].is_array()) bad("model.merges is not a list");
        for (const json& m : model["merges"]) {
            if (m.is_string()) v.merges.push_back(m);
            else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
                v.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
            else bad("a merge is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }
    v.ignore_merges = model.value("ignore_merges", false) == true;
    v.pre = "regex";
    pre_tokenizer_regexes(t.contains("pre_tokenizer") ? t["pre_tokenizer"] : json(), v.regexes, name);

    auto id_of = [&](const std::string& text) {
        for (const auto& [id, tt] : by_id)
            if (tt.first == text) return id;
        return -1;
    };
    v.bos = hf_special_token_text(tc, "bos_token").empty() ? config_int(cfg, "bos_token_id", -1) : id_of(hf_special_token_text(tc, "bos_token"));
    v.eos = hf_special_token_text(tc, "eos_token").empty() ? config_int(cfg, "eos_token_id", -1) : id_of(hf_special_token_text(tc, "eos_token"));
    if (v.bos >= n) v.bos = -1;
    if (v.eos >= n) v.eos = -1;
    // add_bos_token when the config says so; else whether the post-processor puts a special first.
    bool add_bos = false;
    if (tc.contains("add_bos_token") && tc["add_bos_token"].is_boolean()) {
        add_bos = tc["add_bos_token"];
    } else if (t.contains("post_processor") && t["post_processor"].is_object()) {
        const json& single = t["post_processor"].value("single", json());
        add_bos = single.is_array() && !single.empty() && single[0].is_object() && single[0].contains("SpecialToken");
    }
    v.add_bos = add_bos && v.bos >= 0;
    validate_bpe_vocab(v, name);
    return v;
}

}  // namespace

std::string hf_special_token_text(const json& cfg, const char* key) {
    if (!cfg.contains(key)) return "";
    const json& v = cfg[key];
    if (v.is_string()) return v;
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"];
    return "";
}

BpeVocab parse_hf_tokenizer(const std::string& tokenizer_json, const std::string& tokenizer_config,
                            const std::string& config, const std::string& name) {
    // The walk reads optional fields with defaults (value("special", false)); a field of another
    // type ("special": 58) is the file's error, not the program's.
    try {
        return parse_hf_tokenizer_unchecked(tokenizer_json, tokenizer_config, config, name);
    } catch (const json::type_error& e) {
        throw FormatError(name + ": a value of the wrong type (" + e.what() + ")");
    }
}

EmbeddedVocab load_hf_vocab(const std::string& folder) {
    auto text = [&](const char* file) {
        const fs::path p = fs::path(folder) / file;
        if (!fs::exists(p)) return std::string();
        return read_text_file(p.string());
    };
    const std::string name = (fs::path(folder) / "tokenizer.json").string();
    if (!fs::exists(name)) throw FormatError(name + ": no such file");
    const std::string tokenizer_json = text("tokenizer.json");
    // A sentencepiece-style BPE (byte_fallback: Gemma, Phi-3, Llama 2) is read from its
    // tokenizer.model, as llama.cpp's converter reads it.
    if (fs::exists(fs::path(folder) / "tokenizer.model")) {
        const json t = parse_object(tokenizer_json, name);
        if (const auto m = t.find("model"); m != t.end() && m->is_object() && m->value("byte_fallback", false) == true)
            return load_hf_sentencepiece_vocab(folder, t, text("tokenizer_config.json"), text("config.json"));
    }
    EmbeddedVocab e;
    e.bpe = std::make_shared<BpeVocab>(parse_hf_tokenizer(tokenizer_json, text("tokenizer_config.json"),
                                                          text("config.json"), name));
    return e;
}

}  // namespace medusa
