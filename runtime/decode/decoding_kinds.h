// The closed sets a decoding step is described by: which drafter proposed it, which rule
// accepted from it, why a generation ended. They travel as enums; text appears only where a
// person or a file reads it (the names below, StepTrace::to_json, the app's words).
#pragma once
#include <array>
#include <string>

namespace medusa {

// Auto: the step controller chooses among every drafter available, step by step.
enum class DrafterKind { Plain, Medusa, DraftModel, Ngram, Eagle, Auto };
enum class AcceptRule { Greedy, Typical, Sample };
enum class StopReason { Length, StopToken, Context, Cancelled, StopString };  // StopString: the caller's text check

// Each drafter's two names: the one files and flags use (trace files, --speculate, bench keys,
// the statistics lines) and the word a person reads beside figures (the app, the charts).
struct DrafterNames {
    DrafterKind kind;
    const char* name;  // "plain", "medusa", "draft", "ngram", "eagle", "auto"
    const char* word;  // "plain", "Medusa", "draft", "n-gram", "EAGLE", "auto"
};
inline constexpr std::array<DrafterNames, 6> kDrafterNames = {{{DrafterKind::Plain, "plain", "plain"},
                                                              {DrafterKind::Medusa, "medusa", "Medusa"},
                                                              {DrafterKind::DraftModel, "draft", "draft"},
                                                              {DrafterKind::Ngram, "ngram", "n-gram"},
                                                              {DrafterKind::Eagle, "eagle", "EAGLE"},
                                                              {DrafterKind::Auto, "auto", "auto"}}};

const char* drafter_kind_name(DrafterKind k);
const char* drafter_word(DrafterKind k);
// The names --accept and the statistics lines use: "greedy", "typical", "sample"; "length",
// "stop-token", "context", "cancelled".
const char* accept_rule_name(AcceptRule r);
const char* stop_reason_name(StopReason r);
// Each throws std::invalid_argument listing the accepted names.
DrafterKind parse_drafter_kind(const std::string& s);
AcceptRule parse_accept_rule(const std::string& s);

}  // namespace medusa
