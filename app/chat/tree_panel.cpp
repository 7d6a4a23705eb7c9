// The candidate tree of one step: one row per Medusa head (depth), siblings left to right by
// the head's rank; or, in draft mode, the draft model's chain, one row per drafted position. The
// accepted path is outlined in orange, rejected guesses are faded, the first rejection of a
// draft chain is marked in red, and the model's own bonus (or resampled) token hangs off the last
// accepted node. Hover a node for its numbers. Above the tree, for a step the step controller
// shaped: why it took that shape and the shapes it weighed (control_view.cpp).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat_app.h"
#include "control_view.h"
#include "flow_layout.h"
#include "palette.h"
#include "rejection_view.h"
#include "step_explain.h"
#include "tree_audit.h"
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
// a smaller font (never below 8 px), so narrow boxes at low zoom are still labelled. True when
// the token had to be cut at the box's border all the same.
bool box_text(ImDrawList* dl, ImVec2 c, float hw, float hh, const std::string& l1, const std::string& l2, ImU32 text) {
    const ImVec4 clip(c.x - hw + 1, c.y - hh, c.x + hw - 1, c.y + hh);
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize();
    if (hw >= 22 && 2 * hh >= 2 * size - 2) {  // both lines, where the box is wide and tall enough
        const ImVec2 s1 = ImGui::CalcTextSize(l1.c_str()), s2 = ImGui::CalcTextSize(l2.c_str());
        dl->AddText(font, size, ImVec2(c.x - std::min(s1.x, 2 * hw - 4) * 0.5f, c.y - s1.y + 1), text, l1.c_str(),
                    nullptr, 0, &clip);
        dl->AddText(font, size, ImVec2(c.x - std::min(s2.x, 2 * hw - 4) * 0.5f, c.y - 1), text & 0xB0FFFFFF,
                    l2.c_str(), nullptr, 0, &clip);
        return s1.x > 2 * hw - 2;
    }
    const float w = ImGui::CalcTextSize(l1.c_str()).x;
    const float small = std::min(std::clamp(size * (2 * hw - 2) / std::max(1.0f, w), 8.0f, size), 2 * hh);
    if (hw < 5) return true;
    dl->AddText(font, small, ImVec2(c.x - std::min(w * small / size, 2 * hw - 2) * 0.5f, c.y - small * 0.5f), text,
                l1.c_str(), nullptr, 0, &clip);
    return w * small / size > 2 * hw - 2;
}

// Line 2 of a node's box: what the phase (or the whole-step view) shows of it.
std::string box_line(const StepRecord& r, int i, TeachingPhase phase, bool draft) {
    const TreeNodeTrace& n = r.trace.nodes[i];
    char buf[48];
    if (i == 0) return "root";
    using P = TeachingPhase;
    const bool verdict = phase == P::Acceptance, greedy = r.trace.rule == AcceptRule::Greedy;
    if (phase == P::Draft || phase == P::Tree) std::snprintf(buf, sizeof buf, "q %.2f", n.draft_prob);
    else if (phase == P::Forward) std::snprintf(buf, sizeof buf, "p %.2f", n.model_prob);
    else if (!n.tried) return "not tried";
    else if (verdict && greedy) return n.passes ? "= model's" : "not model's";
    else if (verdict && r.trace.rule == AcceptRule::Typical) std::snprintf(buf, sizeof buf, "p %.2f %s %.2f", n.model_prob, n.passes ? ">" : "<=", n.limit);
    else if (verdict && n.draw >= 0) std::snprintf(buf, sizeof buf, "u %.2f %s %.2f", n.draw, n.passes ? "<" : ">=", n.ratio);
    else if (draft && n.draw >= 0) std::snprintf(buf, sizeof buf, "q %.2f  p %.2f", n.draft_prob, n.model_prob);
    else if (draft && greedy) return n.passes ? "= argmax" : "not argmax";
    else std::snprintf(buf, sizeof buf, "q %.2f", n.draft_prob);
    return buf;
}

