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

void medusa_tooltip(const StepRecord& r, int i) {
    const TreeNodeTrace& n = r.trace.nodes[i];
    ImGui::BeginTooltip();
    if (i == 0) {
        ImGui::Text("root %s: the model's token from the previous step", label_text(r.node_text[i]).c_str());
    } else {
        ImGui::Text("%s: guessed by head %d (its rank-%d choice)", label_text(r.node_text[i]).c_str(), n.depth,
                    n.rank + 1);
        ImGui::Separator();
        ImGui::Text("head probability:   %.3f", n.draft_prob);
        ImGui::Text("model probability:  %.3f", n.model_prob);
        if (n.limit > 0) ImGui::Text("typical threshold:  %.3f  (%s)", n.limit, n.model_prob >= n.limit ? "passes" : "fails");
        ImGui::Text("%s", n.accepted ? "ACCEPTED: on the longest path the model agreed with"
                          : n.passes ? "passes the rule, but on a shorter path than the accepted one"
                                     : "rejected: the model did not agree");
    }
    ImGui::EndTooltip();
}

void draft_tooltip(const StepRecord& r, int i) {
    const TreeNodeTrace& n = r.trace.nodes[i];
    ImGui::BeginTooltip();
    if (i == 0) {
        ImGui::Text("root %s: the last token so far; the draft continues from it", label_text(r.node_text[i]).c_str());
    } else {
        ImGui::Text("%s: the draft model's token for position %d", label_text(r.node_text[i]).c_str(), n.depth);
        ImGui::Separator();
        if (r.sampled) {
            ImGui::Text("q (draft probability):   %.3f", n.draft_prob);
            if (n.tried) {
                ImGui::Text("p (target probability):  %.3f", n.model_prob);
                ImGui::Text("acceptance probability min(1, p/q) = %.3f",
                            n.draft_prob > 0 ? std::min(1.0f, n.model_prob / n.draft_prob) : 0.0f);
            }
        } else if (n.tried) {
            ImGui::Text("greedy: accepted only if it is the target's most likely token (%s)",
                        n.passes ? "it is" : "it is not");
        }
        ImGui::Text("%s", n.accepted ? "ACCEPTED by the target"
                          : n.tried  ? "REJECTED: the target put its own token here (blue box) and the rest of the "
                                       "chain is discarded"
                                     : "never checked: an earlier drafted token was rejected");
    }
    ImGui::EndTooltip();
}

}  // namespace

