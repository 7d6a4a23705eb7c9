// What Medusa (or the draft model) bought: tokens per step (tau), forward passes saved, live
// tokens/s, where the GPU time of the last step went, and the measured speedup against plain decoding.
#include <imgui.h>

#include <algorithm>
#include <map>
#include <vector>

#include "chat_app.h"

namespace medusa::chat {

namespace {

// "measure speedup vs plain": the last turn's prompt again in its mode and in plain decoding, on
// the worker, for as many tokens; neither run goes into the chat.
void draw_speedup(ChatApp& app) {
    const bool busy = app.worker.busy();
    const auto& turns = app.reader.turns();
    const bool can = !busy && !turns.empty() && turns.back().done && turns.back().new_tokens >= 2 &&
                     app.last_settings.mode != DecodeMode::Plain;
    ImGui::BeginDisabled(!can);
    if (ImGui::Button("measure speedup vs plain")) app.measure_speedup();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Decodes the last prompt again, once as the last turn did and once with plain decoding (one "
                          "forward pass per token), for the same number of new tokens, with no pauses; the results "
                          "are not added to the chat.");
    ImGui::SameLine();
    if (app.worker.measuring()) {
        ImGui::TextDisabled("measuring...");
        return;
    }
    const SpeedupResult r = app.worker.speedup();
    if (!r.valid) {
        ImGui::TextDisabled(app.last_settings.mode == DecodeMode::Plain ? "(send a Medusa or draft turn first)" : "");
        return;
    }
    const std::string name = r.mode.substr(0, r.mode.find(' '));
    ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, r.speedup() >= 1 ? IM_COL32(140, 230, 140, 255) : IM_COL32(255, 170, 120, 255));
    ImGui::TextWrapped("%s %.0f tok/s vs plain %.0f tok/s = %.2fx", name == "medusa" ? "Medusa" : name.c_str(),
                       r.tokens_per_s, r.plain_tokens_per_s, r.speedup());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("%d tokens in %d passes vs %d in %d (%s)", r.tokens, r.steps, r.plain_tokens,
                        r.plain_steps, r.mode.c_str());
}

}  // namespace

void draw_metrics_panel(ChatApp& app) {
    const auto& steps = app.reader.steps();
    const auto& turns = app.reader.turns();
    if (steps.empty()) {
        ImGui::TextDisabled("Metrics appear once a story is generating.");
        return;
    }
    // The current turn only: earlier turns may have used other settings.
    const int turn = steps.back().turn;
    std::vector<const StepRecord*> cur;
    for (const auto& s : steps)
        if (s.turn == turn) cur.push_back(&s);
    int tokens = 0, tree_steps = 0, tree_tokens = 0;
    for (const auto* s : cur) {
        tokens += int(s->trace.emitted.size());
        if (s->trace.nodes.size() > 1) ++tree_steps, tree_tokens += int(s->trace.emitted.size());
    }
    const double tau = tree_steps ? double(tree_tokens) / tree_steps : 0;
    ImGui::Text("tokens per step (tau):  %.2f", tau);
    ImGui::Text("forward passes saved:   %d of %d", tokens - int(cur.size()), tokens);
    const double secs = cur.back()->t_ms / 1000.0;
    ImGui::Text("tokens/s (this turn):   %.1f", secs > 0 ? tokens / secs : 0.0);

    // Rolling tokens/s over the last few steps, one point per step.
    std::vector<float> rate;
    const size_t window = 8;
    for (size_t i = 1; i < cur.size(); ++i) {
        const size_t j = i >= window ? i - window : 0;
        int n = 0;
        for (size_t k = j + 1; k <= i; ++k) n += int(cur[k]->trace.emitted.size());
        const double dt = (cur[i]->t_ms - cur[j]->t_ms) / 1000.0;
        rate.push_back(dt > 0 ? float(n / dt) : 0.0f);
    }
    if (!rate.empty()) {
        const float top = *std::max_element(rate.begin(), rate.end()) * 1.1f + 1;
        ImGui::PlotLines("##rate", rate.data(), int(rate.size()), 0, "tokens/s (rolling, per step)", 0, top,
                         ImVec2(ImGui::GetContentRegionAvail().x, 60));
    }
    draw_speedup(app);
    // GPU time per stage of the last step (needs timestamp queries).
    const auto& stages = steps.back().trace.stage_ms;
    if (!stages.empty()) {
        double total = 0;
        for (const auto& [name, ms] : stages) total += ms;
        ImGui::Text("GPU time of the last step: %.2f ms", total);
        if (ImGui::BeginTable("stages", 3, ImGuiTableFlags_SizingStretchProp)) {
            for (const auto& [name, ms] : stages) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(name.c_str());
                ImGui::TableNextColumn();
                ImGui::Text("%.2f ms", ms);
                ImGui::TableNextColumn();
                ImGui::ProgressBar(total > 0 ? float(ms / total) : 0, ImVec2(-1, ImGui::GetTextLineHeight() * 0.8f), "");
            }
            ImGui::EndTable();
        }
    } else {
        ImGui::TextDisabled(steps.back().source == StepSource::Draft ? "(per-stage GPU times: Medusa steps only)"
                                                                      : "(no per-stage GPU times on this device)");
    }
    // Finished turns side by side: run one plain and one Medusa (or draft) turn to compare speed.
    if (ImGui::BeginTable("turns", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("turn / mode", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("tokens", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("tok/pass", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("tok/s", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableHeadersRow();
        for (const auto& t : turns) {
            if (!t.done) continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%d %s", t.id, t.mode.c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%d", t.new_tokens);
            ImGui::TableNextColumn();
            ImGui::Text("%.2f", t.steps ? double(t.new_tokens) / t.steps : 1.0);
            ImGui::TableNextColumn();
            ImGui::Text("%.0f", t.decode_ms > 0 ? t.new_tokens * 1000.0 / t.decode_ms : 0.0);
        }
        ImGui::EndTable();
    }
}

}  // namespace medusa::chat
