// Prompt lookup (n-gram) drafting, which needs no model and no training: find the last n
// tokens earlier in the prompt and the text so far, and propose what followed them there
// (the longest n that matches, the most recent matches first). Pays most where the output
// repeats its context: a retold story, an edited piece of code, a quoted document. With several
// branches the distinct continuations of the most recent matches form a trie.
#pragma once
#include "decode/drafter.h"

namespace medusa {

struct NgramOptions {
    int max_tokens = 8;  // the longest continuation drafted
    int max_match = 4;   // the longest suffix looked up; shorter ones are tried when it fails
    int min_match = 1;
    int branches = 1;  // continuations kept (distinct); 1 drafts a chain
};

class NgramDrafter : public Drafter {
public:
    explicit NgramDrafter(NgramOptions options);
    DrafterKind kind() const override { return DrafterKind::Ngram; }
    CandidateTree propose(const DraftContext& c) override;
    std::vector<PreparedBlock> blocks_to_prepare() const override;
    bool cheap_proposal() const override { return true; }
    int depth_limit() const override { return options_.max_tokens; }
    AcceptanceEvidence evidence() const override { return AcceptanceEvidence::MatchLength; }
    int evidence_of(const CandidateTree&, int) const override { return match_length_; }

private:
    NgramOptions options_;
    int match_length_ = 0;  // of the last proposal's continuations (0: none found)
};

}  // namespace medusa
