#include "bench_mode.h"

#include <array>

namespace medusa::charts {

namespace {

constexpr const char* kDraftTree = "draft-tree";

}  // namespace

std::string bench_mode_key(const BenchMode& m) {
    const std::string mode = m.kind == DrafterKind::DraftModel && m.tree ? kDraftTree : drafter_kind_name(m.kind);
    return m.variant.empty() ? mode : mode + ":" + m.variant;
}

std::optional<BenchMode> parse_bench_mode_word(const std::string& word) {
    if (word == "ar") return BenchMode{.kind = DrafterKind::Plain};
    if (word == kDraftTree) return BenchMode{.kind = DrafterKind::DraftModel, .tree = true};
    for (const DrafterNames& n : kDrafterNames)
        if (word == n.name) return BenchMode{.kind = n.kind};
    return std::nullopt;
}

std::optional<BenchMode> parse_bench_mode_key(const std::string& key) {
    const size_t colon = key.find(':');
    std::optional<BenchMode> m = parse_bench_mode_word(key.substr(0, colon));
    if (!m || colon == std::string::npos) return m;
    m->variant = key.substr(colon + 1);
    if (m->variant.empty()) return std::nullopt;
    return m;
}

int bench_mode_rank(const BenchMode& m) {
    static constexpr std::array<DrafterKind, 6> order = {DrafterKind::Plain,      DrafterKind::Medusa,
                                                         DrafterKind::Eagle,      DrafterKind::DraftModel,
                                                         DrafterKind::Ngram,      DrafterKind::Auto};
    int rank = 0;
    while (rank < int(order.size()) && order[size_t(rank)] != m.kind) ++rank;
    // a draft tree after the draft chains
    return 2 * rank + (m.tree ? 1 : 0);
}

std::string bench_mode_label(const BenchMode& m) {
    const std::string word = m.kind == DrafterKind::DraftModel && m.tree ? "draft tree" : drafter_word(m.kind);
    if (m.variant.empty()) return word;
    std::string file = m.variant.substr(0, m.variant.find('.'));
    if (const size_t us = file.find_last_of('_'); us != std::string::npos) file = file.substr(us + 1);
    return word + " " + file;
}

}  // namespace medusa::charts
