// What a KV cache's slots hold: the prefix of slots whose entries are final, with their tokens.
// A causal block written at or before the end of that prefix extends or rewrites it; any other
// block (a candidate tree) leaves only the slots before it valid. Engines keep one of these
// beside their cache, so a new prompt re-runs only what it does not share with the last.
#pragma once
#include <span>
#include <vector>

namespace medusa {

class CacheContents {
public:
    std::span<const int> valid_tokens() const { return tokens_; }
    void wrote(int base, std::span<const int> tokens, bool causal) {
        if (causal && base <= int(tokens_.size())) {
            tokens_.resize(base);  // later slots were computed from the old contents
            tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
        } else if (base < int(tokens_.size())) {
            tokens_.resize(base);
        }
    }

private:
    std::vector<int> tokens_;
};

}  // namespace medusa
