// Chat prompt formats of the model families this engine runs: which one a model file was trained
// with, how a conversation becomes its prompt, and where the model's reply ends.
//
// BOS: a rendered ChatPrompt never holds the leading BOS. encode_chat() puts it first, as the
// families' own tokenizers do (Meta's Llama-2 code encodes with bos=True; the Hugging Face
// LlamaTokenizer of Vicuna, Zephyr/TinyLlama and Llama ChatML fine-tunes has add_bos_token=true and
// their Jinja templates do not write it). Llama-2's later turns start with a BOS of their own: that
// one is in the prompt, as a special part.
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
};

// "none", "vicuna_v1.1", "llama2_chat", "zephyr", "chatml", "llama3".
const char* chat_template_name(ChatTemplate t);
// Accepts the names above and a few spellings ("vicuna", "llama2", "llama-2", "tinyllama", "chat-ml").
std::optional<ChatTemplate> parse_chat_template(const std::string& name);
// Every template's name, the formats first and "none" last, joined by `separator`: what
// --chat-template takes, for its help and its errors.
std::string chat_template_names(const std::string& separator);

// Recognises a family from a Jinja chat template by its markers: "<|start_header_id|>" (Llama 3),
// "<|im_start|>" (ChatML),
// "[INST]" with "<<SYS>>" (Llama-2), "<|user|>" and "<|assistant|>" without Phi-3's "<|end|>"
// (Zephyr), "USER:" with "ASSISTANT:" (Vicuna). None when nothing matches.
ChatTemplate detect_chat_template_jinja(const std::string& jinja);

struct ChatTemplateDetection {
    ChatTemplate kind = ChatTemplate::None;
    std::string reason;  // where the answer came from, for messages ("GGUF tokenizer.chat_template: ChatML markers")
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

struct ChatTurn {
    std::string user, assistant;
};
struct Conversation {
    std::string system;            // empty: no system block (Vicuna then starts at "USER:")
    std::vector<ChatTurn> history;  // earlier turns, oldest first, with the replies the model gave
    std::string user;              // the new message, whose reply the prompt asks for
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
    std::string text() const;  // all parts concatenated (specials as their pieces), without the leading BOS
};

// The family's system prompt when the user gives none: FastChat's for Vicuna, empty otherwise.
std::string default_system_prompt(ChatTemplate t);
// The prompt that asks for the reply to conv.user. Throws std::invalid_argument for None.
ChatPrompt render_chat(ChatTemplate t, const Conversation& conv);

// BOS when the model's prompts start with one (not Qwen2's), then each part: text through the
// tokenizer, specials by their piece's id ("<s>" and "</s>" are the tokenizer's BOS and EOS). A
// special piece that the vocabulary lacks is encoded as text, as a tokenizer without that added
// token would.
std::vector<int> encode_chat(const ChatPrompt& prompt, const Tokenizer& tok);

// The tokens that end a reply: EOS for every family, "<|im_end|>" for ChatML and "<|eot_id|>",
// "<|eom_id|>" for Llama 3, when the vocabulary has them as one piece.
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
