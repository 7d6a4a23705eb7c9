// Chat prompt formats of the model families this engine runs: which one a model file was trained
// with, how a conversation becomes its prompt, and where the model's reply ends.
//
// BOS: a rendered ChatPrompt never holds the leading BOS. encode_chat() puts it first, as the
// families' own tokenizers do (Meta's Llama-2 code encodes with bos=True; the Hugging Face
// LlamaTokenizer of Vicuna, Zephyr/TinyLlama and Llama ChatML fine-tunes has add_bos_token=true and
// their Jinja templates do not write it). Llama-2's later turns start with a BOS of their own: that
// one is in the prompt, as a special part. Qwen3, Gemma and Phi say it themselves
// (ChatPrompt::bos): Hugging Face's apply_chat_template tokenizes the rendered text without adding
// specials, so their prompts start with BOS exactly when the Jinja template writes bos_token:
// Gemma's does; Qwen3's, Phi-3's, Phi-3.5's and Phi-4-mini's do not (their tokenizer_config.json
// also has add_bos_token false).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace medusa {

struct ModelFile;
class Tokenizer;

enum class ChatTemplate {
    None,        // no chat format: the prompt is continued as it is (llama2.c story models)
    VicunaV11,   // FastChat "vicuna_v1.1": "{system} USER: {user} ASSISTANT: {reply}</s>USER: ..."
    Llama2Chat,  // Meta Llama-2 chat: "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {reply} </s><s>[INST] ..."
    Zephyr,      // HuggingFaceH4 Zephyr / TinyLlama-Chat v1.0: "<|system|>\n...</s>\n<|user|>\n...</s>\n<|assistant|>\n"
    ChatML,      // "<|im_start|>system\n...<|im_end|>\n<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n" (Qwen2)
    Llama3,      // "<|start_header_id|>user<|end_header_id|>\n\n...<|eot_id|>" per message, after BOS
    // Qwen3 (Qwen/Qwen3-*): ChatML, but earlier replies lose their "<think>...</think>" reasoning, and
    // with thinking off the prompt ends in an empty "<think>\n\n</think>\n\n" (Conversation::thinking).
    Qwen3,
    // Gemma 3 instruction-tuned (Gemma 1/2 write the same turns): BOS, then per message
    // "<start_of_turn>user\n" (or "model\n") + content|trim + "<end_of_turn>\n", the system prompt and
    // "\n\n" in front of the first user message; the open "<start_of_turn>model\n".
    Gemma,
    // Phi-3 / Phi-3.5 instruct: "<|system|>\n...<|end|>\n<|user|>\n...<|end|>\n<|assistant|>\n", no BOS
    // (the template since Phi-3-mini's mid-2024 update; its first one wrote bos_token and no system block).
    Phi3,
    // Phi-4-mini instruct: the same markers without the newlines: "<|system|>...<|end|><|user|>...<|end|><|assistant|>".
    Phi4,
};

// "none", "vicuna_v1.1", "llama2_chat", "zephyr", "chatml", "llama3", "qwen3", "gemma", "phi3", "phi4".
const char* chat_template_name(ChatTemplate t);
// Accepts the names above and a few spellings ("vicuna", "llama2", "llama-2", "tinyllama", "chat-ml",
// "gemma3", "phi-3", "phi3.5", "phi-4-mini").
std::optional<ChatTemplate> parse_chat_template(const std::string& name);
// Every template's name, the formats first and "none" last, joined by `separator`: what
// --chat-template takes, for its help and its errors.
std::string chat_template_names(const std::string& separator);

// Recognises a family from a Jinja chat template by its markers: "<|start_header_id|>" (Llama 3),
// "<|im_start|>" with "<think>" and "</think>" (Qwen3), "<|im_start|>" otherwise (ChatML),
// "[INST]" with "<<SYS>>" (Llama-2), "<start_of_turn>" with "<end_of_turn>" (Gemma), "<|assistant|>"
// with "<|end|>" (Phi: Phi-3 when a newline follows a role marker, Phi-4-mini when none does),
// "<|user|>" and "<|assistant|>" without "<|end|>" (Zephyr), "USER:" with "ASSISTANT:" (Vicuna).
// None when nothing matches.
ChatTemplate detect_chat_template_jinja(const std::string& jinja);

