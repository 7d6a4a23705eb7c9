// The candidate tree of one step: one row per Medusa head (depth), siblings left to right by
// the head's rank. The accepted path is outlined in orange, rejected guesses are faded, and the
// model's own bonus token hangs off the last accepted node. Hover a node for its numbers.
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

std::string label_text(std::string s) {
    for (auto& c : s)
        if (c == '\n') c = ' ';
    if (s.size() > 10) s = s.substr(0, 9) + "~";
    return "'" + s + "'";
}

void node_tooltip(const StepRecord& r, int i) {
    const TreeNodeTrace& n = r.trace.nodes[i];
    ImGui::BeginTooltip();
    if (i == 0) {
        ImGui::Text("root %s: the model's token from the previous step", label_text(r.node_text[i]).c_str());
    } else {
        ImGui::Text("%s: guessed by head %d (its rank-%d choice)", label_text(r.node_text[i]).c_str(), n.depth,
                    n.rank + 1);
        ImGui::Separator();
        ImGui::Text("head probability:   %.3f", n.head_prob);
        ImGui::Text("model probability:  %.3f", n.model_prob);
        if (n.limit > 0) ImGui::Text("typical threshold:  %.3f  (%s)", n.limit, n.model_prob >= n.limit ? "passes" : "fails");
        ImGui::Text("%s", n.accepted ? "ACCEPTED: on the longest path the model agreed with"
                          : n.passes ? "passes the rule, but on a shorter path than the accepted one"
                                     : "rejected: the model did not agree");
    }
    ImGui::EndTooltip();
}

}  // namespace