// The verify block's attention mask: row = node, column = what it may attend to (the cached text,
// then the block's nodes); a node sees its ancestors and itself.
// The verify pass's attention mask: row i is node i's query, column 0 the cached text every node
// sees, column j+1 node j; a cell is lit where the row's node sees that node (itself and its
// ancestors). Rows are labelled with their tokens and columns with node numbers where the cells
// are large enough, and a legend under the grid says what each colour means. Hovering a cell
// names both nodes and their positions.
constexpr ImU32 kMaskSeen = IM_COL32(120, 170, 255, 230), kMaskHidden = IM_COL32(45, 47, 60, 255),
                kMaskCached = IM_COL32(150, 150, 160, 200), kMaskCaption = IM_COL32(160, 160, 175, 255);

// The column numbers over the grid at `g`: "c" for the cached text, then the nodes (every fifth
// where the cells are too narrow for all).
void draw_mask_columns(ImDrawList* dl, ImVec2 g, int n, float cell) {
    const float small = ImGui::GetFontSize() * 0.7f;
    for (int j = -1; j < n; ++j) {
        const std::string t = j < 0 ? "c" : std::to_string(j);
        const float w = ImGui::CalcTextSize(t.c_str()).x * 0.7f;
        if (w > cell && j % 5 != 0) continue;
        dl->AddText(ImGui::GetFont(), small, ImVec2(g.x + (j + 1) * cell + (cell - w) * 0.5f, g.y - small - 2),
                    kMaskCaption, t.c_str());
    }
}

// The legend under the mask from height `y`, one swatch and a word per colour, wrapped to the
// mask's width; returns where it ends.
float draw_mask_legend(ImDrawList* dl, ImVec2 o, float size, float y) {
    const float font = ImGui::GetFontSize();
    float x = o.x;
    const std::pair<ImU32, const char*> keys[] = {
        {kMaskCached, "cached text"}, {kMaskSeen, "sees"}, {kAcceptedPath, "accepted path"}, {kMaskHidden, "hidden"}};
    for (const auto& [color, word] : keys) {
        const float w = font + 4 + ImGui::CalcTextSize(word).x + 10;
        if (x + w > o.x + size && x > o.x) x = o.x, y += font + 4;
        dl->AddRectFilled(ImVec2(x, y + 2), ImVec2(x + font - 4, y + font - 2), color, 2);
        dl->AddText(ImVec2(x + font, y), kMaskCaption, word);
        x += w;
    }
    return y + font + 4;
}

// The hovered cell's two nodes and their positions; `col` -1 is the cached text.
void mask_tooltip(const StepRecord& r, int row, int col) {
    const auto& nodes = r.trace.nodes;
    const int base = r.trace.base;
    auto node_words = [&](int k) {
        return "node " + std::to_string(k) + " " + label_text(r.node_text[k]) + " at position " +
               std::to_string(base + nodes[k].depth);
    };
    if (col < 0)
        ImGui::SetTooltip("%s sees the cached text, positions 0 to %d", node_words(row).c_str(), base - 1);
    else
        ImGui::SetTooltip("%s %s %s", node_words(row).c_str(),
                          [&] {
                              for (int x = row; x >= 0; x = nodes[x].parent)
                                  if (x == col) return "sees";
                              return "does not see";
                          }(),
                          node_words(col).c_str());
}

