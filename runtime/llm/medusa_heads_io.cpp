#include "llm/medusa_heads_io.h"

namespace medusa {

MedusaHeads load_medusa_heads(const std::string& path, const LlamaConfig& model) {
    throw FormatError(path + ": loading Medusa head files is not implemented yet");
}

void save_medusa_heads(const MedusaHeads& heads, const std::string& folder) {
    throw std::runtime_error(folder + ": saving Medusa heads is not implemented yet");
}

}  // namespace medusa
