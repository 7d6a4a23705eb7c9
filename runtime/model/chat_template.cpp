#include "model/chat_template.h"

#include <algorithm>
#include <cctype>
#include <cstring>
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
const char* kEndOfText = "<|endoftext|>";
const char* kThinkOpen = "<think>";
const char* kThinkClose = "</think>";
const char* kStartOfTurn = "<start_of_turn>";
const char* kEndOfTurn = "<end_of_turn>";
const char* kGemmaEos = "<eos>";
const char* kPhiEnd = "<|end|>";
const char* kPhiUser = "<|user|>";
const char* kPhiAssistant = "<|assistant|>";

// The length of the character at s[i] when it is one that Python's str.isspace() accepts (what
// Jinja2's trim filter strips: ASCII \t\n\v\f\r, \x1c-\x1f and space, and in UTF-8 U+0085, U+00A0,
// U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), 0 otherwise.
size_t py_space_at(const std::string& s, size_t i) {
    const auto b = [&](size_t k) { return i + k < s.size() ? (unsigned char)s[i + k] : 0u; };
    const unsigned c = b(0);
    if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
    if (c == 0xc2 && (b(1) == 0x85 || b(1) == 0xa0)) return 2;
    if (c == 0xe1 && b(1) == 0x9a && b(2) == 0x80) return 3;  // U+1680
    if (c == 0xe2 && b(1) == 0x80 && ((b(2) >= 0x80 && b(2) <= 0x8a) || b(2) == 0xa8 || b(2) == 0xa9 || b(2) == 0xaf))
        return 3;                                                // U+2000-U+200A, U+2028, U+2029, U+202F
    if (c == 0xe2 && b(1) == 0x81 && b(2) == 0x9f) return 3;  // U+205F
    if (c == 0xe3 && b(1) == 0x80 && b(2) == 0x80) return 3;  // U+3000
    return 0;
}

// Jinja2's `trim` filter: Python's str.strip(), Unicode whitespace included.
std::string py_strip(const std::string& s) {
    size_t b = 0;
    while (b < s.size())
        if (const size_t n = py_space_at(s, b)) b += n;
        else break;
    // From the end: the last character's first byte is the last byte that is not a continuation byte.
    size_t e = s.size();
    while (e > b) {
        size_t start = e - 1;
        while (start > b && ((unsigned char)s[start] & 0xc0) == 0x80) --start;
        if (py_space_at(s, start) != e - start) break;
        e = start;
    }
    return s.substr(b, e - b);
}

std::string lstrip_newlines(const std::string& s) {
    const size_t b = s.find_first_not_of('\n');
    return b == std::string::npos ? "" : s.substr(b);
}
std::string rstrip_newlines(const std::string& s) {
    const size_t e = s.find_last_not_of('\n');
    return e == std::string::npos ? "" : s.substr(0, e + 1);
}
std::string strip_newlines(const std::string& s) { return lstrip_newlines(rstrip_newlines(s)); }

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