void draw_tree_panel(ChatApp& app) {
    const auto& steps = app.reader.steps();
    const int shown = app.shown_step();
    if (shown < 0) {
        ImGui::TextWrapped(
            app.settings.mode == DecodeMode::Draft
                ? "No steps yet. Type the start of a story and press Send: each step, the small draft model writes "
                  "a few tokens ahead, the target model checks all of them in one forward pass, and keeps the "
                  "prefix it agrees with."
                : "No steps yet. Type the start of a story and press Send: each Medusa step proposes a tree of "
                  "guesses for the next tokens, verifies all of them in one forward pass, and keeps the longest "
                  "path the model agrees with.");
        return;
    }
    const StepRecord& r = steps[shown];
    const bool draft = r.source == StepSource::Draft;
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
    if (draft)
        ImGui::TextDisabled("Row d: the draft model's d-th token, each drafted after the one above. Orange: accepted "
                            "by the target. Red: the first rejection; the tokens after it are discarded. Blue: the "
                            "target's own token (resampled after a rejection). q: the draft's probability of the "
                            "token, p: the target's; a token is kept with probability min(1, p/q).");
    else if (app.tree_all)
        ImGui::TextDisabled("Row k: head k's top guesses for the token k places ahead, best rank on the left. Orange: "
                            "the accepted path. Faded: rejected. Blue: the model's own bonus token.");
    else
        ImGui::TextDisabled("Row k: head k's guesses for the token k places ahead that follow the accepted path, best "
                            "rank on the left (+n: guesses folded under a rejected one). Orange: accepted. Faded: "
                            "rejected. Blue: the model's own bonus token.");
    ImGui::PopTextWrapPos();

    const auto& nodes = r.trace.nodes;
    ImGui::BeginChild("tree canvas", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    if (nodes.size() <= 1 && r.trace.drafter == "medusa" && r.trace.step == 1) {
        ImGui::TextWrapped("Step 1 checks the prompt's last token alone: it gives the first token %s and the "
                           "hidden state the Medusa heads guess from. Trees start at step 2.",
                           label_text(r.bonus_text).c_str());
        ImGui::EndChild();
        return;
    }
    const TreeLayout L = draft || app.tree_all ? layout_tree(nodes) : layout_accepted_view(nodes);
    const float gutter = 58;         // row labels ("head 2", "draft 2")
    const int rows = L.rows + 1;     // and one row below the deepest guess
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Fit: the whole width across the panel; nodes shrink, but the accepted path stays full size.
    // The spare column, wide enough for the bonus box at any zoom (and a gap before a chain's wider boxes).
    const float left = gutter + (draft ? 110 : 80);
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
    const float draft_hw = 56;               // a chain has room for "q 0.42  p 0.31" in every box
    const float small_hw = std::min(full_hw, col_w * 0.5f - 1), small_hh = small_hw < 20 ? 9 : full_hh;

    for (int d = 0; d < L.rows; ++d) {
        char buf[32];
        std::snprintf(buf, sizeof buf, d == 0 ? "root" : draft ? "draft %d" : "head %d", d);
        dl->AddText(ImVec2(o.x + 4, center(0, d).y - font * 0.5f), IM_COL32(150, 150, 160, 255), buf);
    }
    for (size_t i = 1; i < nodes.size(); ++i) {
        if (!L.visible[i]) continue;
        const int p = nodes[i].parent;
        const ImVec2 a = center(L.column[p], nodes[p].depth), b = center(L.column[i], nodes[i].depth);
        const bool acc = nodes[i].accepted;
        dl->AddLine(a, b, acc ? kAcceptedPath : IM_COL32(110, 110, 125, draft ? 160 : 90), acc ? 3.5f : 1.0f);
    }
    const int last = r.trace.path.empty() ? 0 : r.trace.path.back();
    const int rejected = draft ? rejected_node(r.trace) : -1;
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
            if (!L.visible[i]) continue;
            const TreeNodeTrace& n = nodes[i];
            const bool acc = n.accepted || i == 0;
            if (acc != (pass == 1)) continue;
            const bool is_rejected = int(i) == rejected;
            const float alpha = acc || is_rejected ? 1.0f : n.passes ? 0.75f : draft ? 0.55f : 0.45f;
            char prob[40];
            if (i == 0) std::snprintf(prob, sizeof prob, "root");
            else if (draft && !r.sampled) std::snprintf(prob, sizeof prob, "%s", !n.tried ? "unchecked" : n.passes ? "= argmax" : "not argmax");
            else if (draft && n.tried) std::snprintf(prob, sizeof prob, "q %.2f  p %.2f", n.draft_prob, n.model_prob);
            else std::snprintf(prob, sizeof prob, draft ? "q %.2f" : "%.2f", n.draft_prob);
            const ImU32 border = acc ? kAcceptedPath : is_rejected ? kRejected : origin_color(draft ? kDraftOrigin : n.depth, alpha);
            const ImU32 fill = acc ? IM_COL32(70, 50, 20, 255) : IM_COL32(38, 40, 52, int(255 * alpha));
            const bool big = acc || draft;  // a chain is narrow: every drafted token gets a full box
            const ImVec2 c = center(L.column[i], n.depth);
            const float hw = draft ? draft_hw : big ? full_hw : small_hw;
            if (box(c, hw, big ? full_hh : small_hh, fill, border,
                    acc || is_rejected ? 3.0f : 1.0f, label_text(r.node_text[i]), prob,
                    IM_COL32(235, 235, 240, int(255 * alpha))))
                hovered = int(i);
            if (is_rejected) {
                char why[48];
                if (r.sampled)
                    std::snprintf(why, sizeof why, "rejected (p/q = %.2f)", n.draft_prob > 0 ? n.model_prob / n.draft_prob : 0.0f);
                else std::snprintf(why, sizeof why, "rejected (not the target's argmax)");
                dl->AddText(ImVec2(c.x + hw + 8, c.y - font * 0.5f), kRejected, why);
            }
            if (L.hidden[i] > 0 && small_hw >= 14) {
                char more[16];
                std::snprintf(more, sizeof more, "+%d", L.hidden[i]);
                const ImVec2 sz = ImGui::CalcTextSize(more);
                dl->AddText(ImVec2(c.x - sz.x * 0.5f, c.y + small_hh + 1), IM_COL32(150, 150, 165, 220), more);
            }
        }
    const char* bonus_label = !draft || rejected < 0 ? "bonus" : r.sampled ? "resampled" : "target's";
    const bool bonus_hover = box(bonus_c, full_hw, full_hh, origin_color(0, 0.30f), origin_color(0), 2.0f,
                                 label_text(r.bonus_text), bonus_label, IM_COL32(235, 235, 240, 255));
    ImGui::Dummy(ImVec2(left + L.columns * col_w + (draft ? 260 : 8), rows * row_h + 8));
    if (hovered >= 0) {
        if (draft) draft_tooltip(r, hovered);
        else medusa_tooltip(r, hovered);
    } else if (bonus_hover) {
        if (draft && rejected >= 0)
            ImGui::SetTooltip(r.sampled ? "resampled %s: after rejecting the draft's token the target draws its own "
                                          "from max(0, p - q), renormalised.\nThis keeps the output distributed "
                                          "exactly as the target alone would sample it."
                                        : "%s: the target's own most likely token, in place of the rejected draft token.",
                              label_text(r.bonus_text).c_str());
        else
            ImGui::SetTooltip("bonus %s: the model's own next token after the accepted path.\nEvery step adds one, so a "
                              "step never yields fewer tokens than plain decoding.",
                              label_text(r.bonus_text).c_str());
    }
    ImGui::EndChild();
}

}  // namespace medusa::chat