struct ChatTemplateDetection {
    ChatTemplate kind = ChatTemplate::None;
    std::string reason;  // where the answer came from, for messages ("GGUF tokenizer.chat_template: ChatML markers")
    bool named = false;  // the user named it (--chat-template), not the file
};
// GGUF: the file's tokenizer.chat_template. Hugging Face folders: tokenizer_config.json's
// chat_template next to the weights, else config.json's _name_or_path. llama2.c: None.
ChatTemplateDetection detect_chat_template(const ModelFile& model);
// Its Hugging Face sources on the files' texts (`name` names the file): tokenizer_config.json's
// chat_template, and config.json's _name_or_path. nullopt when the file holds neither; throws
// FormatError naming the file for malformed JSON and for values of the wrong type.
std::optional<ChatTemplateDetection> detect_chat_template_tokenizer_config(const std::string& json_text,
                                                                           const std::string& name);
std::optional<ChatTemplateDetection> detect_chat_template_config(const std::string& json_text, const std::string& name);

// One message of a conversation, as OpenAI's chat API sends them: any roles in any order.
enum class ChatRole { System, User, Assistant, Tool };
const char* chat_role_name(ChatRole r);  // "system", "user", "assistant", "tool"
// A call the assistant made to one of the client's tools; `arguments` is the call's JSON text.
struct ToolCall {
    std::string id, name, arguments;
    bool operator==(const ToolCall&) const = default;
};
struct ChatMessage {
    ChatRole role = ChatRole::User;
    std::string content;
    std::vector<ToolCall> tool_calls;  // an assistant's
    bool operator==(const ChatMessage&) const = default;
};

// An assistant message's content with its tool calls after it, as Qwen's templates (and
// Hermes-style tool models) write them: <tool_call>\n{"name": NAME, "arguments": ARGUMENTS}\n</tool_call>,
// a newline between blocks.
std::string with_tool_call_blocks(const ChatMessage& m);
// The messages with `tools` offered as Qwen3's template offers them: in the system message (one
// first when there is none), after its text and a blank line, a "# Tools" block listing each tool's
// JSON on a line of its own in <tools></tools> and asking for <tool_call> blocks.
std::vector<ChatMessage> with_tools_offered(std::vector<ChatMessage> messages, const std::vector<std::string>& tools);

struct ChatTurn {
    std::string user, assistant;
};
// The usual shape of a chat: a system prompt, answered turns, and the message to answer.
struct Conversation {
    std::string system;            // empty: no system block (Vicuna then starts at "USER:")
    std::vector<ChatTurn> history;  // earlier turns, oldest first, with the replies the model gave
    std::string user;              // the new message, whose reply the prompt asks for
    // Qwen3 only: its template's enable_thinking. On (the template's default, and this engine's) the
    // model opens its reply with "<think>...</think>" reasoning; off, the prompt ends in an empty
    // think block and the model answers at once. Either way earlier replies are rendered without
    // their reasoning, as the template does.
    bool thinking = true;
    std::vector<ChatMessage> messages() const;  // the system message (when not empty), the turns, the user's
};

// One stretch of a prompt: plain text, or a special token written as its piece ("<s>", "</s>",
// "<|im_start|>", "<|im_end|>") that encode_chat() turns into that token's id.
struct ChatPart {
    bool special = false;
    std::string text;
    bool operator==(const ChatPart&) const = default;
};
struct ChatPrompt {
    std::vector<ChatPart> parts;
    // Whether encode_chat() puts BOS first: what the family's template says (Gemma: yes; Qwen3, Phi:
    // no), or, unset, whatever the tokenizer does (Tokenizer::adds_bos: the older families).
    std::optional<bool> bos;
    // Phi-3's role and end markers swallow the whitespace after them when tokenized ("rstrip": true
    // in its tokenizer_config.json, as llama.cpp's RSTRIP attribute on Phi-3's specials), so the
    // newlines its template writes after them are in text() but not among the tokens.
    bool specials_eat_space = false;
    std::string text() const;  // all parts concatenated (specials as their pieces), without the leading BOS
};

