#include "model/chat_template.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/file_bytes.h"
#include "model/json_file.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa {

namespace fs = std::filesystem;

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower((unsigned char)c));
    return s;
}

std::string strip(const std::string& s) {
    const char* ws = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Builds a prompt part by part, joining neighbouring text.
struct Builder {
    ChatPrompt p;
    Builder& text(const std::string& t) {
        if (t.empty()) return *this;
        if (!p.parts.empty() && !p.parts.back().special) p.parts.back().text += t;
        else p.parts.push_back({false, t});
        return *this;
    }
    Builder& special(const std::string& piece) {
        p.parts.push_back({true, piece});
        return *this;
    }
};

const char* kBos = "<s>";
const char* kEos = "</s>";
const char* kImStart = "<|im_start|>";
const char* kImEnd = "<|im_end|>";
const char* kHeaderStart = "<|start_header_id|>";
const char* kHeaderEnd = "<|end_header_id|>";
const char* kEotId = "<|eot_id|>";
const char* kEomId = "<|eom_id|>";

// FastChat conversation.py, template "vicuna_v1.1", SeparatorStyle.ADD_COLON_TWO with sep=" ",
// sep2="</s>": system + sep, then "ROLE: message" + (sep after a user message, sep2 after an
// assistant message), and the open "ASSISTANT:" last.
ChatPrompt render_vicuna(const Conversation& c) {
    Builder b;
    if (!c.system.empty()) b.text(c.system + " ");
    for (const ChatTurn& t : c.history) {
        b.text("USER: " + t.user + " ");
        b.text("ASSISTANT: " + t.assistant).special(kEos);
    }
    b.text("USER: " + c.user + " ASSISTANT:");
    return b.p;
}

// Meta llama/generation.py chat_completion: the system prompt is wrapped in B_SYS/E_SYS and
// prepended to the first user message; each answered turn is encode("[INST] {u.strip()} [/INST]
// {a.strip()} ", bos, eos), the open turn encode("[INST] {u.strip()} [/INST]", bos).
ChatPrompt render_llama2(const Conversation& c) {
    std::vector<ChatTurn> turns = c.history;
    turns.push_back({c.user, ""});
    if (!c.system.empty()) turns[0].user = "<<SYS>>\n" + c.system + "\n<</SYS>>\n\n" + turns[0].user;
    Builder b;
    for (size_t i = 0; i < turns.size(); ++i) {
        if (i > 0) b.special(kBos);  // the first BOS is the tokenizer's (see the header)
        b.text("[INST] " + strip(turns[i].user) + " [/INST]");
        // std::string(" "): GCC 12's -Wrestrict misfires on "literal" + std::string&&.
        if (i + 1 < turns.size()) b.text(std::string(" ") + strip(turns[i].assistant) + " ").special(kEos);
    }
    return b.p;
}

// HuggingFaceH4/zephyr-7b-beta (and TinyLlama-1.1B-Chat-v1.0) tokenizer_config.json chat_template,
// rendered with trim_blocks as transformers does: each message "<|role|>\n" + content + eos_token,
// then the newline after "}}"; the generation prompt "<|assistant|>" and its newline.
ChatPrompt render_zephyr(const Conversation& c) {
    Builder b;
    auto message = [&](const char* role, const std::string& content) {
        b.text(std::string("<|") + role + "|>\n" + content).special(kEos).text("\n");
    };
    if (!c.system.empty()) message("system", c.system);
    for (const ChatTurn& t : c.history) {
        message("user", t.user);
        message("assistant", t.assistant);
    }
    message("user", c.user);
    b.text("<|assistant|>\n");
    return b.p;
}

// ChatML (OpenAI's chatml.md; the chat_template of ChatML fine-tunes): "<|im_start|>" + role +
// "\n" + content + "<|im_end|>" + "\n" per message, the generation prompt "<|im_start|>assistant\n".
ChatPrompt render_chatml(const Conversation& c) {
    Builder b;
    auto message = [&](const char* role, const std::string& content) {
        b.special(kImStart).text(std::string(role) + "\n" + content).special(kImEnd).text("\n");
    };
    if (!c.system.empty()) message("system", c.system);
    for (const ChatTurn& t : c.history) {
        message("user", t.user);
        message("assistant", t.assistant);
    }
    message("user", c.user);
    b.special(kImStart).text("assistant\n");
    return b.p;
}

// Meta-Llama-3-8B-Instruct's chat_template: after bos_token, each message is "<|start_header_id|>" +
// role + "<|end_header_id|>\n\n" + content|trim + "<|eot_id|>"; the generation prompt is the
// assistant's header.
ChatPrompt render_llama3(const Conversation& c) {
    Builder b;
    auto message = [&](const char* role, const std::string& content) {
        b.special(kHeaderStart).text(role).special(kHeaderEnd).text("\n\n" + strip(content)).special(kEotId);
    };
    if (!c.system.empty()) message("system", c.system);
    for (const ChatTurn& t : c.history) {
        message("user", t.user);
        message("assistant", t.assistant);
    }
    message("user", c.user);
    b.special(kHeaderStart).text("assistant").special(kHeaderEnd).text("\n\n");
    return b.p;
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
ChatTemplate from_model_name(const std::string& name) {
    const std::string n = lower(name);
    if (has(n, "vicuna")) return ChatTemplate::VicunaV11;
    if ((has(n, "llama-2") || has(n, "llama2")) && has(n, "chat")) return ChatTemplate::Llama2Chat;
    if ((has(n, "llama-3") || has(n, "llama3")) && has(n, "instruct")) return ChatTemplate::Llama3;
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
    }
    return "?";
}

std::string chat_template_names(const std::string& separator) {
    std::string out;
    for (ChatTemplate t : {ChatTemplate::VicunaV11, ChatTemplate::Llama2Chat, ChatTemplate::Zephyr, ChatTemplate::ChatML,
                           ChatTemplate::Llama3, ChatTemplate::None})
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
    return std::nullopt;
}

ChatTemplate detect_chat_template_jinja(const std::string& j) {
    if (has(j, "<|start_header_id|>") && has(j, "<|eot_id|>")) return ChatTemplate::Llama3;
    if (has(j, "<|im_start|>")) return ChatTemplate::ChatML;
    if (has(j, "[INST]") && has(j, "<<SYS>>")) return ChatTemplate::Llama2Chat;
    // Phi-3 also writes <|user|>/<|assistant|>, but ends messages with <|end|>, not eos_token.
    if (has(j, "<|user|>") && has(j, "<|assistant|>") && !has(j, "<|end|>")) return ChatTemplate::Zephyr;
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

ChatPrompt render_chat(ChatTemplate t, const Conversation& conv) {
    switch (t) {
        case ChatTemplate::VicunaV11: return render_vicuna(conv);
        case ChatTemplate::Llama2Chat: return render_llama2(conv);
        case ChatTemplate::Zephyr: return render_zephyr(conv);
        case ChatTemplate::ChatML: return render_chatml(conv);
        case ChatTemplate::Llama3: return render_llama3(conv);
        case ChatTemplate::None: break;
    }
    throw std::invalid_argument("render_chat: no chat template to render with");
}

std::vector<int> encode_chat(const ChatPrompt& prompt, const Tokenizer& tok) {
    // Resolve the specials first; one the vocabulary lacks joins the text around it.
    std::vector<std::pair<int, std::string>> runs;  // (token id, "") or (-1, text)
    for (const ChatPart& p : prompt.parts) {
        int id = -1;
        if (p.special) id = p.text == kBos ? tok.bos_id() : p.text == kEos ? tok.eos_id() : tok.find_piece(p.text);
        if (id >= 0) runs.push_back({id, ""});
        else if (!runs.empty() && runs.back().first < 0) runs.back().second += p.text;
        else runs.push_back({-1, p.text});
    }
    std::vector<int> ids;
    if (tok.adds_bos()) ids.push_back(tok.bos_id());
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
