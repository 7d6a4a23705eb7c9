// A column of `medusa bench --compare`: which drafter ran, and for a mode run once per draft
// model file or EAGLE folder, which one. The bench writes it as a key of its JSON ("plain",
// "draft:stories260K_q80.bin", "eagle:eagle3"); the charts read the key back, from files of any
// version ("ar" is plain decoding's key before it was named so).
#pragma once
#include <optional>
#include <string>

#include "decode/decoding_kinds.h"

namespace medusa::charts {

struct BenchMode {
    DrafterKind kind = DrafterKind::Plain;
    bool tree = false;    // a draft model drafting a tree of branches ("draft-tree")
    std::string variant;  // the draft model's file or the EAGLE folder's name; empty: the only one
    bool operator==(const BenchMode&) const = default;
};

// "plain", "medusa", "draft", "draft-tree", "ngram", "eagle", "auto", then ":" and the variant.
std::string bench_mode_key(const BenchMode& m);
// A key as bench_mode_key writes it, or "ar"; nullopt for anything else.
std::optional<BenchMode> parse_bench_mode_key(const std::string& key);
// A --compare word: a drafter's name, "draft-tree", or "ar" as the flag has always taken it.
std::optional<BenchMode> parse_bench_mode_word(const std::string& word);
// The order charts and tables show modes in: plain decoding first, then the drafters from the most
// to the least machinery (Medusa, EAGLE, draft chain, draft tree, n-gram), auto last.
int bench_mode_rank(const BenchMode& m);
// The drafter's word (decoding_kinds.h) and the variant's distinguishing part: "plain", "EAGLE
// eagle3", "draft tree q80" (stories260K_q80.bin).
std::string bench_mode_label(const BenchMode& m);

}  // namespace medusa::charts