float draw_mask(ImDrawList* dl, ImVec2 o, float size, float height, const StepRecord& r, int highlight) {
    const auto& nodes = r.trace.nodes;
    const int n = int(nodes.size());
    const float font = ImGui::GetFontSize();
    const float probe = std::max(2.0f, (size - 24) / float(n + 1));
    const bool labelled = probe >= 11;  // room for a token beside each row
    float label_w = 0;
    if (labelled)
        for (int i = 0; i < n; ++i)
            label_w = std::max(label_w, std::min(60.0f, ImGui::CalcTextSize(label_text(r.node_text[i]).c_str()).x));
    // Cells as large as the width allows, and small enough that the title, the column numbers
    // and two lines of legend fit the height too.
    const float around = font + 4 + (labelled ? font * 0.8f + 2 : 0) + 2 * (font + 4) + 6;
    const float cell = std::max(2.0f, std::min((size - 24 - (labelled ? label_w + 4 : 0)) / float(n + 1),
                                               (height - around) / float(n)));
    dl->AddText(o, kMaskCaption, "attention mask");
    const ImVec2 g(o.x + (labelled ? label_w + 4 : 0), o.y + font + 4 + (labelled ? font * 0.8f + 2 : 0));
    if (labelled) draw_mask_columns(dl, g, n, cell);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    int hover_row = -1, hover_col = -2;
    for (int i = 0; i < n; ++i) {
        const ImVec2 a(g.x, g.y + i * cell);
        dl->AddRectFilled(a, ImVec2(a.x + cell - 1, a.y + cell - 1), kMaskCached);
        if (labelled) {
            const std::string t = label_text(r.node_text[i]);
            const ImVec4 clip(o.x, a.y, g.x - 2, a.y + cell);
            dl->AddText(ImGui::GetFont(), std::min(font, cell), ImVec2(o.x, a.y), kMaskCaption, t.c_str(), nullptr, 0, &clip);
        }
        std::vector<char> anc(n, 0);
        for (int x = i; x >= 0; x = nodes[x].parent) anc[x] = 1;
        for (int j = 0; j < n; ++j) {
            const ImVec2 p(g.x + (j + 1) * cell, g.y + i * cell);
            const bool acc = nodes[i].accepted && nodes[j].accepted && anc[j];
            dl->AddRectFilled(p, ImVec2(p.x + cell - 1, p.y + cell - 1), anc[j] ? (acc ? kAcceptedPath : kMaskSeen) : kMaskHidden);
        }
        if (mouse.y >= a.y && mouse.y < a.y + cell && mouse.x >= g.x && mouse.x < g.x + (n + 1) * cell)
            hover_row = i, hover_col = int((mouse.x - g.x) / cell) - 1;
        if (i == highlight)
            dl->AddRect(ImVec2(g.x - 1, g.y + i * cell - 1), ImVec2(g.x + (n + 1) * cell, g.y + (i + 1) * cell),
                        IM_COL32_WHITE, 0, 0, 1.5f);
    }
    const float bottom = draw_mask_legend(dl, o, size, g.y + n * cell + 6);
    if (hover_row >= 0 && hover_col >= -1 && hover_col < n) mask_tooltip(r, hover_row, hover_col);
    return bottom - o.y;
}

// The step's line and the view's toggles: all nodes, mask, fit, zoom.
void draw_tree_toolbar(ChatApp& app, const StepRecord& r, bool draft) {
    // Step back and forth through the log (the chat's tokens select a step too).
    const int shown = app.shown_step(), count = int(app.reader.steps().size());
    ImGui::BeginDisabled(shown <= 0);
    if (ImGui::ArrowButton("##previous step", ImGuiDir_Left)) app.selected_step = shown - 1;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("The step before this one");
    ImGui::SameLine(0, 2);
    ImGui::BeginDisabled(shown + 1 >= count);
    if (ImGui::ArrowButton("##next step", ImGuiDir_Right)) app.selected_step = shown + 1 == count - 1 ? -1 : shown + 1;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("The step after this one");
    char title[64];
    std::snprintf(title, sizeof title, "Step %d of turn %d%s", r.trace.step, r.turn,
                  app.selected_step < 0 ? " (latest)" : " (selected)");
    flow(ImGui::CalcTextSize(title).x);
    ImGui::TextUnformatted(title);
    if (app.selected_step >= 0) {
        flow(button_width("follow latest"));
        if (ImGui::SmallButton("follow latest")) app.selected_step = -1;
    }
    if (!draft) {
        flow(checkbox_width("all nodes"));
        ImGui::Checkbox("all nodes", &app.tree_all);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Off: the accepted path and every guess under it (folded subtrees show +n).\n"
                              "On: the whole tree; zoom and scroll for large trees.");
    }
    flow(checkbox_width("mask"));
    ImGui::Checkbox("mask", &app.tree_mask);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The verify pass's attention mask beside the tree.");
    flow(checkbox_width("fit"));
    ImGui::Checkbox("fit", &app.tree_fit);
    // The zoom slider takes what is left of the line, 60 px at least (else the next line).
    const float label = ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("zoom").x;
    flow(60 + label);
    ImGui::SetNextItemWidth(std::min(240.0f, ImGui::GetContentRegionAvail().x - label));
    if (ImGui::SliderFloat("zoom", &app.tree_zoom, 0.1f, 2.0f, "%.2f")) app.tree_fit = false;
}

