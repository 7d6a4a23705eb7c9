#include "decode/decoding_kinds.h"

#include <stdexcept>

namespace medusa {

const char* drafter_kind_name(DrafterKind k) {
    switch (k) {
        case DrafterKind::Plain: return "plain";
        case DrafterKind::Medusa: return "medusa";
        case DrafterKind::DraftModel: return "draft";
        case DrafterKind::Ngram: return "ngram";
        case DrafterKind::Eagle: return "eagle";
        case DrafterKind::Auto: return "auto";
    }
    return "?";
}

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
    }
    return "?";
}

DrafterKind parse_drafter_kind(const std::string& s) {
    for (DrafterKind k : {DrafterKind::Plain, DrafterKind::Medusa, DrafterKind::DraftModel, DrafterKind::Ngram,
                          DrafterKind::Eagle, DrafterKind::Auto})
        if (s == drafter_kind_name(k)) return k;
    throw std::invalid_argument("unknown drafter '" + s + "' (plain, medusa, draft, ngram, eagle or auto)");
}

AcceptRule parse_accept_rule(const std::string& s) {
    for (AcceptRule r : {AcceptRule::Greedy, AcceptRule::Typical, AcceptRule::Sample})
        if (s == accept_rule_name(r)) return r;
    throw std::invalid_argument("unknown acceptance rule '" + s + "' (greedy, typical or sample)");
}

}  // namespace medusa
