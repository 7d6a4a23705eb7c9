#include "decode/acceptance_model.h"

#include <algorithm>
#include <cmath>

namespace medusa {

namespace {
constexpr double kPriorWeight = 2.0;  // the prior counts as this many outcomes
constexpr int kMaxDepth = 32;         // deeper levels share the last one's counts
}  // namespace

int confidence_bin(float q) { return std::clamp(int(std::floor(double(q) * 10.0)), 0, 9); }

AcceptanceModel::AcceptanceModel(AcceptanceEvidence evidence, double forget) : evidence_(evidence), forget_(forget) {}

double AcceptanceModel::prior_node(int depth, int evidence) const {
    // Optimistic enough that an untried shape gets tried, and falling with depth.
    const double fade = std::pow(0.85, std::max(0, depth - 1));
    switch (evidence_) {
        case AcceptanceEvidence::Rank: return 0.6 / (1 + std::max(0, evidence)) * fade;
        case AcceptanceEvidence::Confidence: return (evidence + 0.5) / 10.0;  // calibrated until shown otherwise
        case AcceptanceEvidence::MatchLength: return std::min(0.9, 0.2 + 0.15 * std::max(0, evidence)) * fade;
    }
    return 0.5;
}

double AcceptanceModel::estimate(const Counts* c, double prior_mean) const {
    const double hits = c ? c->hits : 0, trials = c ? c->trials : 0;
    return (hits + kPriorWeight * prior_mean) / (trials + kPriorWeight);
}

void AcceptanceModel::add(Counts& c, bool hit) const {
    c.hits = c.hits * forget_ + (hit ? 1.0 : 0.0);
    c.trials = c.trials * forget_ + 1.0;
}

double AcceptanceModel::node(int depth, int evidence) const {
    depth = std::clamp(depth, 1, kMaxDepth);
    const auto it = nodes_.find({depth, evidence});
    return estimate(it == nodes_.end() ? nullptr : &it->second, prior_node(depth, evidence));
}

double AcceptanceModel::level(int depth) const {
    depth = std::clamp(depth, 1, kMaxDepth);
    const auto it = levels_.find(depth);
    return estimate(it == levels_.end() ? nullptr : &it->second, 0.6 * std::pow(0.9, depth - 1));
}

void AcceptanceModel::record_node(int depth, int evidence, bool accepted) {
    add(nodes_[{std::clamp(depth, 1, kMaxDepth), evidence}], accepted);
    ++outcomes_;
}

void AcceptanceModel::record_levels(int drafted, int accepted) {
    // Level d was reached when d - 1 were accepted; it was passed when d were.
    for (int d = 1; d <= drafted && d <= accepted + 1; ++d) add(levels_[std::min(d, kMaxDepth)], d <= accepted);
}

}  // namespace medusa
