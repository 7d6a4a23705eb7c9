#include "control_view.h"

#include <imgui.h>

#include "break_even.h"
#include "control_explain.h"
#include "palette.h"

namespace medusa::chat {

namespace {

struct Column {
    const char* name;
    const char* tip;
};

constexpr Column kColumns[] = {
    {"drafter", "Who would draft the shape; plain: no draft, the root alone."},
    {"nodes", "The block the verify pass would check, the root (the last token) included."},
    {"exp. tokens", "Tokens the step is expected to emit: 1 (the model's own) + the chance of each drafted node "
                    "being on the accepted path, by the acceptance learned on this text."},
    {"exp. ms", "Drafting plus the verify pass of that many tokens, by the cost model of this device."},
    {"tokens/ms", "Expected tokens per millisecond: the shape with the most is chosen, plain decoding unless a "
                  "draft beats it."},
};

}  // namespace

void draw_control_view(ChatApp& app, const StepRecord& r) {
    if (!r.trace.control || r.details_dropped) return;
    const ControlTrace& c = *r.trace.control;
    ImGui::PushStyleColor(ImGuiCol_Text, kControlText);
    ImGui::TextWrapped("%s", control_sentence(c).c_str());
    if (const std::string outcome = drafted_anyway_outcome(r.trace); !outcome.empty())
        ImGui::TextWrapped("%s", outcome.c_str());
    ImGui::PopStyleColor();
    const std::vector<ShapeRow> rows = shape_rows(c);
    const ImVec2 top = ImGui::GetCursorScreenPos();
    const float width = ImGui::GetContentRegionAvail().x;
    constexpr int n = IM_ARRAYSIZE(kColumns);
    if (!ImGui::BeginTable("weighed", n, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV |
                                             ImGuiTableFlags_BordersOuterH))
        return;
    for (const Column& col : kColumns) ImGui::TableSetupColumn(col.name);
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int i = 0; i < n; ++i) {
        ImGui::TableSetColumnIndex(i);
        ImGui::TableHeader(kColumns[i].name);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kColumns[i].tip);
    }
    for (const ShapeRow& row : rows) {
        ImGui::TableNextRow();
        if (row.chosen) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, kChosenShape);
        const ImU32 text = row.chosen ? IM_COL32_WHITE : IM_COL32(175, 175, 185, 255);
        ImGui::PushStyleColor(ImGuiCol_Text, text);
        for (const std::string* cell : {&row.drafter, &row.nodes, &row.tokens, &row.ms, &row.per_ms}) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(cell->c_str());
        }
        ImGui::PopStyleColor();
    }
    ImGui::EndTable();
    const float bottom = ImGui::GetCursorScreenPos().y - ImGui::GetStyle().ItemSpacing.y;
    app.weighed_rect = {top.x, top.y, width, bottom - top.y};
}

}  // namespace medusa::chat
