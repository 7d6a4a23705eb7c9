// Writes a model as a GGUF v3 file of its family's architecture ("llama", "qwen3", "gemma3", ...),
// the format llama.cpp reads: so a llama2.c checkpoint or a synthetic model of real shapes can be
// run by both engines, from the same bytes, and compared.
#pragma once
#include <functional>
#include <string>

#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa {

// Hyper-parameters as <arch>.* keys, every tensor byte for byte under its GGUF name (in the
// model's order, 32-byte aligned; a NeoX family's q/k rows back in rotate_half order) and `vocab`
// as a "llama" (sentencepiece) vocabulary, padded with unused pieces up to a synthetic model's
// vocabulary. The file appears whole or not at all. `progress(bytes written, total)` is called as
// tensors are written. q/k/v biases are written as attn_q/k/v.bias, which llama.cpp applies.
// Throws std::invalid_argument naming the model or the tokenizer for what GGUF cannot hold:
// llama2.c's grouped int8 (Q8_G), rows that are not whole blocks of their type, a byte-level
// vocabulary, or a vocabulary whose size is not the model's.
void write_gguf(const ModelFile& model, const Tokenizer& vocab, const std::string& path,
                const std::function<void(size_t, size_t)>& progress = {});

// The tokenizer.* keys of a GGUF file as it stores them, byte for byte: its vocabulary of either
// kind (sentencepiece "llama" or byte-level "gpt2" with its merges and pre-tokenizer), special
// token ids and flags, chat template. Read from the file's header alone; `keys` 0 when it has none.
struct GgufVocabularyKeys {
    std::string source;  // the file
    uint64_t keys = 0;
    int64_t tokens = 0;  // entries of tokenizer.ggml.tokens
    std::string bytes;   // the keys' entries (name, type, value), in the file's order
    std::string name;    // general.name, carried too: llama.cpp reads Phi-3's special tokens by it
};
// Throws FormatError naming the file when it is not a GGUF file or its header is cut short.
GgufVocabularyKeys read_gguf_vocabulary_keys(const std::string& path);

// The same file with the vocabulary carried through from another GGUF file's keys instead of
// written from a tokenizer: a model derived from a GGUF one (a fine-tuned model) keeps its
// original's vocabulary exactly, and its general.name when the file has one. Throws
// std::invalid_argument when `vocab` holds no vocabulary or one whose size is not the model's, and
// for tensors GGUF cannot hold.
void write_gguf(const ModelFile& model, const GgufVocabularyKeys& vocab, const std::string& path,
                const std::function<void(size_t, size_t)>& progress = {});

}  // namespace medusa
