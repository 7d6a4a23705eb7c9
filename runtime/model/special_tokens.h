// Special tokens written in text ("<|im_start|>", "<think>") are cut out before the tokenizer sees
// the rest, as llama.cpp and Hugging Face do: the longest special first, each out of what the
// longer ones left.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace medusa {

struct SpecialToken {
    std::string text;
    int id;
    bool rstrip = false;  // the whitespace after it is dropped (llama.cpp's RSTRIP: Phi-3's specials)
};

struct TextFragment {
    int token = -1;         // >= 0: this fragment is that special token
    std::string_view text;  // otherwise: plain text to tokenize
};

// `specials` in any order (they are tried longest first). Fragments are in text order; no text
// fragment is empty.
std::vector<TextFragment> split_special_tokens(std::string_view text, std::vector<SpecialToken> specials);

// The token types llama.cpp tokenizes a GGUF vocabulary by (llama-vocab.cpp, at the commit of the
// vocabulary oracles): `types` (GGUF tokenizer.ggml.token_type, one per token, or empty for all
// normal) overridden by token text as llama.cpp does when it loads them. Texts that end a turn or
// mark fill-in-the-middle ("<|im_end|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|fim_prefix|>",
// ...) become control tokens, so such a user-defined token (Gemma 3's "</s>") is text unless
// special tokens are parsed; gpt-oss's "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"
// become user-defined; and so on (special_tokens.cpp lists them). Returns one type per token.
std::vector<int32_t> llama_cpp_token_types(const std::vector<std::string>& tokens, std::vector<int32_t> types);

// The tokens after which llama.cpp drops whitespace when it cuts them out of text: for a model
// whose name (GGUF general.name) says Phi-3 ("phi-3" or "phi3", any case), every special token
// (control, user-defined or unknown as llama_cpp_token_types types them) and "</s>", but not
// "<unk>", "<s>" or "<|endoftext|>"; for any other model none. `types` as for
// llama_cpp_token_types. Ids in increasing order.
std::vector<int32_t> llama_cpp_rstrip_tokens(const std::string& model_name, const std::vector<std::string>& tokens,
                                             const std::vector<int32_t>& types);

}  // namespace medusa
