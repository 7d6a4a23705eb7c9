// The candidate tree of one step: one row per Medusa head (depth), siblings left to right by
// the head's rank; or, in draft mode, the draft model's chain, one row per drafted position. The
// accepted path is outlined in orange, rejected guesses are faded, the first rejection of a
// draft chain is marked in red, and the model's own bonus (or resampled) token hangs off the last
// accepted node. Hover a node for its numbers.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat_app.h"
#include "palette.h"
#include "step_explain.h"
#include "tree_layout.h"

namespace medusa::chat {

namespace {

constexpr ImU32 kRejected = IM_COL32(235, 70, 70, 255);

std::string label_text(std::string s) {
    for (auto& c : s)
        if (c == '\n') c = ' ';
    if (s.size() > 10) s = s.substr(0, 9) + "~";
    return "'" + s + "'";
}

bool n_sampled(const StepRecord& r) { return r.sampled; }

void node_tooltip(const StepRecord& r, int i) {
    ImGui::BeginTooltip();
    const auto lines = node_explanation(r, i);
    for (size_t k = 0; k < lines.size(); ++k) {
        if (k == 1) ImGui::Separator();
        ImGui::TextUnformatted(lines[k].c_str());
    }
    ImGui::EndTooltip();
}

// Box text that fits: both lines at the normal size when there is room, else the token alone in
// a smaller font (never below 8 px), so narrow boxes at low zoom are still labelled.
void box_text(ImDrawList* dl, ImVec2 c, float hw, float hh, const std::string& l1, const std::string& l2, ImU32 text) {
    const ImVec4 clip(c.x - hw + 1, c.y - hh, c.x + hw - 1, c.y + hh);
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    if (hw >= 22) {
        const ImVec2 s1 = ImGui::CalcTextSize(l1.c_str()), s2 = ImGui::CalcTextSize(l2.c_str());
        dl->AddText(font, size, ImVec2(c.x - std::min(s1.x, 2 * hw - 4) * 0.5f, c.y - s1.y + 1), text, l1.c_str(),
                    nullptr, 0, &clip);
        dl->AddText(font, size, ImVec2(c.x - std::min(s2.x, 2 * hw - 4) * 0.5f, c.y - 1), text & 0xB0FFFFFF,
                    l2.c_str(), nullptr, 0, &clip);
        return;
    }
    const float w = ImGui::CalcTextSize(l1.c_str()).x;
    const float small = std::clamp(size * (2 * hw - 2) / std::max(1.0f, w), 8.0f, size);
    if (hw < 5) return;
    dl->AddText(font, small, ImVec2(c.x - std::min(w * small / size, 2 * hw - 2) * 0.5f, c.y - small * 0.5f), text,
                l1.c_str(), nullptr, 0, &clip);
}

// Line 2 of a node's box: what the phase (or the whole-step view) shows of it.
std::string box_line(const StepRecord& r, int i, int phase, bool draft) {
    const TreeNodeTrace& n = r.trace.nodes[i];
    char buf[48];
    if (i == 0) return "root";
    if (phase == 1 || phase == 2) std::snprintf(buf, sizeof buf, "q %.2f", n.draft_prob);
    else if (phase == 3) std::snprintf(buf, sizeof buf, "p %.2f", n.model_prob);
    else if (!n.tried) return "not tried";
    else if (phase == 4 && r.trace.rule == "greedy") return n.passes ? "= model's" : "not model's";
    else if (phase == 4 && r.trace.rule == "typical") std::snprintf(buf, sizeof buf, "p %.2f %s %.2f", n.model_prob, n.passes ? ">" : "<=", n.limit);
    else if (phase == 4 && n.draw >= 0) std::snprintf(buf, sizeof buf, "u %.2f %s %.2f", n.draw, n.passes ? "<" : ">=", n.ratio);
    else if (draft && n.draw >= 0) std::snprintf(buf, sizeof buf, "q %.2f  p %.2f", n.draft_prob, n.model_prob);
    else if (draft && r.trace.rule == "greedy") return n.passes ? "= argmax" : "not argmax";
    else std::snprintf(buf, sizeof buf, "q %.2f", n.draft_prob);
    return buf;
}

// The verify block's attention mask: row = node, column = what it may attend to (the cached text,
// then the block's nodes); a node sees its ancestors and itself.
void draw_mask(ImDrawList* dl, ImVec2 o, float size, const StepRecord& r, int highlight) {
    const auto& nodes = r.trace.nodes;
    const int n = int(nodes.size());
    const float cell = std::max(2.0f, (size - 24) / float(n + 1));
    const ImU32 seen = IM_COL32(120, 170, 255, 230), not_seen = IM_COL32(45, 47, 60, 255);
    dl->AddText(o, IM_COL32(160, 160, 175, 255), "attention mask");
    const ImVec2 g(o.x, o.y + ImGui::GetFontSize() + 4);
    for (int i = 0; i < n; ++i) {
        // Column 0: the cached text, which every node sees.
        const ImVec2 a(g.x, g.y + i * cell);
        dl->AddRectFilled(a, ImVec2(a.x + cell - 1, a.y + cell - 1), IM_COL32(150, 150, 160, 200));
        std::vector<char> anc(n, 0);
        for (int x = i; x >= 0; x = nodes[x].parent) anc[x] = 1;
        for (int j = 0; j < n; ++j) {
            const ImVec2 p(g.x + (j + 1) * cell, g.y + i * cell);
            const bool acc = nodes[i].accepted && nodes[j].accepted && anc[j];
            dl->AddRectFilled(p, ImVec2(p.x + cell - 1, p.y + cell - 1), anc[j] ? (acc ? kAcceptedPath : seen) : not_seen);
        }
        if (i == highlight)
            dl->AddRect(ImVec2(g.x - 1, g.y + i * cell - 1), ImVec2(g.x + (n + 1) * cell, g.y + (i + 1) * cell),
                        IM_COL32_WHITE, 0, 0, 1.5f);
    }
}

}  // namespace

void draw_tree_panel(ChatApp& app) {
    const auto& steps = app.reader.steps();
    const int shown = app.shown_step();
    if (shown < 0) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled("No steps yet. Type the start of a story and press Send: each step, the drafter proposes "
                            "a tree of guesses for the next tokens, one forward pass of the model checks all of "
                            "them, and the acceptance rule keeps the longest path the model agrees with.");
        ImGui::PopTextWrapPos();
        return;
    }
    const StepRecord& r = steps[shown];
    if (r.details_dropped) {
        ImGui::Text("Step %d of turn %d (selected)", r.trace.step, r.turn);
        ImGui::SameLine();
        if (ImGui::SmallButton("follow latest")) app.selected_step = -1;
        ImGui::TextWrapped("%s", step_caption(r).c_str());
        return;
    }
    const bool draft = r.source == StepSource::Draft;
    // Phases are a teaching-mode walk through the latest step while decoding is paused.
    const int phase = app.worker.paused() && app.selected_step < 0 ? app.phase : 0;
    ImGui::Text("Step %d of turn %d%s", r.trace.step, r.turn, app.selected_step < 0 ? " (latest)" : " (selected)");
    ImGui::SameLine();
    if (app.selected_step >= 0 && ImGui::SmallButton("follow latest")) app.selected_step = -1;
    ImGui::SameLine();
    if (!draft) {
        ImGui::Checkbox("all nodes", &app.tree_all);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Off: the accepted path and every guess under it (folded subtrees show +n).\n"
                              "On: the whole tree; zoom and scroll for large trees.");
        ImGui::SameLine();
    }
    ImGui::Checkbox("mask", &app.tree_mask);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The verify pass's attention mask beside the tree.");
    ImGui::SameLine();
    ImGui::Checkbox("fit", &app.tree_fit);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(60.0f, ImGui::GetContentRegionAvail().x - 100));
    if (ImGui::SliderFloat("zoom", &app.tree_zoom, 0.1f, 2.0f, "%.2f")) app.tree_fit = false;
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 215, 150, 255));
    ImGui::TextWrapped("%s", phase > 0 ? phase_caption(r, phase).c_str() : step_caption(r).c_str());
    ImGui::PopStyleColor();
    ImGui::PushTextWrapPos(0);
    if (draft)
        ImGui::TextDisabled("Row d: the draft model's d-th token, each drafted after the one above. Orange: accepted "
                            "by the target. Red: the first rejection; the tokens after it are discarded. Blue: the "
                            "target's own token (resampled after a rejection). q: the draft's probability of the "
                            "token, p: the target's.");
    else
        ImGui::TextDisabled("%s Row k: the guesses for the token k places ahead%s, best rank on the left. The number "
                            "in a box is the drafter's probability q of its token; hover a box for the model's p and "
                            "what decided it. Orange: accepted. Faded: rejected or not tried. Blue: the model's own "
                            "token after the accepted ones.",
                            drafter_explanation(r.trace).c_str(),
                            app.tree_all ? "" : " that follow the accepted path (+n: guesses folded under a rejected one)");
    ImGui::PopTextWrapPos();

    const auto& nodes = r.trace.nodes;
    ImGui::BeginChild("tree canvas", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    const bool show_mask = (app.tree_mask || phase == 2) && nodes.size() > 1;
    const ImVec2 avail0 = ImGui::GetContentRegionAvail();
    const float mask_w = show_mask ? std::min(avail0.y, avail0.x * 0.35f) : 0;
    const ImVec2 avail(avail0.x - mask_w, avail0.y);
    if (nodes.size() <= 1 && phase == 0) {
        ImGui::TextWrapped("%s", r.trace.drafter == "medusa" && r.trace.step == 1
                                     ? ("Step 1 checks the prompt's last token alone: it gives the first token " +
                                        label_text(r.bonus_text) + " and the hidden state the Medusa heads guess from. "
                                        "Trees start at step 2.").c_str()
                                     : ("Nothing was drafted this step: one pass gave the model's own token " +
                                        label_text(r.bonus_text) + ".").c_str());
        ImGui::EndChild();
        return;
    }
    const TreeLayout L = draft || app.tree_all ? layout_tree(nodes) : layout_accepted_view(nodes);
    float gutter = ImGui::CalcTextSize("model's own").x + 10;  // row labels ("head 2", "level 2", "model's own")
    for (int d = 0; d < L.rows; ++d) gutter = std::max(gutter, ImGui::CalcTextSize(row_label(r.trace, d).c_str()).x + 10);
    const int rows = L.rows + 1;             // the tree's rows, then the model's own token's row
    const float left = gutter + 4;
    if (app.tree_fit) app.tree_zoom = std::clamp((avail.x - left - (draft ? 200 : 8)) / (L.columns * 78.0f), 0.1f, 1.4f);
    if (ImGui::IsWindowHovered() && ImGui::GetIO().KeyCtrl && ImGui::GetIO().MouseWheel != 0) {
        app.tree_zoom = std::clamp(app.tree_zoom * (1.0f + 0.1f * ImGui::GetIO().MouseWheel), 0.1f, 2.0f);
        app.tree_fit = false;
    }
    const float z = app.tree_zoom;
    const float col_w = 78 * z, row_h = std::clamp((avail.y - 10) / rows, 30.0f, 80.0f);
    const ImVec2 o = ImGui::GetCursorScreenPos();
    auto center = [&](float col, int row) { return ImVec2(o.x + left + (col + 0.5f) * col_w, o.y + 4 + (row + 0.5f) * row_h); };
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    // Every box fits its column, so neighbours never overlap at any zoom; a chain has one node per row.
    const float col_hw = draft ? 60.0f : std::max(3.0f, col_w * 0.5f - 2);
    const float full_hw = std::min(36.0f, col_hw), hh = row_h < 40 ? std::min(12.0f, row_h * 0.4f) : 17.0f;

    for (int d = 0; d < L.rows; ++d)
        dl->AddText(ImVec2(o.x + 4, center(0, d).y - font * 0.5f), IM_COL32(150, 150, 160, 255), row_label(r.trace, d).c_str());
    const bool verdicts = phase == 0 || phase >= 4;
    const int last = r.trace.path.empty() ? 0 : r.trace.path.back();
    if (verdicts)
        dl->AddText(ImVec2(o.x + 4, center(0, L.rows).y - font * 0.5f), IM_COL32(150, 150, 160, 255), "model's own");
    for (size_t i = 1; i < nodes.size(); ++i) {
        if (!L.visible[i]) continue;
        const int p = nodes[i].parent;
        const ImVec2 a = center(L.column[p], nodes[p].depth), b = center(L.column[i], nodes[i].depth);
        const bool acc = verdicts && nodes[i].accepted;
        if (phase == 5 && !acc) continue;
        dl->AddLine(a, b, acc ? kAcceptedPath : IM_COL32(110, 110, 125, draft ? 160 : 90), acc ? 3.5f : 1.0f);
    }
    const int rejected = draft && verdicts ? rejected_node(r.trace) : -1;
    // The model's own token after the accepted path, in its own row below the tree.
    const ImVec2 bonus_c = center(L.column[last], L.rows);
    if (verdicts) dl->AddLine(center(L.column[last], nodes[last].depth), bonus_c, origin_color(0), 2.5f);
    int hovered = -1;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    auto box = [&](ImVec2 c, float hw, ImU32 fill, ImU32 border, float thick, const std::string& l1,
                   const std::string& l2, ImU32 text) {
        const ImVec2 a(c.x - hw, c.y - hh), b(c.x + hw, c.y + hh);
        dl->AddRectFilled(a, b, fill, 4);
        dl->AddRect(a, b, border, 4, 0, thick);
        box_text(dl, c, hw, hh, l1, l2, text);
        return mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y;
    };
    // Rejected guesses first, then the accepted path on top of them.
    for (int pass = 0; pass < 2; ++pass)
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (!L.visible[i]) continue;
            const TreeNodeTrace& n = nodes[i];
            const bool acc = i == 0 || (verdicts && n.accepted);
            if (acc != (pass == 1)) continue;
            if (phase == 5 && !acc) continue;
            const bool is_rejected = int(i) == rejected;
            // Before the verdict every guess looks alike; after it, rejected and untried guesses fade.
            const float alpha = !verdicts || acc || is_rejected ? 1.0f : !n.tried ? 0.35f : n.passes ? 0.75f : 0.5f;
            const ImU32 border = acc ? kAcceptedPath : is_rejected ? kRejected
                                                                   : origin_color(draft ? kDraftOrigin : n.depth, alpha);
            // A fill as strong as the guess was likely, so small boxes are not bare outlines.
            const float strength = std::clamp(0.35f + 0.65f * n.draft_prob, 0.35f, 1.0f);
            const ImU32 fill = acc ? IM_COL32(70, 50, 20, 255)
                                   : IM_COL32(int(38 + 30 * strength), int(40 + 30 * strength), int(52 + 40 * strength),
                                              int(255 * alpha));
            const ImVec2 c = center(L.column[i], n.depth);
            const float hw = draft ? col_hw : acc ? full_hw : col_hw;
            if (box(c, hw, fill, border, acc || is_rejected ? 3.0f : 1.0f, label_text(r.node_text[i]),
                    box_line(r, int(i), phase, draft), IM_COL32(235, 235, 240, int(255 * alpha))))
                hovered = int(i);
            if (is_rejected) {
                char why[48];
                if (n.draw >= 0) std::snprintf(why, sizeof why, "rejected (u %.2f >= p/q %.2f)", n.draw, n.ratio);
                else std::snprintf(why, sizeof why, "rejected (not the target's argmax)");
                dl->AddText(ImVec2(c.x + hw + 8, c.y - font * 0.5f), kRejected, why);
            }
            if (L.hidden[i] > 0 && col_hw >= 14) {
                char more[16];
                std::snprintf(more, sizeof more, "+%d", L.hidden[i]);
                const ImVec2 sz = ImGui::CalcTextSize(more);
                dl->AddText(ImVec2(c.x - sz.x * 0.5f, c.y + hh + 1), IM_COL32(150, 150, 165, 220), more);
            }
        }
    bool bonus_hover = false;
    if (verdicts) {
        const char* bonus_label = !draft || rejected < 0 ? "own" : n_sampled(r) ? "resampled" : "target's";
        bonus_hover = box(bonus_c, std::max(full_hw, 30.0f), origin_color(0, 0.30f), origin_color(0), 2.0f,
                          label_text(r.bonus_text), bonus_label, IM_COL32(235, 235, 240, 255));
    }
    if (show_mask) draw_mask(dl, ImVec2(o.x + avail.x + 4, o.y), mask_w - 8, r, hovered);
    ImGui::Dummy(ImVec2(left + L.columns * col_w + (draft ? 260 : 8) + mask_w, rows * row_h + 8));
    if (hovered >= 0) {
        node_tooltip(r, hovered);
    } else if (bonus_hover) {
        if (draft && rejected >= 0)
            ImGui::SetTooltip(n_sampled(r) ? "resampled %s: after rejecting the draft's token the target draws its own "
                                             "from what is left of p, max(0, p - q) renormalised.\nThis keeps the "
                                             "output distributed exactly as the target alone would sample it."
                                           : "%s: the target's own most likely token, in place of the rejected draft token.",
                              label_text(r.bonus_text).c_str());
        else
            ImGui::SetTooltip("%s: the model's own next token after the accepted path (from the same pass).\nEvery step "
                              "adds one, so a step never yields fewer tokens than plain decoding.",
                              label_text(r.bonus_text).c_str());
    }
    ImGui::EndChild();
}

}  // namespace medusa::chat
