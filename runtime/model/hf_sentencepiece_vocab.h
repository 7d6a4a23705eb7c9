// A Hugging Face folder whose tokenizer.json is a sentencepiece-style BPE (byte_fallback: Gemma,
// Phi-3, Llama 2): its vocabulary is read from the tokenizer.model beside it, as llama.cpp's
// converter builds a GGUF vocabulary from such a folder, and then tokenized as that GGUF file is.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "model/bpe_vocab.h"

namespace medusa {

// `folder` holds tokenizer.model; `tokenizer` is its tokenizer.json, parsed; `tokenizer_config`
// and `config` the texts of the files of those names there ("" when absent). The pieces of tokenizer.model, then the
// added tokens of tokenizer_config.json (added_tokens_decoder) and tokenizer.json (added_tokens)
// over them: control when marked special or written <|...|>, user-defined otherwise (a "\u2581" in
// one read as a space), those past config.json's vocab_size (text_config's for Gemma 3's
// multimodal folders; the pieces' count without one) left out; "[PAD<id>]" pieces up to it. BOS and EOS from tokenizer_config.json where it names them, else
// tokenizer.model's. Whitespace after an added token marked "rstrip" is dropped when it is cut
// out of text, as Hugging Face does (Phi-3's). Throws FormatError naming the file for anything
// malformed, or a tokenizer.model of more pieces than the vocab_size.
EmbeddedVocab load_hf_sentencepiece_vocab(const std::string& folder, const nlohmann::json& tokenizer,
                                          const std::string& tokenizer_config, const std::string& config);

}  // namespace medusa