// The family's system prompt when the user gives none: FastChat's for Vicuna, empty otherwise.
std::string default_system_prompt(ChatTemplate t);
// The prompt that asks for the reply to conv.user. Throws std::invalid_argument for None.
ChatPrompt render_chat(ChatTemplate t, const Conversation& conv);
// The prompt for the assistant's next message after `messages`, in any order of roles, the way the
// family's template writes them:
// - a system message after the first is written where it stands, as a tool message is (ChatML and
//   Qwen3 group tool results in a user turn as <tool_response> blocks; Llama 3 gives them the
//   "ipython" role, as Llama 3.1's template does), and an assistant's tool calls follow its text
//   (<tool_call> blocks; Llama 3: {"name": ..., "parameters": ...}).
// - Formats without tools (Vicuna, Llama 2, Zephyr, Gemma, Phi) get the same <tool_call> text in
//   the assistant's message and each tool result as a user message holding a <tool_response> block.
// - Formats whose turns must alternate (Vicuna, Llama 2, Gemma) join consecutive messages of one
//   role with a blank line, read a later system message as the user's, and put an empty user turn
//   before an assistant message that would come first.
// - A last assistant message is a prefill that the model continues: the prompt is the conversation
//   written up to the end of that message's text, less trailing whitespace, as transformers'
//   continue_final_message cuts it (Qwen3 thus writes its think block before it).
// - `tools` (each tool's JSON as Python's json.dumps writes it, as the templates' tojson does) are
//   offered as Qwen's templates offer them: a "# Tools" block in the system message, after its
//   text, asking for <tool_call> blocks; every format gets the same block.
// Throws std::invalid_argument for None.
ChatPrompt render_messages(ChatTemplate t, std::vector<ChatMessage> messages, bool thinking = true,
                           const std::vector<std::string>& tools = {});

// BOS when the model's prompts start with one (not Qwen2's; ChatPrompt::bos), then each part: text
// through the tokenizer, specials by their piece's id ("<s>" and "</s>" are the tokenizer's BOS and
// EOS). A special piece that the vocabulary lacks is encoded as text, as a tokenizer without that
// added token would.
std::vector<int> encode_chat(const ChatPrompt& prompt, const Tokenizer& tok);

// The tokens that end a reply: EOS for every family, "<|im_end|>" for ChatML and "<|eot_id|>",
// "<|eom_id|>" for Llama 3, when the vocabulary has them as one piece. The newer families' as their
// generation_config.json lists them: Qwen3 "<|im_end|>", "<|endoftext|>"; Gemma "<end_of_turn>",
// "<eos>"; Phi-3 "<|end|>", "<|endoftext|>", "<|assistant|>"; Phi-4-mini "<|end|>", "<|endoftext|>".
std::vector<int> chat_stop_tokens(ChatTemplate t, const Tokenizer& tok);
// Texts that end a reply when they appear in it: the end-of-turn marker written out, and the start
// of the next user turn (a small model that never learnt to emit EOS goes on with "USER:" etc.).
std::vector<std::string> chat_stop_strings(ChatTemplate t);

// Streams reply text while holding back what could be the start of a stop string; after a stop
// string appears, stopped() is true and nothing from it on is returned.
class StopStringFilter {
public:
    explicit StopStringFilter(std::vector<std::string> stops);
    std::string feed(const std::string& piece);  // the text now safe to show
    std::string flush();                         // at the end: what was held back
    bool stopped() const { return stopped_; }
    const std::string& reply() const { return reply_; }  // everything shown, before the stop string

private:
    std::vector<std::string> stops_;
    std::string pending_, reply_;
    bool stopped_ = false;
};

}  // namespace medusa