// Qwen3's chat_template (Qwen/Qwen3-* tokenizer_config.json; the copy in tests/data/chat_templates),
// for a conversation without tools, as transformers renders it. After the system message, every
// message in order: a user message as ChatML; an assistant message as ChatML with its content cut
// to what follows the last "</think>", less leading newlines, when it holds one, except that a reply
// after the last real user query (one that is not a "<tool_response>...</tool_response>") keeps
// its reasoning, as "<think>\n{reasoning}\n</think>\n\n{content}", when it has some. Then
// "<|im_start|>assistant\n", and "<think>\n\n</think>\n\n" when enable_thinking is false.
ChatPrompt render_qwen3(const Conversation& c) {
    struct Message {
        const char* role;
        const std::string* content;
    };
    std::vector<Message> messages;
    if (!c.system.empty()) messages.push_back({"system", &c.system});
    for (const ChatTurn& t : c.history) {
        messages.push_back({"user", &t.user});
        messages.push_back({"assistant", &t.assistant});
    }
    messages.push_back({"user", &c.user});

    size_t last_query = messages.size() - 1;
    for (size_t i = messages.size(); i-- > 0;) {
        const std::string& m = *messages[i].content;
        if (std::string(messages[i].role) == "user" &&
            !(m.starts_with("<tool_response>") && m.ends_with("</tool_response>"))) {
            last_query = i;
            break;
        }
    }

    Builder b;
    b.p.bos = false;
    for (size_t i = 0; i < messages.size(); ++i) {
        const std::string role = messages[i].role;
        const std::string& m = *messages[i].content;
        if (role != "assistant") {
            b.special(kImStart).text(role + "\n" + m).special(kImEnd).text("\n");
            continue;
        }
        std::string content = m, reasoning;
        if (const size_t close = m.rfind(kThinkClose); close != std::string::npos) {
            content = lstrip_newlines(m.substr(close + std::strlen(kThinkClose)));
            const std::string before = rstrip_newlines(m.substr(0, m.find(kThinkClose)));
            const size_t open = before.rfind(kThinkOpen);
            reasoning = lstrip_newlines(open == std::string::npos ? before : before.substr(open + std::strlen(kThinkOpen)));
        }
        b.special(kImStart).text("assistant\n");
        // The template's test is "loop.last or reasoning_content"; here the last message is the user's.
        if (i > last_query && !reasoning.empty())
            b.special(kThinkOpen).text("\n" + strip_newlines(reasoning) + "\n").special(kThinkClose)
                .text("\n\n" + lstrip_newlines(content));
        else
            b.text(content);
        b.special(kImEnd).text("\n");
    }
    b.special(kImStart).text("assistant\n");
    if (!c.thinking) b.special(kThinkOpen).text("\n\n").special(kThinkClose).text("\n\n");
    return b.p;
}

// Gemma 3's chat_template (google/gemma-3-*-it; the copy in tests/data/chat_templates): bos_token,
// then per message "<start_of_turn>" + role ("model" for the assistant) + "\n", the system
// message's content + "\n\n" (untrimmed) in front of the first user message, the content | trim,
// "<end_of_turn>\n"; the generation prompt "<start_of_turn>model\n".
ChatPrompt render_gemma(const Conversation& c) {
    Builder b;
    b.p.bos = true;
    std::string prefix = c.system.empty() ? "" : c.system + "\n\n";
    auto message = [&](const char* role, const std::string& content) {
        b.special(kStartOfTurn).text(std::string(role) + "\n" + prefix + py_strip(content)).special(kEndOfTurn).text("\n");
        prefix.clear();
    };
    for (const ChatTurn& t : c.history) {
        message("user", t.user);
        message("model", t.assistant);
    }
    message("user", c.user);
    b.special(kStartOfTurn).text("model\n");
    return b.p;
}

// microsoft/Phi-3-mini-4k-instruct's chat_template (and Phi-3.5-mini-instruct's, which leaves out an
// empty system message): "<|" + role + "|>\n" + content + "<|end|>\n" per message, the generation
// prompt "<|assistant|>\n". Phi-4-mini-instruct's writes the same markers without the newlines.
ChatPrompt render_phi(const Conversation& c, bool newlines) {
    Builder b;
    b.p.bos = false;
    b.p.specials_eat_space = newlines;  // Phi-3's specials are rstrip; Phi-4-mini's are not
    const std::string nl = newlines ? "\n" : "";
    auto message = [&](const char* role, const std::string& content) {
        b.special(std::string("<|") + role + "|>").text(nl + content).special(kPhiEnd).text(nl);
    };
    if (!c.system.empty()) message("system", c.system);
    for (const ChatTurn& t : c.history) {
        message("user", t.user);
        message("assistant", t.assistant);
    }
    message("user", c.user);
    b.special(kPhiAssistant).text(nl);
    return b.p;
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

ChatPrompt render_chat(ChatTemplate t, const Conversation& conv) {
    switch (t) {
        case ChatTemplate::VicunaV11: return render_vicuna(conv);
        case ChatTemplate::Llama2Chat: return render_llama2(conv);
        case ChatTemplate::Zephyr: return render_zephyr(conv);
        case ChatTemplate::ChatML: return render_chatml(conv);
        case ChatTemplate::Llama3: return render_llama3(conv);
        case ChatTemplate::Qwen3: return render_qwen3(conv);
        case ChatTemplate::Gemma: return render_gemma(conv);
        case ChatTemplate::Phi3: return render_phi(conv, true);
        case ChatTemplate::Phi4: return render_phi(conv, false);
        case ChatTemplate::None: break;
    }
    throw std::invalid_argument("render_chat: no chat template to render with");
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
