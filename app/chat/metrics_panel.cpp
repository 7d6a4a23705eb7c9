// What Medusa (or the draft model) bought: tokens per step (tau), forward passes saved, live
// tokens/s, where the GPU time of the last step went, and the measured speedup against plain decoding.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "bench_charts.h"
#include "break_even.h"
#include "chart_view.h"
#include "chat_app.h"
#include "decode/depth_acceptance.h"
#include "dialog_keys.h"
#include "drafter_use.h"
#include "decode/decoding_kinds.h"
#include "palette.h"
#include "session_charts.h"
#include "turn_speed.h"

namespace medusa::chat {

namespace {

std::vector<const StepTrace*> traces_of(const std::vector<const StepRecord*>& steps) {
    std::vector<const StepTrace*> out;
    for (const StepRecord* s : steps) out.push_back(&s->trace);
    return out;
}

// "measure speedup vs plain": the last turn's prompt again in its mode and in plain decoding, on
// the worker, for as many tokens; neither run goes into the chat.
void draw_speedup(ChatApp& app) {
    const bool busy = app.worker.busy();
    const auto& turns = app.reader.turns();
    const bool can = !busy && !turns.empty() && turns.back().done && turns.back().new_tokens >= 2 &&
                     app.last_settings.mode != DrafterKind::Plain;
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
        ImGui::TextDisabled(app.last_settings.mode == DrafterKind::Plain ? "(send a Medusa or draft turn first)" : "");
        return;
    }
    ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, r.speedup() >= 1 ? IM_COL32(140, 230, 140, 255) : IM_COL32(255, 170, 120, 255));
    ImGui::TextWrapped("%s %.0f tok/s vs plain %.0f tok/s = %.2fx", drafter_word(r.drafter),
                       r.tokens_per_s, r.plain_tokens_per_s, r.speedup());
    if (r.round_speedups.size() > 1) {
        const auto [lo, hi] = std::minmax_element(r.round_speedups.begin(), r.round_speedups.end());
        ImGui::TextWrapped("round by round %.2fx to %.2fx (%zu rounds): a difference inside that spread is noise",
                           *lo, *hi, r.round_speedups.size());
    }
    ImGui::PopStyleColor();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%d tokens in %d passes vs %d in %d (%s)", r.tokens, r.steps, r.plain_tokens,
                        r.plain_steps, r.mode.c_str());
    ImGui::TextDisabled("%s", r.identical ? "The two texts are identical, token for token."
                                          : "The texts differ: with sampling each run draws its own text (both follow "
                                            "the model's distribution).");
    ImGui::PopTextWrapPos();
    if (ImGui::SmallButton("compare the texts")) ImGui::OpenPopup("Compare with plain decoding");
    ImGui::SetNextWindowSize(ImVec2(760, 420), ImGuiCond_Appearing);
    if (ImGui::BeginPopupModal("Compare with plain decoding")) {
        if (ImGui::BeginTable("texts", 2, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame)) {
            ImGui::TableNextColumn();
            ImGui::Text("%s: %.0f ms, %d passes", r.mode.c_str(), r.ms, r.steps);
            ImGui::TableNextColumn();
            ImGui::Text("plain decoding: %.0f ms, %d passes", r.plain_ms, r.plain_steps);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", r.text.c_str());
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", r.plain_text.c_str());
            ImGui::EndTable();
        }
        ImGui::TextColored(r.identical ? ImVec4(0.55f, 0.9f, 0.55f, 1) : ImVec4(1, 0.7f, 0.45f, 1), "%s",
                           r.identical ? "identical" : "different draws");
        if (ImGui::Button("Close") || close_on_escape()) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

// Charts of a JSON file (a benchmark, or a tuned tree with its budget table), read again only when
// the file changes; an error names the file.
struct FileCharts {
    std::string path;
    std::filesystem::file_time_type stamp;
    std::vector<charts::Chart> charts;
    std::string error;
};

const FileCharts& charts_of(const std::string& path, FileCharts& cache) {
    std::error_code ec;
    const auto stamp = std::filesystem::last_write_time(path, ec);
    if (cache.path == path && !ec && cache.stamp == stamp) return cache;
    cache = FileCharts{path, stamp, {}, {}};
    try {
        cache.charts = charts::charts_from_file(path);
    } catch (const std::exception& e) {
        cache.error = e.what();
    }
    return cache;
}

void draw_file_charts(const std::string& path, FileCharts& cache, float height) {
    const FileCharts& c = charts_of(path, cache);
    ImGui::PushTextWrapPos(0);
    if (!c.error.empty()) ImGui::TextColored(ImVec4(1, 0.55f, 0.45f, 1), "%s", c.error.c_str());
    ImGui::PopTextWrapPos();
    draw_charts(c.charts, height);
}

// A benchmark file first when one was opened (it was asked for), then this session's turns by
// mode, then the tree budgets tune-tree measured for the tree in use.
void draw_charts_tab(ChatApp& app) {
    const float h = std::max(170.0f, ImGui::GetFontSize() * 13);
    static FileCharts tree_cache, bench_cache;
    if (ImGui::Button("open a benchmark...")) app.files.open(&app.bench_path, "Open a `medusa bench --json` result");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The JSON of `medusa bench --json FILE` (dropping it on the window works too)");
    if (!app.charts_window) {
        ImGui::SameLine();
        if (ImGui::Button("larger")) app.charts_window = true;
    }
    if (!app.bench_path.empty()) {
        ImGui::TextWrapped("Benchmark %s", app.bench_path.c_str());
        draw_file_charts(app.bench_path, bench_cache, h);
        ImGui::Separator();
    }
    const auto session = session_charts(app.reader.turns());
    ImGui::PushTextWrapPos(0);
    if (session.empty()) ImGui::TextDisabled("Finished turns appear here by mode: run one plain and one speculative turn.");
    ImGui::PopTextWrapPos();
    draw_charts(session, h);
    std::error_code ec;
    const std::string tree = tree_field(app.settings);
    if (std::filesystem::is_regular_file(tree, ec)) {
        ImGui::Separator();
        ImGui::TextWrapped("Tree budgets measured by tune-tree for %s", tree.c_str());
        draw_file_charts(tree, tree_cache, h);
    }
}

// Bars per depth: the share of the turn's steps drafting that deep whose accepted path got there.
void draw_depth_acceptance(const std::vector<const StepRecord*>& cur) {
    DepthAcceptance a;
    for (const StepRecord* s : cur) a.add(s->trace);
    if (a.depth() == 0) return;
    ImGui::TextUnformatted("accepted to depth k (this turn):");
    const int shown = std::min(a.depth(), 10);
    const float font = ImGui::GetFontSize(), h = 44, avail = ImGui::GetContentRegionAvail().x;
    const float slot = std::min(44.0f, avail / float(shown)), bar = slot - 6;
    const ImVec2 p = ImGui::GetCursorScreenPos(), mouse = ImGui::GetIO().MousePos;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    int hovered = 0;
    for (int k = 1; k <= shown; ++k) {
        const float x = p.x + (k - 1) * slot, top = p.y + font + h * float(1.0 - a.rate(k));
        dl->AddRectFilled(ImVec2(x, p.y + font), ImVec2(x + bar, p.y + font + h), IM_COL32(45, 47, 60, 255), 2);
        dl->AddRectFilled(ImVec2(x, top), ImVec2(x + bar, p.y + font + h), origin_color(std::min(k, 7)), 2);
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", 100 * a.rate(k));
        const float pw = ImGui::CalcTextSize(pct).x;
        if (pw <= slot) dl->AddText(ImVec2(x + (bar - pw) * 0.5f, p.y), IM_COL32(200, 200, 210, 255), pct);
        const std::string label = std::to_string(k);
        dl->AddText(ImVec2(x + (bar - ImGui::CalcTextSize(label.c_str()).x) * 0.5f, p.y + font + h + 1),
                    IM_COL32(150, 150, 160, 255), label.c_str());
        if (mouse.x >= x && mouse.x < x + slot && mouse.y >= p.y && mouse.y < p.y + 2 * font + h) hovered = k;
    }
    ImGui::Dummy(ImVec2(shown * slot, 2 * font + h + 2));
    if (hovered > 0 && ImGui::IsWindowHovered())
        ImGui::SetTooltip("depth %d: %ld of the %ld steps that drafted a guess %d ahead accepted it (and every guess "
                          "before it)",
                          hovered, a.reached[size_t(hovered - 1)], a.drafted[size_t(hovered - 1)], hovered);
}

// The turn's tokens per verify pass, passes saved, speed and what drafting against the controller's
// advice saved or lost.
void draw_turn_summary(const std::vector<const StepRecord*>& cur, int turn, const std::vector<TurnRecord>& turns,
                       const std::vector<StepRecord>& steps) {
    int tokens = 0, tree_steps = 0, tree_tokens = 0;
    for (const auto* s : cur) {
        tokens += int(s->trace.emitted.size());
        if (s->node_count() > 1) ++tree_steps, tree_tokens += int(s->trace.emitted.size());
    }
    // Tau over every verify pass of the turn (plain decoding: 1.00); where only some steps drafted
    // (the step controller), theirs beside it.
    const double tau = double(tokens) / double(cur.size());
    ImGui::Text("tokens per step (tau):  %.2f", tau);
    if (tree_steps > 0 && tree_steps < int(cur.size()))
        ImGui::TextDisabled("  %.2f in the %d steps that drafted", double(tree_tokens) / tree_steps, tree_steps);
    ImGui::Text("forward passes saved:   %d of %d", tokens - int(cur.size()), tokens);
    // The turn's one speed, as the table below and the timeline count it.
    for (const TurnRecord& t : turns)
        if (t.id == turn) {
            const TurnSpeed sp = turn_speed(t, steps);
            ImGui::Text("decoding: %.0f tokens/s", sp.tokens_per_s());
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("On a CPU driver the window's drawing takes from decoding: measure speedup decodes "
                                  "again without drawing.");
            ImGui::TextDisabled("%d tokens in %.1f ms%s, from the first step to the last; before them the prompt and "
                                "first-use setup took %.1f ms (not counted); pauses are not counted",
                                sp.tokens, sp.decode_ms, sp.done ? "" : " so far", sp.prefill_ms);
        }
    if (const DraftedAnyway d = drafted_anyway(traces_of(cur)); d.steps > 0)
        ImGui::TextDisabled("%d %s drafted where the controller would have decoded plainly: about %.2f ms %s in all "
                            "against plain decoding, by its costs.",
                            d.steps, d.steps == 1 ? "step" : "steps", std::abs(d.saved_ms),
                            d.saved_ms >= 0 ? "saved" : "lost");
}

// Rolling tokens/s over the last few steps, one point per step.
void draw_rate_plot(const std::vector<const StepRecord*>& cur) {
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
        // The scale beside the plot: tokens/s at its top and bottom; one point per step.
        const float top = *std::max_element(rate.begin(), rate.end()) * 1.1f + 1;
        char hi[32];
        std::snprintf(hi, sizeof hi, "%.0f", top);
        const float axis_w = ImGui::CalcTextSize(hi).x + 6;
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::SetCursorScreenPos(ImVec2(p.x + axis_w, p.y));
        ImGui::PlotLines("##rate", rate.data(), int(rate.size()), 0, "tokens/s, last 8 steps", 0, top,
                         ImVec2(ImGui::GetContentRegionAvail().x, 60));
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddText(p, IM_COL32(150, 150, 160, 255), hi);
        dl->AddText(ImVec2(p.x + axis_w - ImGui::CalcTextSize("0").x - 6, p.y + 60 - ImGui::GetFontSize()),
                    IM_COL32(150, 150, 160, 255), "0");
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("x: steps of this turn; y: tokens/s (pauses left out)");
        ImGui::PopTextWrapPos();
    }
}

