// Hugging Face tokenizer.json files of byte-level BPE models (Llama 3, Qwen2, GPT-2, SmolLM),
// read into the vocabulary llama.cpp's converter would write: tokens by id (gaps below the
// model's vocab_size become "[PAD<id>]", unused), added tokens as control or user-defined, the
// merges, and the pre-tokenizer's regexes.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "model/bpe_vocab.h"

namespace medusa {

// `tokenizer_json`: the file's text; `tokenizer_config` and `config`: the texts of
// tokenizer_config.json and config.json beside it, or "" (they give BOS/EOS, add_bos_token and
// vocab_size). Throws FormatError "<name>: ..." for anything malformed or unsupported.
BpeVocab parse_hf_tokenizer(const std::string& tokenizer_json, const std::string& tokenizer_config,
                            const std::string& config, const std::string& name);
// tokenizer_config.json's "bos_token": "<s>" or {"content": "<s>", ...}; "" when absent or neither.
std::string hf_special_token_text(const nlohmann::json& tokenizer_config, const char* key);
// The vocabulary of a Hugging Face folder's tokenizer.json (and the two configs, when present);
// of its tokenizer.model where tokenizer.json is a sentencepiece-style BPE (hf_sentencepiece_vocab.h).
EmbeddedVocab load_hf_vocab(const std::string& folder);

}  // namespace medusa
