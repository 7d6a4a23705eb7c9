#include "decode/decoding_kinds.h"

#include <stdexcept>

namespace medusa {

namespace {

const DrafterNames& names(DrafterKind k) {
    for (const DrafterNames& n : kDrafterNames)
        if (n.kind == k) return n;
    static const DrafterNames unknown{k, "?", "?"};
    return unknown;
}

}  // namespace

const char* drafter_kind_name(DrafterKind k) { return names(k).name; }
const char* drafter_word(DrafterKind k) { return names(k).word; }

const char* accept_rule_name(AcceptRule r) {
    switch (r) {
        case AcceptRule::Greedy: return "greedy";
        case AcceptRule::Typical: return "typical";
        case AcceptRule::Sample: return "sample";
    }
    return "?";
}

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::Length: return "length";
        case StopReason::StopToken: return "stop-token";
        case StopReason::Context: return "context";
        case StopReason::Cancelled: return "cancelled";
        case StopReason::StopString: return "stop-string";
    }
    return "?";
}

DrafterKind parse_drafter_kind(const std::string& s) {
    std::string listed;
    for (const DrafterNames& n : kDrafterNames) {
        if (s == n.name) return n.kind;
        listed += std::string(listed.empty() ? "" : &n == &kDrafterNames.back() ? " or " : ", ") + n.name;
    }
    throw std::invalid_argument("unknown drafter '" + s + "' (" + listed + ")");
}

AcceptRule parse_accept_rule(const std::string& s) {
    for (AcceptRule r : {AcceptRule::Greedy, AcceptRule::Typical, AcceptRule::Sample})
        if (s == accept_rule_name(r)) return r;
    throw std::invalid_argument("unknown acceptance rule '" + s + "' (greedy, typical or sample)");
}

}  // namespace medusa