// What the step (or the teaching phase) did, and how to read the picture.
void draw_tree_caption(const ChatApp& app, const StepRecord& r, TeachingPhase phase, bool draft) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 215, 150, 255));
    ImGui::TextWrapped("%s", phase_caption(r, phase).c_str());
    ImGui::PopStyleColor();
    ImGui::PushTextWrapPos(0);
    if (r.trace.nodes.size() <= 1)  // nothing drafted (plain decoding, or the controller fell back to it)
        ImGui::TextDisabled("%s", drafter_explanation(r.trace, app.worker.eagle_reads()).c_str());
    else if (draft)
        ImGui::TextDisabled("Row d: the draft model's d-th token, each drafted after the one above. Orange: accepted "
                            "by the target. Red: the first rejection; the tokens after it are discarded. Blue: the "
                            "target's own token (resampled after a rejection). q: the draft's probability of the "
                            "token, p: the target's.");
    else
        ImGui::TextDisabled("%s Row k: the guesses for the token k places ahead%s, best rank on the left. The number "
                            "in a box is the drafter's probability q of its token; hover a box for the model's p and "
                            "what decided it. Orange: accepted. Faded: rejected or not tried. Blue: the model's own "
                            "token after the accepted ones.",
                            drafter_explanation(r.trace, app.worker.eagle_reads()).c_str(),
                            app.tree_all ? "" : " that follow the accepted path (+n: guesses folded under a rejected one)");
    ImGui::PopTextWrapPos();
}

// Where the tree's rows and columns fall on the canvas, and how big its boxes are.
struct TreeCanvas {
    TreeLayout layout;
    ImDrawList* dl = nullptr;
    ImVec2 origin;
    float left = 0, col_w = 0, row_h = 0, font = 0;
    float col_hw = 0, full_hw = 0, hh = 0;  // box half-widths (any node, an accepted one) and half-height
    int rows = 0;                           // the tree's rows and the model's own token's row
    TreeAudit* audit = nullptr;             // what is drawn, for the layout checks
    ImVec2 center(float col, int row) const {
        return ImVec2(origin.x + left + (col + 0.5f) * col_w, origin.y + 4 + (row + 0.5f) * row_h);
    }
};

// The whole tree (a draft's chain, or every node), else the accepted path and the guesses under it.
TreeLayout tree_layout(const ChatApp& app, const StepRecord& r, bool draft) {
    return draft || app.tree_all ? layout_tree(r.trace.nodes) : layout_accepted_view(r.trace.nodes);
}

