#include "decode/step_trace.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace medusa {

const char* accept_rule_name(AcceptRule r) {
    switch (r) {
        case AcceptRule::Greedy: return "greedy";
        case AcceptRule::Typical: return "typical";
        case AcceptRule::Sample: return "sample";
        case AcceptRule::SampleWithoutResidual: return "sample-without-residual (broken, for tests)";
    }
    return "?";
}

AcceptRule parse_accept_rule(const std::string& s) {
    if (s == "greedy") return AcceptRule::Greedy;
    if (s == "typical") return AcceptRule::Typical;
    if (s == "sample") return AcceptRule::Sample;
    throw std::invalid_argument("unknown acceptance rule '" + s + "' (greedy, typical or sample)");
}

std::string StepTrace::to_json() const {
    nlohmann::json j;
    j["step"] = step;
    j["base"] = base;
    j["accepted"] = accepted;
    j["bonus"] = bonus;
    j["path"] = path;
    j["emitted"] = emitted;
    j["wall_ms"] = wall_ms;
    auto& nodes_json = j["nodes"] = nlohmann::json::array();
    for (const auto& n : nodes)
        nodes_json.push_back({{"token", n.token}, {"parent", n.parent}, {"depth", n.depth}, {"rank", n.rank},
                              {"head_prob", n.head_prob}, {"model_prob", n.model_prob}, {"limit", n.limit},
                              {"passes", n.passes}, {"tried", n.tried}, {"accepted", n.accepted}});
    auto& st = j["gpu_ms"] = nlohmann::json::object();
    for (const auto& [name, ms] : stage_ms) st[name] = ms;
    return j.dump();
}

}  // namespace medusa
