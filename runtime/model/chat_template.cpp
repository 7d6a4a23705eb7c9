#include "model/chat_template.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/chat_markers.h"
#include "model/file_bytes.h"
#include "model/json_file.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa {

namespace fs = std::filesystem;
using namespace chat_markers;

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower((unsigned char)c));
    return s;
}

// Whether a newline follows one of the template's "<|role|>" markers, either inside the string
// literal ('<|user|>\n', written as a newline or as the escape) or as the next concatenated
// literal ('<|user|>' + '\n'): Phi-3's templates do, Phi-4-mini's never do.
bool newline_after_marker(const std::string& j) {
    for (size_t at = j.find("|>"); at != std::string::npos; at = j.find("|>", at + 2)) {
        size_t k = at + 2;
        while (k < j.size() && (j[k] == ' ' || j[k] == '\'' || j[k] == '"' || j[k] == '+')) ++k;
        if (k < j.size() && (j[k] == '\n' || (j[k] == '\\' && k + 1 < j.size() && j[k + 1] == 'n'))) return true;
    }
    return false;
}

// tokenizer_config.json's chat_template: a string, or (newer transformers) a list of named
// templates of which "default" is the chat one.
std::string hf_chat_template(const nlohmann::json& cfg, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": chat_template " + what); };
    auto it = cfg.find("chat_template");
    if (it == cfg.end() || it->is_null()) return "";
    if (it->is_string()) return it->get<std::string>();
    if (!it->is_array()) bad("is neither a string nor a list of named templates");
    for (const auto& e : *it) {
        if (!e.is_object()) bad("lists something other than {\"name\": ..., \"template\": ...}");
        auto n = e.find("name"), t = e.find("template");
        if (n == e.end() || !n->is_string() || t == e.end() || !t->is_string())
            bad("lists a template without a string name and template");
        if (n->get<std::string>() == "default") return t->get<std::string>();
    }
    return "";
}

nlohmann::json json_object(const std::string& text, const std::string& name) {
    nlohmann::json j = parse_json_text(text, name);
    if (!j.is_object()) throw FormatError(name + ": not a JSON object");
    return j;
}

// Hints in a Hugging Face model name ("lmsys/vicuna-7b-v1.5", "meta-llama/Llama-2-7b-chat-hf",
// "HuggingFaceH4/zephyr-7b-beta", "TinyLlama/TinyLlama-1.1B-Chat-v1.0").
// Qwen3's chat models carry no suffix ("Qwen/Qwen3-8B"; its base models end in "-Base"); Gemma's
// end in "-it" ("google/gemma-3-1b-it"; base models "-pt"); Microsoft published Phi-3 and Phi-3.5
// as instruct models only. "microsoft/phi-4" itself (14B) speaks ChatML with <|im_sep|>, not Phi-4-mini's
// format, so only "phi-4-mini" names count.
ChatTemplate from_model_name(const std::string& name) {
    const std::string n = lower(name);
    if (has(n, "vicuna")) return ChatTemplate::VicunaV11;
    if ((has(n, "llama-2") || has(n, "llama2")) && has(n, "chat")) return ChatTemplate::Llama2Chat;
    if ((has(n, "llama-3") || has(n, "llama3")) && has(n, "instruct")) return ChatTemplate::Llama3;
    if ((has(n, "qwen3") || has(n, "qwen-3")) && !has(n, "base")) return ChatTemplate::Qwen3;
    if (has(n, "gemma") && has(n, "-it")) return ChatTemplate::Gemma;
    if (has(n, "phi-3") || has(n, "phi3")) return ChatTemplate::Phi3;
    if (has(n, "phi-4-mini") || has(n, "phi4-mini")) return ChatTemplate::Phi4;
    if (has(n, "qwen") && (has(n, "instruct") || has(n, "chat"))) return ChatTemplate::ChatML;
    if (has(n, "zephyr")) return ChatTemplate::Zephyr;
    if (has(n, "tinyllama") && has(n, "chat")) return ChatTemplate::Zephyr;
    return ChatTemplate::None;
}

ChatTemplateDetection found(ChatTemplate t, const std::string& where) {
    return {t, where + ": " + (t == ChatTemplate::None ? std::string("no known chat format") : chat_template_name(t))};
}

}  // namespace

const char* chat_template_name(ChatTemplate t) {
    switch (t) {
        case ChatTemplate::None: return "none";
        case ChatTemplate::VicunaV11: return "vicuna_v1.1";
        case ChatTemplate::Llama2Chat: return "llama2_chat";
        case ChatTemplate::Zephyr: return "zephyr";
        case ChatTemplate::ChatML: return "chatml";
        case ChatTemplate::Llama3: return "llama3";
        case ChatTemplate::Qwen3: return "qwen3";
        case ChatTemplate::Gemma: return "gemma";
        case ChatTemplate::Phi3: return "phi3";
        case ChatTemplate::Phi4: return "phi4";
    }
    return "?";
}