TreeCanvas tree_canvas(ChatApp& app, const StepRecord& r, bool draft, ImVec2 avail) {
    TreeCanvas c;
    c.layout = tree_layout(app, r, draft);
    float gutter = ImGui::CalcTextSize("model's own").x + 10;  // row labels ("head 2", "level 2", "model's own")
    for (int d = 0; d < c.layout.rows; ++d)
        gutter = std::max(gutter, ImGui::CalcTextSize(row_label(r.trace, d).c_str()).x + 10);
    c.rows = c.layout.rows + 1;
    c.left = gutter + 4;
    if (app.tree_fit)
        app.tree_zoom = std::clamp((avail.x - c.left - (draft ? 200 : 8)) / (c.layout.columns * 78.0f), 0.1f, 1.4f);
    if (ImGui::IsWindowHovered() && ImGui::GetIO().KeyCtrl && ImGui::GetIO().MouseWheel != 0) {
        app.tree_zoom = std::clamp(app.tree_zoom * (1.0f + 0.1f * ImGui::GetIO().MouseWheel), 0.1f, 2.0f);
        app.tree_fit = false;
    }
    c.col_w = 78 * app.tree_zoom;
    c.row_h = std::clamp((avail.y - 10) / c.rows, 24.0f, 80.0f);
    c.origin = ImGui::GetCursorScreenPos();
    c.dl = ImGui::GetWindowDrawList();
    c.font = ImGui::GetFontSize();
    // Every box fits its column, so neighbours never overlap at any zoom; a chain has one node per row.
    c.col_hw = draft ? 60.0f : std::max(3.0f, c.col_w * 0.5f - 2);
    c.full_hw = std::min(36.0f, c.col_hw);
    c.hh = c.row_h < 40 ? std::min(12.0f, c.row_h * 0.4f) : 17.0f;
    return c;
}

// A box with two lines of text, standing for tree node `node`; true when the mouse is over it.
bool draw_box(const TreeCanvas& c, int node, ImVec2 at, float hw, ImU32 fill, ImU32 border, float thick,
              const std::string& l1, const std::string& l2, ImU32 text) {
    const ImVec2 a(at.x - hw, at.y - c.hh), b(at.x + hw, at.y + c.hh);
    c.dl->AddRectFilled(a, b, fill, 4);
    c.dl->AddRect(a, b, border, 4, 0, thick);
    const bool cut = box_text(c.dl, at, hw, c.hh, l1, l2, text);
    if (c.audit) c.audit->box(node, {a.x, a.y, b.x, b.y}, cut);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    return mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y;
}

// The row labels and the edges (only the accepted path's in the commit phase).
void draw_tree_edges(const TreeCanvas& c, const StepRecord& r, TeachingPhase phase, bool draft, bool verdicts) {
    const auto& nodes = r.trace.nodes;
    const TreeLayout& L = c.layout;
    auto row_text = [&](int row, const std::string& text) {
        const ImVec2 at(c.origin.x + 4, c.center(0, row).y - c.font * 0.5f), sz = ImGui::CalcTextSize(text.c_str());
        c.dl->AddText(at, IM_COL32(150, 150, 160, 255), text.c_str());
        if (c.audit) c.audit->label({at.x, at.y, at.x + sz.x, at.y + sz.y});
    };
    for (int d = 0; d < L.rows; ++d) row_text(d, row_label(r.trace, d));
    if (verdicts) row_text(L.rows, "model's own");
    for (size_t i = 1; i < nodes.size(); ++i) {
        if (!L.visible[i]) continue;
        const int p = nodes[i].parent;
        // From the parent's bottom edge to the child's top edge: in the gap between two rows, never
        // through a box.
        ImVec2 a = c.center(L.column[p], nodes[p].depth), b = c.center(L.column[i], nodes[i].depth);
        a.y += c.hh, b.y -= c.hh;
        const bool acc = verdicts && nodes[i].accepted;
        if (phase == TeachingPhase::Commit && !acc) continue;
        c.dl->AddLine(a, b, acc ? kAcceptedPath : IM_COL32(110, 110, 125, draft ? 160 : 90), acc ? 3.5f : 1.0f);
        if (c.audit) c.audit->edge(p, int(i), a.x, a.y, b.x, b.y);
    }
}

