#include "model/hf_sentencepiece_vocab.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "model/file_bytes.h"
#include "model/format_error.h"
#include "model/gguf_vocab.h"
#include "model/hf_tokenizer.h"
#include "model/json_file.h"
#include "model/sentencepiece_proto_check.h"

namespace medusa {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json object_or_empty(const std::string& text, const std::string& name) {
    if (text.empty()) return json::object();
    json j = parse_json_text(text, name);
    if (!j.is_object()) throw FormatError(name + ": not a JSON object");
    return j;
}

struct AddedToken {
    std::string text;
    bool special = false, rstrip = false;
};

// One added token's fields, as both files write them ({"content": ..., "special": ..., "rstrip": ...}).
AddedToken added_token(const json& a, const std::string& name) {
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || a["content"].get<std::string>().empty())
        throw FormatError(name + ": an added token without its content");
    auto flag = [&](const char* key) {
        if (!a.contains(key)) return false;
        if (!a[key].is_boolean()) throw FormatError(name + ": an added token's '" + key + "' is not a boolean");
        return a[key].get<bool>();
    };
    return {a["content"], flag("special"), flag("rstrip")};
}

int64_t token_id(const json& id, const std::string& name) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (1 << 22))
        throw FormatError(name + ": an added token's id " + json_excerpt(id) + " is out of range");
    return id.get<int64_t>();
}

// tokenizer_config.json's added_tokens_decoder ({"106": {...}}), then tokenizer.json's added_tokens
// ([{"id": 106, ...}]): the later file's word on an id stands.
std::map<int64_t, AddedToken> added_tokens(const json& tokenizer, const json& config, const std::string& folder) {
    std::map<int64_t, AddedToken> out;
    const std::string config_name = (fs::path(folder) / "tokenizer_config.json").string();
    if (const auto it = config.find("added_tokens_decoder"); it != config.end()) {
        if (!it->is_object()) throw FormatError(config_name + ": added_tokens_decoder is not an object");
        for (const auto& [key, a] : it->items()) {
            int64_t id = -1;
            try {
                size_t used = 0;
                id = std::stoll(key, &used);
                if (used != key.size()) id = -1;
            } catch (const std::exception&) {
            }
            out[token_id(id, config_name)] = added_token(a, config_name);
        }
    }
    const std::string json_name = (fs::path(folder) / "tokenizer.json").string();
    if (const auto it = tokenizer.find("added_tokens"); it != tokenizer.end()) {
        if (!it->is_array()) throw FormatError(json_name + ": added_tokens is not a list");
        for (const json& a : *it) {
            if (!a.is_object() || !a.contains("id")) throw FormatError(json_name + ": an added token without its id");
            out[token_id(a["id"], json_name)] = added_token(a, json_name);
        }
    }
    return out;
}

int vocab_size_of(const json& cfg) {
    const json& c = cfg.contains("text_config") && cfg["text_config"].is_object() && !cfg.contains("vocab_size")
                        ? cfg["text_config"] : cfg;
    const auto it = c.find("vocab_size");
    if (it == c.end() || !it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > (1 << 22)) return 0;
    return int(it->get<int64_t>());
}

bool looks_special(const std::string& t) {  // llama.cpp's converter: <|...|> marks a control token
    return t.size() >= 4 && t.rfind("<|", 0) == 0 && t.compare(t.size() - 2, 2, "|>") == 0;
}

}  // namespace

EmbeddedVocab load_hf_sentencepiece_vocab(const std::string& folder, const json& tokenizer,
                                          const std::string& tokenizer_config, const std::string& config) {
    const std::string model_path = (fs::path(folder) / "tokenizer.model").string();
    const auto bytes = read_file_bytes(model_path, kMaxTextFileBytes);
    const std::string proto(bytes->begin(), bytes->end());
    check_sentencepiece_proto(proto, model_path);
    SentencepieceVocab sp;
    try {
        sp = read_sentencepiece_vocab(proto);
    } catch (const std::invalid_argument& e) {
        throw FormatError(model_path + ": not a sentencepiece model: " + e.what());
    }
    const json tc = object_or_empty(tokenizer_config, (fs::path(folder) / "tokenizer_config.json").string());
    const json cfg = object_or_empty(config, (fs::path(folder) / "config.json").string());

    const int pieces = int(std::min<size_t>(sp.pieces.size(), size_t(1) << 22));
    const int wanted = vocab_size_of(cfg);
    if (wanted > 0 && pieces > wanted)
        throw FormatError(model_path + ": has " + std::to_string(pieces) + " pieces but " +
                          (fs::path(folder) / "config.json").string() + " has a vocabulary of " + std::to_string(wanted));
    const std::map<int64_t, AddedToken> added = added_tokens(tokenizer, tc, folder);
    // Without a vocab_size, the pieces (llama.cpp's converter drops the added tokens past them).
    const int n = wanted > 0 ? wanted : pieces;

    GgufVocab v;
    v.tokens.resize(size_t(n));
    v.scores.assign(size_t(n), -1000.0f);
    v.types.assign(size_t(n), kTokenUnused);
    for (int id = 0; id < n; ++id) v.tokens[size_t(id)] = "[PAD" + std::to_string(id) + "]";
    for (int id = 0; id < pieces; ++id) {
        const SentencepiecePiece& p = sp.pieces[size_t(id)];
        v.tokens[size_t(id)] = p.text, v.scores[size_t(id)] = p.score, v.types[size_t(id)] = p.type;
    }
    std::vector<int32_t> rstrip;  // ascending, as the map is
    for (const auto& [id, a] : added) {
        if (id >= n) continue;  // llama.cpp's converter skips these too
        std::string text = a.text;
        const bool control = a.special || looks_special(text);
        if (!control)  // user-defined spaces are stored as spaces
            for (size_t at; (at = text.find("\xE2\x96\x81")) != std::string::npos;) text.replace(at, 3, " ");
        v.tokens[size_t(id)] = text, v.scores[size_t(id)] = -1000.0f, v.types[size_t(id)] = control ? kTokenControl : kTokenUserDefined;
        if (a.rstrip) rstrip.push_back(int32_t(id));
    }
    auto id_of = [&](const std::string& text, int fallback) {
        if (text.empty()) return fallback;
        const auto it = std::find(v.tokens.begin(), v.tokens.end(), text);
        return it == v.tokens.end() ? fallback : int(it - v.tokens.begin());
    };
    v.unk = sp.unk;
    v.bos = id_of(hf_special_token_text(tc, "bos_token"), sp.bos);
    v.eos = id_of(hf_special_token_text(tc, "eos_token"), sp.eos);
    v.add_space_prefix = sp.add_dummy_prefix;
    EmbeddedVocab e = embed_sentencepiece_vocab(std::move(v), model_path);
    e.rstrip = std::move(rstrip);
    return e;
}

}  // namespace medusa
