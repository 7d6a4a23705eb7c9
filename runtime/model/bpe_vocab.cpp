#include "model/bpe_vocab.h"

#include "model/format_error.h"

namespace medusa {

void validate_bpe_vocab(const BpeVocab& v, const std::string& name) {
    auto bad = [&](const std::string& what) { throw FormatError(name + ": BPE vocabulary: " + what); };
    const size_t n = v.tokens.size();
    if (n == 0 || n > (1u << 22)) bad(std::to_string(n) + " tokens");
    if (!v.types.empty() && v.types.size() != n)
        bad(std::to_string(v.types.size()) + " token types for " + std::to_string(n) + " tokens");
    for (size_t i = 0; i < v.types.size(); ++i)
        if (v.types[i] < 0 || v.types[i] > kTokenByte) bad("token " + std::to_string(i) + " has type " + std::to_string(v.types[i]));
    for (int id : {v.bos, v.eos})
        if (id < -1 || id >= int(n)) bad("special token id " + std::to_string(id) + " is out of range");
    if (v.add_bos && v.bos < 0) bad("prompts start with BOS but there is no BOS token");
    if (v.merges.size() > (1u << 24)) bad(std::to_string(v.merges.size()) + " merges");
    for (size_t r = 0; r < v.merges.size(); ++r) {
        // "left right": llama.cpp splits at the first space after the first character.
        const size_t space = v.merges[r].find(' ', 1);
        if (space == std::string::npos || space + 1 >= v.merges[r].size())
            bad("merge " + std::to_string(r) + " is not two symbols separated by a space");
    }
}

}  // namespace medusa