// Every visible node's box, rejected guesses first and the accepted path on top; returns the
// node under the mouse, or -1.
int draw_tree_nodes(const TreeCanvas& c, const StepRecord& r, TeachingPhase phase, bool draft, bool verdicts,
                    int rejected) {
    const auto& nodes = r.trace.nodes;
    const TreeLayout& L = c.layout;
    int hovered = -1;
    for (int pass = 0; pass < 2; ++pass)
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (!L.visible[i]) continue;
            const TreeNodeTrace& n = nodes[i];
            const bool acc = i == 0 || (verdicts && n.accepted);
            if (acc != (pass == 1)) continue;
            if (phase == TeachingPhase::Commit && !acc) continue;
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
            const ImVec2 at = c.center(L.column[i], n.depth);
            const float hw = draft ? c.col_hw : acc ? c.full_hw : c.col_hw;
            // "+n" guesses folded under this one: below the box where the gap between rows has room
            // for it, else at the end of the box's second line.
            std::string more;
            if (L.hidden[i] > 0 && c.col_hw >= 14) more = "+" + std::to_string(L.hidden[i]);
            const bool more_below = !more.empty() && c.row_h - 2 * c.hh >= ImGui::GetTextLineHeight() + 2;
            std::string line2 = box_line(r, int(i), phase, draft);
            if (!more.empty() && !more_below) line2 += " " + more;
            if (draw_box(c, int(i), at, hw, fill, border, acc || is_rejected ? 3.0f : 1.0f, label_text(r.node_text[i]),
                         line2, IM_COL32(235, 235, 240, int(255 * alpha))))
                hovered = int(i);
            if (is_rejected) {
                char why[48];
                if (n.draw >= 0) std::snprintf(why, sizeof why, "rejected (u %.2f >= p/q %.2f)", n.draw, n.ratio);
                else std::snprintf(why, sizeof why, "rejected (not the target's argmax)");
                const ImVec2 w_at(at.x + hw + 8, at.y - c.font * 0.5f), w_sz = ImGui::CalcTextSize(why);
                c.dl->AddText(w_at, kRejected, why);
                if (c.audit) c.audit->label({w_at.x, w_at.y, w_at.x + w_sz.x, w_at.y + w_sz.y});
            }
            if (more_below) {
                const ImVec2 sz = ImGui::CalcTextSize(more.c_str()), m_at(at.x - sz.x * 0.5f, at.y + c.hh + 1);
                c.dl->AddText(m_at, IM_COL32(150, 150, 165, 220), more.c_str());
                if (c.audit) c.audit->label({m_at.x, m_at.y, m_at.x + sz.x, m_at.y + sz.y});
            }
        }
    return hovered;
}

void bonus_tooltip(const StepRecord& r, bool draft, int rejected) {
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

// The verify pass's attention mask in a window of its own beside the tree, which scrolls apart
// from it: a wide tree never runs under the mask.
void draw_mask_view(ChatApp& app, const StepRecord& r, int highlight) {
    ImGui::BeginChild("mask", ImVec2(0, 0), true);
    app.mask_rect = window_rect();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float used = draw_mask(ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), avail.x, avail.y, r, highlight);
    ImGui::Dummy(ImVec2(avail.x, used));  // a mask taller than its room scrolls
    app.audit_window();
    ImGui::EndChild();
}

// A step with no tree: step 1's lone check of the prompt (Medusa), or a step that drafted nothing.
void draw_undrafted_step(const StepRecord& r) {
    ImGui::TextWrapped("%s", r.trace.drafter == DrafterKind::Medusa && r.trace.step == 1
                                 ? ("Step 1 checks the prompt's last token alone: it gives the first token " +
                                    label_text(r.bonus_text) + " and the hidden state the Medusa heads guess from. "
                                    "Trees start at step 2.").c_str()
                                 : ("Nothing was drafted this step: one pass gave the model's own token " +
                                    label_text(r.bonus_text) + ".").c_str());
}

