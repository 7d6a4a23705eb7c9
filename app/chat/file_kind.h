// What a file (or folder) dropped on the window is, judged by its content, not its name: a model
// (GGUF, llama2.c, safetensors with a Llama's tensors, a Hugging Face folder), a tokenizer
// (sentencepiece model, tokenizer.json), Medusa heads, an EAGLE layer, a tree of rank paths, or a
// benchmark (`medusa bench --json` output, charted in the metrics panel).
#pragma once
#include <string>

namespace medusa::chat {

enum class FileKind { Unknown, Model, Tokenizer, MedusaHeads, EagleLayer, Tree, Benchmark };
const char* file_kind_name(FileKind k);

FileKind classify_file(const std::string& path);

}  // namespace medusa::chat
