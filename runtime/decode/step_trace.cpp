#include "decode/step_trace.h"

#include <nlohmann/json.hpp>

#include "model/json_file.h"

namespace medusa {

std::string StepTrace::to_json() const {
    nlohmann::json j;
    j["step"] = step;
    j["base"] = base;
    j["drafter"] = drafter_kind_name(drafter);
    j["rule"] = accept_rule_name(rule);
    j["accepted"] = accepted;
    j["bonus"] = bonus;
    j["path"] = path;
    j["emitted"] = emitted;
    j["wall_ms"] = wall_ms;
    j["submits"] = submits;
    auto& nodes_json = j["nodes"] = nlohmann::json::array();
    for (const auto& n : nodes)
        nodes_json.push_back({{"token", n.token}, {"parent", n.parent}, {"depth", n.depth}, {"rank", n.rank},
                              {"draft_prob", n.draft_prob}, {"model_prob", n.model_prob}, {"limit", n.limit},
                              {"parent_greedy", n.parent_greedy}, {"draw", n.draw}, {"ratio", n.ratio},
                              {"sampled", n.sampled}, {"passes", n.passes}, {"tried", n.tried},
                              {"accepted", n.accepted}});
    if (control) {
        auto& weighed = j["control"]["weighed"] = nlohmann::json::array();
        for (const ShapeOption& o : control->weighed)
            weighed.push_back({{"drafter", drafter_kind_name(o.drafter)}, {"nodes", o.nodes}, {"depth", o.depth},
                               {"expected_tokens", o.expected_tokens}, {"expected_ms", o.expected_ms},
                               {"tokens_per_ms", o.tokens_per_ms()}});
        j["control"]["chosen"] = control->chosen;
        j["control"]["reason"] = control_reason_name(control->reason);
    }
    if (!rejection.empty()) {
        auto& bars = j["rejection"] = nlohmann::json::array();
        for (const RejectionBar& b : rejection)
            bars.push_back({{"token", b.token}, {"p", b.p}, {"q", b.q}, {"residual", b.residual}});
    }
    auto& st = j["gpu_ms"] = nlohmann::json::object();
    for (const auto& [name, ms] : stage_ms) st[name] = ms;
    return json_text(j, -1);
}

}  // namespace medusa
