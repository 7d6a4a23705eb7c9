// How often a drafter's drafts are accepted, learned while decoding: per node, the chance it is
// accepted when its parent was, by depth and by the evidence the drafter has for it (a Medusa
// head's rank, the draft's own confidence, the length of the n-gram match); per level, the chance
// the accepted path goes one level deeper. Old outcomes fade, so a switch from free text to a
// copied passage shows within a few steps. Before any outcome a prior stands in.
#pragma once
#include <map>
#include <utility>
#include <vector>

namespace medusa {

enum class AcceptanceEvidence {
    Rank,         // the node's rank among its siblings (Medusa: a head's top-k rank)
    Confidence,   // the drafter's probability of the node's token, in tenths
    MatchLength,  // the n-gram match the continuation was found by
};

// The tenth the drafter's confidence q falls in: 0..9.
int confidence_bin(float q);

class AcceptanceModel {
public:
    explicit AcceptanceModel(AcceptanceEvidence evidence, double forget = 0.95);
    AcceptanceEvidence evidence() const { return evidence_; }
    // P(a node of this depth and evidence is accepted | its parent was).
    double node(int depth, int evidence) const;
    // P(the accepted path reaches `depth` | it reached depth - 1), over whole proposals.
    double level(int depth) const;
    void record_node(int depth, int evidence, bool accepted);
    // A proposal `drafted` levels deep of which `accepted` were accepted.
    void record_levels(int drafted, int accepted);
    long outcomes() const { return outcomes_; }

private:
    struct Counts {
        double hits = 0, trials = 0;
    };
    double prior_node(int depth, int evidence) const;
    double estimate(const Counts* c, double prior_mean) const;
    void add(Counts& c, bool hit) const;

    AcceptanceEvidence evidence_;
    double forget_;
    std::map<std::pair<int, int>, Counts> nodes_;
    std::map<int, Counts> levels_;
    long outcomes_ = 0;
};

}  // namespace medusa
