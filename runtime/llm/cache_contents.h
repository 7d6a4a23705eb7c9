// What a KV cache's slots hold: the prefix of slots whose entries are final, with their tokens.
// A causal block written at or before the end of that prefix extends or rewrites it; any other
// block (a candidate tree) leaves only the slots before it valid. Engines keep one of these
// beside their cache, so a new prompt re-runs only what it does not share with the last.
#pragma once
#include <algorithm>
#include <span>
#include <vector>

namespace medusa {

class CacheContents {
public:
    std::span<const int> valid_tokens() const { return tokens_; }
    void wrote(int base, std::span<const int> tokens, bool causal) {
        const int end = base + int(tokens.size());
        written_end_ = base == 0 && causal ? end : std::max(written_end_, end);
        if (causal && base <= int(tokens_.size())) {
            tokens_.resize(base);  // later slots were computed from the old contents
            tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
        } else if (base < int(tokens_.size())) {
            tokens_.resize(base);
        }
    }
    // Local layers keep a ring of their last slots: a prefix of `shared` valid tokens can be reused
    // only while the ring still holds the window before it, that is while nothing written since
    // lies more than `reach` (ring slots - window) slots past it. 0: no ring.
    void set_ring_reach(int reach) { ring_reach_ = reach; }
    // How much of `shared` (<= valid_tokens().size()) a new prompt may keep: all of it, or none.
    int reusable(int shared) const {
        return ring_reach_ == 0 || shared == 0 || shared >= written_end_ - ring_reach_ ? shared : 0;
    }

private:
    std::vector<int> tokens_;
    int written_end_ = 0;  // past the last slot written since the cache was last filled from slot 0
    int ring_reach_ = 0;
};

}  // namespace medusa
