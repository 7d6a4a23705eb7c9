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

}  // namespace medusa
