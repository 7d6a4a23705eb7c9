#include "session_charts.h"

#include <algorithm>

#include "decode/decoding_kinds.h"

namespace medusa::chat {

namespace {

struct Totals {
    int tokens = 0, steps = 0;
    double ms = 0;
};

}  // namespace

std::vector<charts::Chart> session_charts(const std::vector<TurnRecord>& turns) {
    std::vector<std::pair<DrafterKind, Totals>> modes;  // in the order first run
    for (const auto& t : turns) {
        if (!t.done || t.new_tokens == 0 || t.decode_ms <= 0) continue;
        auto it = std::find_if(modes.begin(), modes.end(), [&](const auto& m) { return m.first == t.drafter; });
        if (it == modes.end()) it = modes.insert(modes.end(), {t.drafter, Totals{}});
        it->second.tokens += t.new_tokens;
        it->second.steps += t.steps;
        it->second.ms += t.decode_ms;
    }
    if (modes.empty()) return {};
    charts::Chart speed, tau;
    speed.title = "This session: tokens/s by mode";
    speed.y_title = "tokens/s (decode time, pauses left out)";
    tau.title = "This session: tokens per forward pass";
    tau.y_title = "tokens per verify pass (tau)";
    tau.reference = 1;
    tau.reference_label = "plain decoding: 1";
    charts::ChartSeries s{"tokens/s", {}}, p{"tau", {}};
    for (const auto& [kind, m] : modes) {
        speed.labels.push_back(drafter_word(kind));
        tau.labels.push_back(drafter_word(kind));
        s.values.push_back(m.tokens * 1000.0 / m.ms);
        p.values.push_back(m.steps ? double(m.tokens) / m.steps : 1.0);
        if (kind == DrafterKind::Plain) {
            speed.reference = s.values.back();
            speed.reference_label = "plain decoding";
        }
    }
    speed.series.push_back(std::move(s));
    tau.series.push_back(std::move(p));
    speed.note = "all finished turns of each mode together; compare turns on the same prompt";
    return {speed, tau};
}

}  // namespace medusa::chat
