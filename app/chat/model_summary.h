// One line about a model file before it is loaded, for the file dialog: its format, layers,
// hidden size, vocabulary, context length, weight type and size on disk, and its chat template
// ("stories260K.bin: llama2c-v0, llama, 5 layers, dim 64, vocab 512, context 512, F32 weights, 1.0 MB,
// no chat template"); or why it cannot be read, in the reader's words.
#pragma once
#include <string>

namespace medusa::chat {

std::string model_summary(const std::string& path);

}  // namespace medusa::chat