// GPU time per stage of the latest timed step (timestamp queries, a step about four times a
// second: timing every one would slow decoding down).
void draw_stage_times(const ChatApp& app, const std::vector<StepRecord>& steps) {
    const StepRecord* timed = nullptr;
    for (auto it = steps.rbegin(); it != steps.rend() && !timed; ++it)
        if (!it->trace.stage_ms.empty()) timed = &*it;
    if (timed) {
        const auto& stages = timed->trace.stage_ms;
        double total = 0;
        for (const auto& [name, ms] : stages) total += ms;
        ImGui::Text("GPU time of step %d: %.2f ms", timed->trace.step, total);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Per-stage GPU time from timestamp queries, taken on a step about four times a second "
                              "(timing every step would slow decoding down).");
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
        ImGui::TextDisabled(app.ctx.timestamps_supported() ? "(per-stage GPU times appear with the next step)"
                                                           : "(no per-stage GPU times on this device)");
    }
}

// Finished turns side by side: run one plain and one Medusa (or draft) turn to compare speed.
void draw_turns_table(const std::vector<TurnRecord>& turns, const std::vector<StepRecord>& steps) {
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
            ImGui::Text("%.0f", turn_speed(t, steps).tokens_per_s());
        }
        ImGui::EndTable();
    }
}