std::string chat_template_names(const std::string& separator) {
    std::string out;
    for (ChatTemplate t : {ChatTemplate::VicunaV11, ChatTemplate::Llama2Chat, ChatTemplate::Zephyr, ChatTemplate::ChatML,
                           ChatTemplate::Llama3, ChatTemplate::Qwen3, ChatTemplate::Gemma, ChatTemplate::Phi3,
                           ChatTemplate::Phi4, ChatTemplate::None})
        out += (out.empty() ? "" : separator) + chat_template_name(t);
    return out;
}

std::optional<ChatTemplate> parse_chat_template(const std::string& name) {
    const std::string n = lower(name);
    if (n == "none") return ChatTemplate::None;
    if (n == "vicuna_v1.1" || n == "vicuna" || n == "vicuna_v1_1" || n == "vicuna-v1.1") return ChatTemplate::VicunaV11;
    if (n == "llama2_chat" || n == "llama2" || n == "llama-2" || n == "llama2-chat" || n == "llama-2-chat")
        return ChatTemplate::Llama2Chat;
    if (n == "zephyr" || n == "tinyllama") return ChatTemplate::Zephyr;
    if (n == "chatml" || n == "chat-ml" || n == "qwen2" || n == "qwen") return ChatTemplate::ChatML;
    if (n == "llama3" || n == "llama-3" || n == "llama3_instruct") return ChatTemplate::Llama3;
    if (n == "qwen3" || n == "qwen-3") return ChatTemplate::Qwen3;
    if (n == "gemma" || n == "gemma3" || n == "gemma-3") return ChatTemplate::Gemma;
    if (n == "phi3" || n == "phi-3" || n == "phi3.5" || n == "phi-3.5") return ChatTemplate::Phi3;
    if (n == "phi4" || n == "phi-4" || n == "phi4-mini" || n == "phi-4-mini") return ChatTemplate::Phi4;
    return std::nullopt;
}

ChatTemplate detect_chat_template_jinja(const std::string& j) {
    if (has(j, "<|start_header_id|>") && has(j, "<|eot_id|>")) return ChatTemplate::Llama3;
    // Qwen3's is ChatML that handles <think> reasoning (Qwen2's and plain ChatML's never mention it).
    if (has(j, "<|im_start|>")) return has(j, kThinkOpen) && has(j, kThinkClose) ? ChatTemplate::Qwen3 : ChatTemplate::ChatML;
    if (has(j, "[INST]") && has(j, "<<SYS>>")) return ChatTemplate::Llama2Chat;
    if (has(j, kStartOfTurn) && has(j, kEndOfTurn)) return ChatTemplate::Gemma;
    // Phi writes <|user|>/<|assistant|> as Zephyr does, but ends messages with <|end|>, not eos_token;
    // Phi-3 puts a newline after each marker, Phi-4-mini none.
    if (has(j, kPhiAssistant) && has(j, kPhiEnd)) return newline_after_marker(j) ? ChatTemplate::Phi3 : ChatTemplate::Phi4;
    if (has(j, kPhiUser) && has(j, kPhiAssistant)) return ChatTemplate::Zephyr;
    if (has(j, "USER:") && has(j, "ASSISTANT:")) return ChatTemplate::VicunaV11;
    return ChatTemplate::None;
}

ChatTemplateDetection detect_chat_template(const ModelFile& m) {
    if (is_llama2c(m.format))
        return {ChatTemplate::None, "llama2.c checkpoint: a story model without a chat format"};
    if (m.format == ModelFormat::Gguf) {
        if (m.chat_template.empty()) return {ChatTemplate::None, "GGUF file without tokenizer.chat_template"};
        return found(detect_chat_template_jinja(m.chat_template), "GGUF tokenizer.chat_template");
    }
    if (m.format == ModelFormat::Safetensors) {
        std::error_code ec;
        fs::path dir(m.path);
        if (!fs::is_directory(dir, ec)) dir = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
        try {
            if (const fs::path p = dir / "tokenizer_config.json"; fs::exists(p, ec))
                if (auto d = detect_chat_template_tokenizer_config(read_text_file(p.string()), p.string())) return *d;
            if (const fs::path p = dir / "config.json"; fs::exists(p, ec))
                if (auto d = detect_chat_template_config(read_text_file(p.string()), p.string())) return *d;
        } catch (const FormatError& e) {  // not a regular file, too large, too deep, malformed
            return {ChatTemplate::None, e.what()};
        }
        return {ChatTemplate::None, "Hugging Face folder without a chat_template or a model name"};
    }
    return {ChatTemplate::None, std::string(format_name(m.format)) + " file: no chat format recorded"};
}

std::optional<ChatTemplateDetection> detect_chat_template_tokenizer_config(const std::string& json_text,
                                                                           const std::string& name) {
    const std::string jinja = hf_chat_template(json_object(json_text, name), name);
    if (jinja.empty()) return std::nullopt;
    return found(detect_chat_template_jinja(jinja), "tokenizer_config.json chat_template");
}