constexpr int kBonusNode = -2;  // the model's own token's box, below the tree

// A tree larger than its view opens scrolled to the end of the accepted path (twice: the first
// frame of a step may still scroll over the last one's size).
void scroll_to_path_end(ChatApp& app, const TreeCanvas& c, ImVec2 bonus_c, ImVec2 avail) {
    if (app.tree_scrolled.step != app.shown_step()) app.tree_scrolled = {app.shown_step(), 2};
    if (app.tree_scrolled.frames > 0) {
        --app.tree_scrolled.frames;
        ImGui::SetScrollX(std::max(0.0f, bonus_c.x - c.origin.x - avail.x * 0.5f));
        ImGui::SetScrollY(std::max(0.0f, bonus_c.y + c.hh + 8 - c.origin.y - avail.y));
    }
}

// The line from the last accepted box down to the model's own token. Where deeper guesses sit in
// between, it leaves the column through the gap beside it rather than crossing them.
void draw_bonus_line(const TreeCanvas& c, const StepRecord& r, bool draft, int last, ImVec2 bonus_c, TreeAudit& audit) {
    const auto& nodes = r.trace.nodes;
    const ImVec2 from = c.center(c.layout.column[last], nodes[last].depth);
    const float below = from.y + c.hh, above = bonus_c.y - c.hh;
    std::vector<ImVec2> line = {ImVec2(from.x, below)};
    if (nodes[last].depth + 1 < c.layout.rows) {
        // Down the nearest gap to the left that no box of the rows below reaches into (at
        // worst the row labels' margin).
        std::vector<std::pair<float, float>> blocked;
        for (size_t i = 1; i < nodes.size(); ++i)
            if (c.layout.visible[i] && nodes[i].depth > nodes[last].depth) {
                const float x = c.center(c.layout.column[i], nodes[i].depth).x;
                const float hw = draft || !nodes[i].accepted ? c.col_hw : c.full_hw;
                blocked.push_back({x - hw - 1.5f, x + hw + 1.5f});
            }
        float side = from.x;
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto& [a, b] : blocked)
                if (side > a && side < b) side = a - 0.5f, moved = true;
        }
        side = std::max(side, c.origin.x + 2);
        const float gap = std::min(3.0f, (c.row_h - 2 * c.hh) * 0.5f);
        line.insert(line.end(), {ImVec2(from.x, below + gap), ImVec2(side, below + gap), ImVec2(side, above - gap),
                                 ImVec2(bonus_c.x, above - gap)});
    }
    line.push_back(ImVec2(bonus_c.x, above));
    c.dl->AddPolyline(line.data(), int(line.size()), origin_color(0), 0, 2.5f);
    for (size_t k = 0; k + 1 < line.size(); ++k)
        audit.edge(last, kBonusNode, line[k].x, line[k].y, line[k + 1].x, line[k + 1].y);
}