void draw_live_tab(ChatApp& app) {
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
    ImGui::PushTextWrapPos(0);
    draw_turn_summary(cur, turn, turns, steps);
    draw_rate_plot(cur);
    draw_depth_acceptance(cur);
    draw_drafter_table(cur);
    draw_speedup(app);
    draw_stage_times(app, steps);
    draw_turns_table(turns, steps);
    ImGui::PopTextWrapPos();
}

}  // namespace

void draw_charts_window(ChatApp& app) {
    if (!app.charts_window) return;
    ImGui::SetNextWindowSize(ImVec2(1000, 720), ImGuiCond_Appearing);
    if (ImGui::Begin("Charts", &app.charts_window, ImGuiWindowFlags_NoSavedSettings)) draw_charts_tab(app);
    ImGui::End();
}

void draw_metrics_panel(ChatApp& app) {
    if (!ImGui::BeginTabBar("metrics tabs")) return;
    if (ImGui::BeginTabItem("this turn")) {
        draw_live_tab(app);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("charts", nullptr, app.open_charts ? ImGuiTabItemFlags_SetSelected : 0)) {
        draw_charts_tab(app);
        ImGui::EndTabItem();
    }
    app.open_charts = false;
    ImGui::EndTabBar();
}

}  // namespace medusa::chat