std::optional<ChatTemplateDetection> detect_chat_template_config(const std::string& json_text, const std::string& name) {
    const nlohmann::json cfg = json_object(json_text, name);
    auto it = cfg.find("_name_or_path");
    if (it == cfg.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw FormatError(name + ": '_name_or_path' is not a string");
    const std::string model = it->get<std::string>();
    if (model.empty()) return std::nullopt;
    return found(from_model_name(model), "config.json _name_or_path '" + model + "'");
}

std::string ChatPrompt::text() const {
    std::string s;
    for (const ChatPart& p : parts) s += p.text;
    return s;
}

std::string default_system_prompt(ChatTemplate t) {
    if (t == ChatTemplate::VicunaV11)  // FastChat's vicuna_v1.1 system message
        return "A chat between a curious user and an artificial intelligence assistant. "
               "The assistant gives helpful, detailed, and polite answers to the user's questions.";
    return "";
}

std::vector<int> encode_chat(const ChatPrompt& prompt, const Tokenizer& tok) {
    // Resolve the specials first; one the vocabulary lacks joins the text around it.
    std::vector<std::pair<int, std::string>> runs;  // (token id, "") or (-1, text)
    bool eat_space = false;  // after a special that swallows the whitespace following it
    for (const ChatPart& p : prompt.parts) {
        int id = -1;
        if (p.special) id = p.text == kBos ? tok.bos_id() : p.text == kEos ? tok.eos_id() : tok.find_piece(p.text);
        if (id >= 0) {
            runs.push_back({id, ""});
            eat_space = prompt.specials_eat_space;
            continue;
        }
        std::string text = p.text;
        if (eat_space) {  // llama.cpp's RSTRIP: isspace() bytes
            size_t b = 0;
            while (b < text.size() && std::isspace((unsigned char)text[b])) ++b;
            text.erase(0, b);
            if (text.empty()) continue;
            eat_space = false;
        }
        if (!runs.empty() && runs.back().first < 0) runs.back().second += text;
        else runs.push_back({-1, text});
    }
    std::vector<int> ids;
    if (prompt.bos.value_or(tok.adds_bos()) && tok.bos_id() >= 0) ids.push_back(tok.bos_id());
    for (const auto& [id, text] : runs) {
        if (id >= 0) {
            ids.push_back(id);
        } else {
            const std::vector<int> t = tok.encode(text, false);
            ids.insert(ids.end(), t.begin(), t.end());
        }
    }
    return ids;
}

std::vector<int> chat_stop_tokens(ChatTemplate t, const Tokenizer& tok) {
    std::vector<int> stops = {tok.eos_id()};
    std::vector<const char*> ends;
    if (t == ChatTemplate::ChatML) ends = {kImEnd};
    if (t == ChatTemplate::Llama3) ends = {kEotId, kEomId};
    if (t == ChatTemplate::Qwen3) ends = {kImEnd, kEndOfText};           // generation_config.json: 151645, 151643
    if (t == ChatTemplate::Gemma) ends = {kEndOfTurn, kGemmaEos};        // 106, 1
    if (t == ChatTemplate::Phi3) ends = {kPhiEnd, kEndOfText, kPhiAssistant};  // 32007, 32000, 32001
    if (t == ChatTemplate::Phi4) ends = {kPhiEnd, kEndOfText};           // 200020, 199999
    for (const char* e : ends)
        if (const int id = tok.find_piece(e); id >= 0 && std::find(stops.begin(), stops.end(), id) == stops.end())
            stops.push_back(id);
    return stops;
}

std::vector<std::string> chat_stop_strings(ChatTemplate t) {
    switch (t) {
        case ChatTemplate::VicunaV11: return {kEos, "USER:"};
        case ChatTemplate::Llama2Chat: return {kEos, "[INST]"};
        case ChatTemplate::Zephyr: return {kEos, "<|user|>"};
        case ChatTemplate::ChatML: return {kImEnd, kImStart};
        case ChatTemplate::Llama3: return {kEotId, kHeaderStart};  // written out by a vocabulary without them
        case ChatTemplate::Qwen3: return {kImEnd, kImStart, kEndOfText};
        case ChatTemplate::Gemma: return {kEndOfTurn, kStartOfTurn};
        case ChatTemplate::Phi3:
        case ChatTemplate::Phi4: return {kPhiEnd, kPhiUser, kPhiAssistant, kEndOfText};
        case ChatTemplate::None: break;
    }
    return {};
}

StopStringFilter::StopStringFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStringFilter::feed(const std::string& piece) {
    if (stopped_) return "";
    pending_ += piece;
    size_t first = std::string::npos;
    for (const std::string& s : stops_) first = std::min(first, pending_.find(s));
    if (first != std::string::npos) {
        std::string out = pending_.substr(0, first);
        pending_.clear();
        stopped_ = true;
        reply_ += out;
        return out;
    }
    // Hold back the longest tail that a stop string begins with.
    size_t hold = 0;
    for (const std::string& s : stops_)
        for (size_t k = std::min(pending_.size(), s.size() - 1); k > hold; --k)
            if (pending_.compare(pending_.size() - k, k, s, 0, k) == 0) {
                hold = k;
                break;
            }
    std::string out = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    reply_ += out;
    return out;
}

std::string StopStringFilter::flush() {
    if (stopped_) return "";
    std::string out = std::move(pending_);
    pending_.clear();
    reply_ += out;
    return out;
}

}  // namespace medusa