void draw_tree_panel(ChatApp& app) {
    const auto& steps = app.reader.steps();
    const int shown = app.shown_step();
    if (shown < 0) {
        ImGui::TextWrapped("No steps yet. Type the start of a story and press Send: each Medusa step proposes a tree "
                           "of guesses for the next tokens, verifies all of them in one forward pass, and keeps the "
                           "longest path the model agrees with.");
        return;
    }
    const StepRecord& r = steps[shown];
    ImGui::Text("Step %d of turn %d%s", r.trace.step, r.turn, app.selected_step < 0 ? " (latest)" : " (selected)");
    ImGui::SameLine();
    if (app.selected_step >= 0 && ImGui::SmallButton("follow latest")) app.selected_step = -1;
    ImGui::SameLine();
    ImGui::Checkbox("fit", &app.tree_fit);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110);
    if (ImGui::SliderFloat("zoom", &app.tree_zoom, 0.1f, 2.0f, "%.2f")) app.tree_fit = false;
    ImGui::SameLine();
    ImGui::TextDisabled("(ctrl+wheel)");
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 215, 150, 255));
    ImGui::TextWrapped("%s", step_caption(r).c_str());
    ImGui::PopStyleColor();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Row k: head k's top guesses for the token k places ahead, best rank on the left. Orange: the "
                        "accepted path. Faded: rejected. Blue: the model's own bonus token.");
    ImGui::PopTextWrapPos();

    const auto& nodes = r.trace.nodes;
    ImGui::BeginChild("tree canvas", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    if (nodes.empty()) {
        ImGui::TextWrapped("Step 0 is the prompt's own forward pass: it gives the first token %s and the hidden "
                           "state the Medusa heads guess from. Trees start at step 1.",
                           label_text(r.bonus_text).c_str());
        ImGui::EndChild();
        return;
    }
    const TreeLayout L = layout_tree(nodes);
    const float gutter = 58;      // row labels ("head 2")
    const int rows = L.rows + 1;     // and one row below the deepest guess
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Fit: the whole tree across the panel; nodes shrink, but the accepted path stays full size.
    const float left = gutter + 80;  // the spare column, wide enough for the bonus box at any zoom
    if (app.tree_fit) app.tree_zoom = std::clamp((avail.x - left - 8) / (L.columns * 78.0f), 0.1f, 1.4f);
    if (ImGui::IsWindowHovered() && ImGui::GetIO().KeyCtrl && ImGui::GetIO().MouseWheel != 0) {
        app.tree_zoom = std::clamp(app.tree_zoom * (1.0f + 0.1f * ImGui::GetIO().MouseWheel), 0.1f, 2.0f);
        app.tree_fit = false;
    }
    const float z = app.tree_zoom;
    const float col_w = 78 * z, row_h = std::clamp((avail.y - 10) / rows, 44.0f, 80.0f);
    const ImVec2 o = ImGui::GetCursorScreenPos();
    auto center = [&](float col, int row) {
        const float x = col < 0 ? gutter + 40 : left + (col + 0.5f) * col_w;
        return ImVec2(o.x + x, o.y + 4 + (row + 0.5f) * row_h);
    };
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const float full_hw = 36, full_hh = 17;  // accepted path, root and bonus: always readable
    const float small_hw = std::min(full_hw, col_w * 0.5f - 1), small_hh = small_hw < 20 ? 9 : full_hh;

    for (int d = 0; d < L.rows; ++d) {
        char buf[32];
        std::snprintf(buf, sizeof buf, d == 0 ? "root" : "head %d", d);
        dl->AddText(ImVec2(o.x + 4, center(0, d).y - font * 0.5f), IM_COL32(150, 150, 160, 255), buf);
    }
    for (size_t i = 1; i < nodes.size(); ++i) {
        const int p = nodes[i].parent;
        const ImVec2 a = center(L.column[p], nodes[p].depth), b = center(L.column[i], nodes[i].depth);
        const bool acc = nodes[i].accepted;
        dl->AddLine(a, b, acc ? kAcceptedPath : IM_COL32(110, 110, 125, 90), acc ? 3.5f : 1.0f);
    }
    const int last = r.trace.path.empty() ? 0 : r.trace.path.back();
    // The bonus token: the model's own next token after the accepted path, in the spare column.
    const ImVec2 bonus_c = center(-1.0f, nodes[last].depth + 1);
    dl->AddLine(center(L.column[last], nodes[last].depth), bonus_c, origin_color(0), 2.5f);
    int hovered = -1;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    auto box = [&](ImVec2 c, float hw, float hh, ImU32 fill, ImU32 border, float thick, const std::string& l1,
                   const std::string& l2, ImU32 text) {
        const ImVec2 a(c.x - hw, c.y - hh), b(c.x + hw, c.y + hh);
        dl->AddRectFilled(a, b, fill, 4);
        dl->AddRect(a, b, border, 4, 0, thick);
        if (hw >= 22) {
            const ImVec4 clip(a.x + 2, a.y, b.x - 2, b.y);
            const ImVec2 s1 = ImGui::CalcTextSize(l1.c_str()), s2 = ImGui::CalcTextSize(l2.c_str());
            dl->AddText(nullptr, 0, ImVec2(c.x - std::min(s1.x, 2 * hw - 4) * 0.5f, c.y - s1.y + 1), text, l1.c_str(),
                        nullptr, 0, &clip);
            dl->AddText(nullptr, 0, ImVec2(c.x - s2.x * 0.5f, c.y - 1), text & 0xB0FFFFFF, l2.c_str(), nullptr, 0, &clip);
        }
        return mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y;
    };
    // Rejected guesses first, then the accepted path on top of them.
    for (int pass = 0; pass < 2; ++pass)
        for (size_t i = 0; i < nodes.size(); ++i) {
            const TreeNodeTrace& n = nodes[i];
            const bool acc = n.accepted || i == 0;
            if (acc != (pass == 1)) continue;
            const float alpha = acc ? 1.0f : n.passes ? 0.75f : 0.45f;
            char prob[24];
            std::snprintf(prob, sizeof prob, i == 0 ? "root" : "%.2f", n.head_prob);
            const ImU32 border = acc ? kAcceptedPath : origin_color(n.depth, alpha);
            const ImU32 fill = acc ? IM_COL32(70, 50, 20, 255) : IM_COL32(38, 40, 52, int(255 * alpha));
            if (box(center(L.column[i], n.depth), acc ? full_hw : small_hw, acc ? full_hh : small_hh, fill, border,
                    acc ? 3.0f : 1.0f, label_text(r.node_text[i]), prob, IM_COL32(235, 235, 240, int(255 * alpha))))
                hovered = int(i);
        }
    const bool bonus_hover = box(bonus_c, full_hw, full_hh, origin_color(0, 0.30f), origin_color(0), 2.0f,
                                 label_text(r.bonus_text), "bonus", IM_COL32(235, 235, 240, 255));
    ImGui::Dummy(ImVec2(left + L.columns * col_w + 8, rows * row_h + 8));
    if (hovered >= 0) node_tooltip(r, hovered);
    else if (bonus_hover)
        ImGui::SetTooltip("bonus %s: the model's own next token after the accepted path.\nEvery step adds one, so a "
                          "step never yields fewer tokens than plain decoding.",
                          label_text(r.bonus_text).c_str());
    ImGui::EndChild();
}

}  // namespace medusa::chat
