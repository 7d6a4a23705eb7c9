#include "decode/step_plan.h"

#include <algorithm>
#include <numeric>

namespace medusa {

const char* control_reason_name(ControlReason r) {
    switch (r) {
        case ControlReason::Pays: return "pays";
        case ControlReason::Explore: return "explore";
        case ControlReason::NothingPays: return "nothing-pays";
        case ControlReason::NothingDrafted: return "nothing-drafted";
        case ControlReason::DraftedAnyway: return "drafted-anyway";
    }
    return "?";
}

std::vector<int> shape_sizes(int max_tokens) {
    std::vector<int> out;
    for (int n = 1; n <= max_tokens;) {
        out.push_back(n);
        n += n < 10 ? 1 : n < 16 ? 2 : n < 32 ? 4 : 8;
    }
    return out;
}

TreePlan plan_tree(std::span<const int> parent, std::span<const double> path_prob, bool any_subtree,
                   const VerifyCost& verify_ms, double draft_ms) {
    const int n = int(parent.size());
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    // A node is never likelier than its parent and comes after it, so the likeliest k nodes
    // (ties by position) always hold their ancestors.
    if (any_subtree)
        std::stable_sort(order.begin() + 1, order.end(), [&](int a, int b) { return path_prob[a] > path_prob[b]; });
    TreePlan best;
    best.kept = {0};
    best.expected_ms = draft_ms + verify_ms(1);
    double best_rate = -1.0;
    double tokens = 1.0;
    int counted = 1;
    for (int size : shape_sizes(n)) {
        for (; counted < size; ++counted) tokens += path_prob[order[counted]];
        const double ms = draft_ms + verify_ms(size);
        if (size > 1 && tokens / ms > best_rate) {
            best_rate = tokens / ms;
            best.kept.assign(order.begin(), order.begin() + size);
            best.expected_tokens = tokens;
            best.expected_ms = ms;
        }
    }
    std::sort(best.kept.begin(), best.kept.end());
    return best;
}

ShapeOption plan_levels(DrafterKind drafter, std::span<const double> level_accept, double level_ms,
                        const VerifyCost& verify_ms, int max_depth) {
    ShapeOption best;
    best.drafter = drafter;
    best.expected_ms = verify_ms(1);
    double reach = 1.0, tokens = 1.0;
    max_depth = std::min<int>(max_depth, int(level_accept.size()));
    ShapeOption o = best;
    for (int d = 1; d <= max_depth; ++d) {
        reach *= level_accept[d - 1];
        tokens += reach;
        o.depth = d;
        o.nodes = d + 1;
        o.expected_tokens = tokens;
        o.expected_ms = d * level_ms + verify_ms(d + 1);
        if (o.tokens_per_ms() > best.tokens_per_ms() || best.depth == 0) best = o;
    }
    return best;
}

}  // namespace medusa
