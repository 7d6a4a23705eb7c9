// How each family's chat template writes a conversation: every renderer follows the template it
// names (Jinja as transformers renders it, or the family's own code), over messages already shaped
// by render_messages for what the format can hold.
#include <cstring>
#include <optional>
#include <stdexcept>

#include "model/chat_markers.h"
#include "model/chat_template.h"

namespace medusa {

using namespace chat_markers;

namespace {

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

// Python's str.rstrip(), Unicode whitespace included.
std::string py_rstrip(const std::string& s, size_t b = 0) {
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

// Jinja2's `trim` filter: Python's str.strip().
std::string py_strip(const std::string& s) {
    size_t b = 0;
    while (b < s.size())
        if (const size_t n = py_space_at(s, b)) b += n;
        else break;
    return py_rstrip(s, b);
}

// Whether ms[i] is a last assistant message: a prefill, written up to the end of its text (less
// trailing whitespace, as transformers' continue_final_message cuts it) and left open.
bool open_at(const std::vector<ChatMessage>& ms, size_t i) {
    return i + 1 == ms.size() && ms[i].role == ChatRole::Assistant;
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

std::string tool_response(const std::string& content) { return "<tool_response>\n" + content + "\n</tool_response>"; }

// Llama 3.1's template writes a call as {"name": NAME, "parameters": ARGUMENTS} in place of the
// message's text; here after it, one per line.
std::string with_llama3_calls(const ChatMessage& m) {
    std::string out = strip(m.content);
    for (const ToolCall& call : m.tool_calls) {
        if (!out.empty()) out += "\n";
        out += "{\"name\": \"" + call.name + "\", \"parameters\": " + (call.arguments.empty() ? "{}" : call.arguments) + "}";
    }
    return out;
}

bool writes_tools(ChatTemplate t) {
    return t == ChatTemplate::ChatML || t == ChatTemplate::Qwen3 || t == ChatTemplate::Llama3;
}
bool alternates(ChatTemplate t) {
    return t == ChatTemplate::VicunaV11 || t == ChatTemplate::Llama2Chat || t == ChatTemplate::Gemma;
}

// Tool calls and results as text, for formats without tools of their own.
void tools_as_text(std::vector<ChatMessage>& ms) {
    for (ChatMessage& m : ms) {
        if (m.role == ChatRole::Tool) m = {ChatRole::User, tool_response(m.content), {}};
        else if (!m.tool_calls.empty()) m = {m.role, with_tool_call_blocks(m), {}};
    }
}

// Turns that alternate: the leading system messages joined, a later one the user's, neighbours of
// one role joined by a blank line, and an empty user turn before an assistant's first message.
std::vector<ChatMessage> alternated(std::vector<ChatMessage> ms) {
    std::vector<ChatMessage> out;
    for (ChatMessage& m : ms) {
        if (m.role == ChatRole::System && !(out.empty() || out.back().role == ChatRole::System)) m.role = ChatRole::User;
        if (!out.empty() && out.back().role == m.role) {
            std::string& joined = out.back().content;
            joined += (joined.empty() || m.content.empty() ? "" : "\n\n") + m.content;
            continue;
        }
        if (m.role == ChatRole::Assistant && (out.empty() || out.back().role == ChatRole::System))
            out.push_back({ChatRole::User, "", {}});
        out.push_back(std::move(m));
    }
    return out;
}

// Splits off a leading system message's content.
std::string leading_system(std::vector<ChatMessage>::const_iterator& it, const std::vector<ChatMessage>& ms) {
    if (it == ms.end() || it->role != ChatRole::System) return "";
    return (it++)->content;
}

// FastChat conversation.py, template "vicuna_v1.1", SeparatorStyle.ADD_COLON_TWO with sep=" ",
// sep2="</s>": system + sep, then "ROLE: message" + (sep after a user message, sep2 after an
// assistant message), and the open "ASSISTANT:" last. `ms` alternates.
ChatPrompt render_vicuna(const std::vector<ChatMessage>& ms) {
    Builder b;
    auto it = ms.begin();
    if (const std::string system = leading_system(it, ms); !system.empty()) b.text(system + " ");
    for (; it != ms.end(); ++it) {
        if (it->role == ChatRole::User) {
            b.text("USER: " + it->content + " ");
        } else if (it + 1 == ms.end()) {
            b.text("ASSISTANT: " + py_rstrip(it->content));
            return b.p;
        } else {
            b.text("ASSISTANT: " + it->content).special(kEos);
        }
    }
    b.text("ASSISTANT:");
    return b.p;
}

// Meta llama/generation.py chat_completion: the system prompt is wrapped in B_SYS/E_SYS and
// prepended to the first user message; each answered turn is encode("[INST] {u.strip()} [/INST]
// {a.strip()} ", bos, eos), the open turn encode("[INST] {u.strip()} [/INST]", bos). `ms`
// alternates.
ChatPrompt render_llama2(const std::vector<ChatMessage>& ms) {
    auto it = ms.begin();
    const std::string system = leading_system(it, ms);
    Builder b;
    for (bool first = true; it != ms.end(); ++it) {
        if (it->role == ChatRole::Assistant) {
            // std::string(" "): GCC 12's -Wrestrict misfires on "literal" + std::string&&.
            b.text(std::string(" ") + strip(it->content));
            if (it + 1 == ms.end()) return b.p;
            b.text(" ").special(kEos);
            continue;
        }
        if (!first) b.special(kBos);  // the first BOS is the tokenizer's (see the header)
        const std::string user = first && !system.empty() ? "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + it->content : it->content;
        b.text("[INST] " + strip(user) + " [/INST]");
        first = false;
    }
    return b.p;
}

// HuggingFaceH4/zephyr-7b-beta (and TinyLlama-1.1B-Chat-v1.0) tokenizer_config.json chat_template,
// rendered with trim_blocks as transformers does: each message "<|role|>\n" + content + eos_token,
// then the newline after "}}"; the generation prompt "<|assistant|>" and its newline.
ChatPrompt render_zephyr(const std::vector<ChatMessage>& ms) {
    Builder b;
    for (size_t i = 0; i < ms.size(); ++i) {
        const ChatMessage& m = ms[i];
        if (open_at(ms, i)) return b.text("<|assistant|>\n" + py_rstrip(m.content)).p;
        b.text(std::string("<|") + chat_role_name(m.role) + "|>\n" + m.content).special(kEos).text("\n");
    }
    b.text("<|assistant|>\n");
    return b.p;
}

// Qwen's chat_template (Qwen2.5's and Qwen3's alike here): ChatML per message, an assistant's tool
// calls after its text, and each run of tool results in one user turn, "\n<tool_response>\n" +
// content + "\n</tool_response>" each. `content` gives an assistant message's text. False when the
// last message was a prefill, left open.
template <class AssistantContent>
bool write_qwen_messages(Builder& b, const std::vector<ChatMessage>& ms, AssistantContent content) {
    for (size_t i = 0; i < ms.size(); ++i) {
        const ChatMessage& m = ms[i];
        if (m.role == ChatRole::Tool) {
            if (i == 0 || ms[i - 1].role != ChatRole::Tool) b.special(kImStart).text("user");
            b.text(std::string("\n") + tool_response(m.content));
            if (i + 1 == ms.size() || ms[i + 1].role != ChatRole::Tool) b.special(kImEnd).text("\n");
            continue;
        }
        if (m.role == ChatRole::Assistant) {
            b.special(kImStart).text("assistant\n");
            content(b, i);
            if (open_at(ms, i)) {
                if (!b.p.parts.back().special) b.p.parts.back().text = py_rstrip(b.p.parts.back().text);
                return false;
            }
            b.special(kImEnd).text("\n");
            continue;
        }
        b.special(kImStart).text(std::string(chat_role_name(m.role)) + "\n" + m.content).special(kImEnd).text("\n");
    }
    return true;
}

// ChatML (OpenAI's chatml.md; the chat_template of ChatML fine-tunes, Qwen2's among them):
// "<|im_start|>" + role + "\n" + content + "<|im_end|>" + "\n" per message, the generation prompt
// "<|im_start|>assistant\n"; tools as Qwen writes them.
ChatPrompt render_chatml(const std::vector<ChatMessage>& ms) {
    Builder b;
    if (!write_qwen_messages(b, ms, [&](Builder& out, size_t i) { out.text(with_tool_call_blocks(ms[i])); })) return b.p;
    b.special(kImStart).text("assistant\n");
    return b.p;
}

// Meta-Llama-3-8B-Instruct's chat_template: after bos_token, each message is "<|start_header_id|>" +
// role + "<|end_header_id|>\n\n" + content|trim + "<|eot_id|>"; the generation prompt is the
// assistant's header. Tool results take Llama 3.1's "ipython" role.
ChatPrompt render_llama3(const std::vector<ChatMessage>& ms) {
    Builder b;
    for (size_t i = 0; i < ms.size(); ++i) {
        const ChatMessage& m = ms[i];
        const char* role = m.role == ChatRole::Tool ? "ipython" : chat_role_name(m.role);
        const std::string content = m.role == ChatRole::Assistant ? with_llama3_calls(m) : strip(m.content);
        b.special(kHeaderStart).text(role).special(kHeaderEnd).text("\n\n" + content);
        if (open_at(ms, i)) return b.p;
        b.special(kEotId);
    }
    b.special(kHeaderStart).text("assistant").special(kHeaderEnd).text("\n\n");
    return b.p;
}

// Qwen3's chat_template (Qwen/Qwen3-* tokenizer_config.json; the copy in tests/data/chat_templates),
// as transformers renders it, tools as in write_qwen_messages. An assistant message has its content
// cut to what follows the last "</think>", less leading newlines, when it holds one, except that a
// reply after the last real user query (a user message that is not a
// "<tool_response>...</tool_response>") keeps its reasoning, as "<think>\n{reasoning}\n</think>\n\n
// {content}", when it has some. Then "<|im_start|>assistant\n", and "<think>\n\n</think>\n\n" when
// enable_thinking is false.
ChatPrompt render_qwen3(const std::vector<ChatMessage>& ms, bool thinking) {
    size_t last_query = ms.size();  // none: every reply loses its reasoning
    for (size_t i = ms.size(); i-- > 0;) {
        const std::string& m = ms[i].content;
        if (ms[i].role == ChatRole::User && !(m.starts_with("<tool_response>") && m.ends_with("</tool_response>"))) {
            last_query = i;
            break;
        }
    }
    Builder b;
    b.p.bos = false;
    const bool closed = write_qwen_messages(b, ms, [&](Builder& out, size_t i) {
        const std::string& m = ms[i].content;
        std::string content = m, reasoning;
        if (const size_t close = m.rfind(kThinkClose); close != std::string::npos) {
            content = lstrip_newlines(m.substr(close + std::strlen(kThinkClose)));
            const std::string before = rstrip_newlines(m.substr(0, m.find(kThinkClose)));
            const size_t open = before.rfind(kThinkOpen);
            reasoning = lstrip_newlines(open == std::string::npos ? before : before.substr(open + std::strlen(kThinkOpen)));
        }
        const std::string text = with_tool_call_blocks({ChatRole::Assistant, content, ms[i].tool_calls});
        if (last_query < ms.size() && i > last_query && (i + 1 == ms.size() || !reasoning.empty()))
            out.special(kThinkOpen).text("\n" + strip_newlines(reasoning) + "\n").special(kThinkClose)
                .text("\n\n" + lstrip_newlines(text));
        else
            out.text(text);
    });
    if (!closed) return b.p;
    b.special(kImStart).text("assistant\n");
    if (!thinking) b.special(kThinkOpen).text("\n\n").special(kThinkClose).text("\n\n");
    return b.p;
}

// Gemma 3's chat_template (google/gemma-3-*-it; the copy in tests/data/chat_templates): bos_token,
// then per message "<start_of_turn>" + role ("model" for the assistant) + "\n", the system
// message's content + "\n\n" (untrimmed) in front of the first message after it, the content | trim,
// "<end_of_turn>\n"; the generation prompt "<start_of_turn>model\n". `ms` alternates.
ChatPrompt render_gemma(const std::vector<ChatMessage>& ms) {
    Builder b;
    b.p.bos = true;
    auto it = ms.begin();
    const std::string system = leading_system(it, ms);
    std::string prefix = system.empty() ? "" : system + "\n\n";
    for (; it != ms.end(); ++it) {
        const char* role = it->role == ChatRole::Assistant ? "model" : "user";
        b.special(kStartOfTurn).text(std::string(role) + "\n" + prefix + py_strip(it->content));
        if (it->role == ChatRole::Assistant && it + 1 == ms.end()) return b.p;
        b.special(kEndOfTurn).text("\n");
        prefix.clear();
    }
    b.special(kStartOfTurn).text("model\n");
    return b.p;
}

// microsoft/Phi-3-mini-4k-instruct's chat_template (and Phi-3.5-mini-instruct's, which leaves out an
// empty system message): "<|" + role + "|>\n" + content + "<|end|>\n" per message, the generation
// prompt "<|assistant|>\n". Phi-4-mini-instruct's writes the same markers without the newlines.
// Phi-3.5's leaves out an empty system message; so does this, for both.
ChatPrompt render_phi(const std::vector<ChatMessage>& ms, bool newlines) {
    Builder b;
    b.p.bos = false;
    b.p.specials_eat_space = newlines;  // Phi-3's specials are rstrip; Phi-4-mini's are not
    const std::string nl = newlines ? "\n" : "";
    for (size_t i = 0; i < ms.size(); ++i) {
        const ChatMessage& m = ms[i];
        if (m.role == ChatRole::System && m.content.empty()) continue;
        if (open_at(ms, i)) return b.special(kPhiAssistant).text(nl + py_rstrip(m.content)).p;
        b.special(std::string("<|") + chat_role_name(m.role) + "|>").text(nl + m.content).special(kPhiEnd).text(nl);
    }
    b.special(kPhiAssistant).text(nl);
    return b.p;
}

ChatPrompt render_shaped(ChatTemplate t, const std::vector<ChatMessage>& ms, bool thinking) {
    switch (t) {
        case ChatTemplate::VicunaV11: return render_vicuna(ms);
        case ChatTemplate::Llama2Chat: return render_llama2(ms);
        case ChatTemplate::Zephyr: return render_zephyr(ms);
        case ChatTemplate::ChatML: return render_chatml(ms);
        case ChatTemplate::Llama3: return render_llama3(ms);
        case ChatTemplate::Qwen3: return render_qwen3(ms, thinking);
        case ChatTemplate::Gemma: return render_gemma(ms);
        case ChatTemplate::Phi3: return render_phi(ms, true);
        case ChatTemplate::Phi4: return render_phi(ms, false);
        case ChatTemplate::None: break;
    }
    throw std::invalid_argument("render_chat: no chat template to render with");
}

}  // namespace

std::string with_tool_call_blocks(const ChatMessage& m) {
    std::string out = m.content;
    for (const ToolCall& call : m.tool_calls) {
        if (!out.empty()) out += "\n";
        out += "<tool_call>\n{\"name\": \"" + call.name + "\", \"arguments\": " +
               (call.arguments.empty() ? "{}" : call.arguments) + "}\n</tool_call>";
    }
    return out;
}

std::vector<ChatMessage> with_tools_offered(std::vector<ChatMessage> ms, const std::vector<std::string>& tools) {
    if (tools.empty()) return ms;
    std::string text =
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    for (const std::string& tool : tools) text += "\n" + tool;
    text += "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
            "<args-json-object>}\n</tool_call>";
    if (!ms.empty() && ms.front().role == ChatRole::System) ms.front().content += "\n\n" + text;
    else ms.insert(ms.begin(), {ChatRole::System, text, {}});
    return ms;
}

const char* chat_role_name(ChatRole r) {
    switch (r) {
        case ChatRole::System: return "system";
        case ChatRole::User: return "user";
        case ChatRole::Assistant: return "assistant";
        case ChatRole::Tool: return "tool";
    }
    return "?";
}

std::vector<ChatMessage> Conversation::messages() const {
    std::vector<ChatMessage> ms;
    if (!system.empty()) ms.push_back({ChatRole::System, system, {}});
    for (const ChatTurn& t : history) {
        ms.push_back({ChatRole::User, t.user, {}});
        ms.push_back({ChatRole::Assistant, t.assistant, {}});
    }
    ms.push_back({ChatRole::User, user, {}});
    return ms;
}

ChatPrompt render_chat(ChatTemplate t, const Conversation& conv) { return render_messages(t, conv.messages(), conv.thinking); }

ChatPrompt render_messages(ChatTemplate t, std::vector<ChatMessage> ms, bool thinking, const std::vector<std::string>& tools) {
    if (t == ChatTemplate::None) throw std::invalid_argument("render_chat: no chat template to render with");
    ms = with_tools_offered(std::move(ms), tools);
    if (!writes_tools(t)) tools_as_text(ms);
    if (alternates(t)) {
        ms = alternated(std::move(ms));
        if (ms.empty() || ms.back().role == ChatRole::System) ms.push_back({ChatRole::User, "", {}});
    }
    return render_shaped(t, ms, thinking);
}

}  // namespace medusa