// The tree in a scrolling child window, and the mask beside it.
void draw_tree_view(ChatApp& app, const StepRecord& r, TeachingPhase phase, bool draft) {
    const auto& nodes = r.trace.nodes;
    const bool show_mask = (app.tree_mask || phase == TeachingPhase::Tree) && nodes.size() > 1;
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const float mask_w = show_mask ? std::min(room.y, room.x * 0.35f) : 0;
    ImGui::BeginChild("tree canvas", ImVec2(show_mask ? room.x - mask_w : 0, 0), true,
                      ImGuiWindowFlags_HorizontalScrollbar);
    app.tree_canvas_rect = window_rect();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (nodes.size() <= 1 && phase == TeachingPhase::WholeStep) {
        draw_undrafted_step(r);
        app.audit_window();
        ImGui::EndChild();
        return;
    }
    TreeCanvas c = tree_canvas(app, r, draft, avail);
    static TreeAudit audit;  // one tree panel; refilled every frame
    // In view: the window's inside, less its scrollbars; the rest is reached by scrolling.
    const ImVec2 view_min = ImGui::GetWindowContentRegionMin(), view_max = ImGui::GetWindowContentRegionMax();
    const ImVec2 win = ImGui::GetWindowPos();
    const ImVec2 size(c.left + c.layout.columns * c.col_w + (draft ? 260 : 8), c.rows * c.row_h + 8);
    audit.clear({win.x + view_min.x, win.y + view_min.y, win.x + view_max.x, win.y + view_max.y},
                {c.origin.x, c.origin.y, c.origin.x + size.x, c.origin.y + size.y});
    c.audit = &audit;
    const bool verdicts = phase == TeachingPhase::WholeStep || phase == TeachingPhase::Acceptance ||
                          phase == TeachingPhase::Commit;
    const int last = r.trace.path.empty() ? 0 : r.trace.path.back();
    draw_tree_edges(c, r, phase, draft, verdicts);
    const int rejected = draft && verdicts ? rejected_node(r.trace) : -1;
    // The model's own token after the accepted path, in its own row below the tree.
    const ImVec2 bonus_c = c.center(c.layout.column[last], c.layout.rows);
    // As wide as an accepted box, 30 at least, but never into the row labels on the left.
    const float labels_end = c.origin.x + c.left - 4;
    const float bonus_hw = std::max(c.full_hw, std::min(30.0f, bonus_c.x - labels_end));
    scroll_to_path_end(app, c, bonus_c, avail);
    if (verdicts) draw_bonus_line(c, r, draft, last, bonus_c, audit);
    const int hovered = draw_tree_nodes(c, r, phase, draft, verdicts, rejected);
    bool bonus_hover = false;
    if (verdicts) {
        const char* bonus_label = !draft || rejected < 0 ? "own" : n_sampled(r) ? "resampled" : "target's";
        bonus_hover = draw_box(c, kBonusNode, bonus_c, bonus_hw, origin_color(0, 0.30f), origin_color(0), 2.0f,
                               label_text(r.bonus_text), bonus_label, IM_COL32(235, 235, 240, 255));
    }
    ImGui::Dummy(size);  // what the view scrolls over: everything drawn above
    if (hovered >= 0) node_tooltip(r, hovered);
    else if (bonus_hover) bonus_tooltip(r, draft, rejected);
    app.tree_audit = audit.count();
    app.audit_window();
    ImGui::EndChild();
    if (show_mask) {
        ImGui::SameLine(0, 0);
        draw_mask_view(app, r, hovered);
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
    const TeachingPhase phase = app.worker.paused() && app.selected_step < 0 ? app.phase : TeachingPhase::WholeStep;
    draw_tree_toolbar(app, r, draft);
    // What the step did and why, above the tree: what the tree's rows leave at 32 px each, and 30%
    // of the panel at least (scrolling beyond), so the tree keeps the rest at every window size.
    const float room = ImGui::GetContentRegionAvail().y;
    const int rows = r.trace.nodes.size() <= 1 ? 3 : tree_layout(app, r, draft).rows + 1;
    const float tree_h = rows * 32.0f + 8 + 2 * ImGui::GetStyle().WindowPadding.y + ImGui::GetStyle().ScrollbarSize;
    const float text_h = std::min(app.tree_text_h, std::max(room * 0.3f, room - tree_h));
    ImGui::BeginChild("step text", ImVec2(0, std::max(text_h, ImGui::GetTextLineHeightWithSpacing())));
    draw_tree_caption(app, r, phase, draft);
    draw_control_view(app, r);
    draw_rejection_view(r);
    app.tree_text_h = ImGui::GetCursorPosY();
    app.audit_window();
    ImGui::EndChild();
    draw_tree_view(app, r, phase, draft);
}

}  // namespace medusa::chat
