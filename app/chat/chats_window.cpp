#include "chats_window.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include "chat_export.h"
#include "dialog_keys.h"

namespace medusa::chat {

void ChatsWindow::open() {
    entries_ = list_chats(chats_dir(), &skipped_);
    renaming_ = deleting_ = -1;
    note_.clear();
    open_ = true;
}

// One chat's row: its title (click to open), date, model, turns and what can be done with it.
void ChatsWindow::row(ChatsHost& app, size_t i) {
    const ChatEntry& e = entries_[i];
    ImGui::PushID(int(i));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (renaming_ == int(i)) {
        ImGui::SetNextItemWidth(-1);
        if (ImGui::InputText("##name", &new_name_, ImGuiInputTextFlags_EnterReturnsTrue)) {
            try {
                rename_chat(e.path, new_name_);
                if (e.path == app.current_chat()) app.name_current_chat(new_name_);
                reread_ = true;
            } catch (const std::exception& ex) {
                note_ = ex.what();
            }
            renaming_ = -1;
        }
        if (ImGui::IsItemDeactivated() && !ImGui::IsItemDeactivatedAfterEdit()) renaming_ = -1;
    } else if (ImGui::Selectable(e.title.c_str(), e.path == app.current_chat())) {
        if (app.open_saved_chat(e.path)) open_ = false;
        else note_ = app.why_not_opened();
    }
    if (ImGui::IsItemHovered() && renaming_ != int(i)) ImGui::SetTooltip("%s", e.path.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(saved_date(e.saved).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(e.model.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%d", e.turns);
    ImGui::TableNextColumn();
    if (deleting_ == int(i)) {
        ImGui::TextColored(ImVec4(1, 0.6f, 0.5f, 1), "delete?");
        ImGui::SameLine();
        if (ImGui::SmallButton("yes")) {
            try {
                delete_chat(e.path);
                if (e.path == app.current_chat()) app.forget_current_chat();
                note_ = "deleted " + e.path;
                reread_ = true;
            } catch (const std::exception& ex) {
                note_ = ex.what();
            }
            deleting_ = -1;
        }
        ImGui::SameLine();
        if (ImGui::SmallButton("no")) deleting_ = -1;
    } else {
        if (ImGui::SmallButton("rename")) renaming_ = int(i), new_name_ = e.title, deleting_ = -1;
        ImGui::SameLine();
        if (ImGui::SmallButton("delete")) deleting_ = int(i), renaming_ = -1;
        for (const char* ext : {".md", ".json"}) {
            ImGui::SameLine();
            if (ImGui::SmallButton(ext)) {
                try {
                    note_ = "exported to " + export_chat(e.path, ext);
                } catch (const std::exception& ex) {
                    note_ = ex.what();
                }
            }
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Export as %s to %s", ext[1] == 'm' ? "markdown" : "JSON messages",
                                  export_path(e.path, ext).c_str());
        }
    }
    ImGui::PopID();
}

void ChatsWindow::draw(ChatsHost& app) {
    listed_.clear();
    if (!open_) return;
    if (reread_) entries_ = list_chats(chats_dir(), &skipped_), reread_ = false;  // after a rename or delete
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowSize(ImVec2(std::min(760.0f, display.x - 40), std::min(440.0f, display.y - 40)),
                             ImGuiCond_Appearing);
    ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.5f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (!ImGui::Begin("Chats", &open_, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return;
    }
    ImGui::SetNextItemWidth(-1);
    ImGui::InputTextWithHint("##search", "search titles, models and messages", &query);
    ImGui::PushTextWrapPos(0);
    if (!note_.empty()) ImGui::TextDisabled("%s", note_.c_str());
    if (entries_.empty()) ImGui::TextDisabled("No saved chats yet: conversations are saved after every reply in %s.",
                                              chats_dir().c_str());
    if (skipped_ > 0) ImGui::TextDisabled("%d files in the folder are not saved chats.", skipped_);
    ImGui::PopTextWrapPos();
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!entries_.empty() && ImGui::BeginTable("chats", 5, flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("chat", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("saved");
        ImGui::TableSetupColumn("model");
        ImGui::TableSetupColumn("turns");
        ImGui::TableSetupColumn("");
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < entries_.size(); ++i)
            if (chat_matches(entries_[i], query)) listed_.push_back(entries_[i].path), row(app, i);
        ImGui::EndTable();
    }
    if (close_on_escape() && renaming_ < 0) open_ = false;
    ImGui::End();
}

}  // namespace medusa::chat
