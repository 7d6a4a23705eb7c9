#include "file_dialog.h"

#include "dialog_keys.h"
#include "file_kind.h"
#include "model_summary.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

namespace medusa::chat {

namespace fs = std::filesystem;

void FileDialog::open(std::string* target, const std::string& title) {
    open(*target, [target](const std::string& path) { *target = path; }, title);
}

void FileDialog::open(const std::string& start_path, std::function<void(const std::string&)> choose,
                      const std::string& title) {
    choose_ = std::move(choose);
    title_ = title;
    std::error_code ec;
    fs::path start = start_path.empty() ? fs::current_path(ec) : fs::path(start_path);
    if (!fs::is_directory(start, ec)) start = start.parent_path();
    if (start.empty() || !fs::is_directory(start, ec)) start = fs::current_path(ec);
    list(fs::absolute(start, ec).lexically_normal().string());
    typed_ = start_path;
    want_popup_ = true;
}

void FileDialog::list(const std::string& dir) {
    dir_ = dir;
    entries_.clear();
    error_.clear();
    std::error_code ec;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        entries_.push_back({name, it->is_directory(ec)});
    }
    if (ec) error_ = dir + ": " + ec.message();
    std::sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second : a.first < b.first;  // folders first
    });
}

bool FileDialog::draw() {
    if (!choose_) return false;
    const std::string id = title_ + "###file dialog";
    if (want_popup_) ImGui::OpenPopup(id.c_str()), want_popup_ = false;
    bool chosen = false;
    ImGui::SetNextWindowSize(ImVec2(620, 440), ImGuiCond_Appearing);
    if (ImGui::BeginPopupModal(id.c_str(), nullptr)) {
        ImGui::TextWrapped("%s", dir_.c_str());
        if (ImGui::Button("Up")) list(fs::path(dir_).parent_path().string());
        if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", error_.c_str());
        ImGui::BeginChild("entries", ImVec2(0, -ImGui::GetFrameHeightWithSpacing() * 2.2f - 2 * ImGui::GetTextLineHeightWithSpacing()), true);
        std::string enter;
        for (const auto& [name, folder] : entries_) {
            const std::string label = (folder ? "[dir] " : "      ") + name;
            const std::string full = (fs::path(dir_) / name).string();
            if (ImGui::Selectable(label.c_str(), typed_ == full, ImGuiSelectableFlags_AllowDoubleClick)) {
                typed_ = full;
                if (folder && ImGui::IsMouseDoubleClicked(0)) enter = full;
            }
        }
        ImGui::EndChild();
        if (!enter.empty()) list(enter);
        ImGui::SetNextItemWidth(-1);
        ImGui::InputText("##path", &typed_);
        // What the chosen file is, before it is opened: a model's shape, weights and template.
        if (typed_ != described_) {
            described_ = typed_;
            const FileKind kind = typed_.empty() ? FileKind::Unknown : classify_file(typed_);
            description_ = kind == FileKind::Model ? model_summary(typed_)
                           : kind == FileKind::Unknown ? ""
                                                       : std::string("a ") + file_kind_name(kind);
        }
        ImGui::TextWrapped("%s", description_.c_str());
        if (ImGui::Button("Open") && !typed_.empty()) {
            choose_(typed_);
            chosen = true;
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel") || chosen || close_on_escape()) {
            ImGui::CloseCurrentPopup();
            choose_ = nullptr;
        }
        ImGui::TextDisabled("Double-click a folder to enter it; a folder can be chosen itself.");
        ImGui::EndPopup();
    } else {
        choose_ = nullptr;  // closed by other means
    }
    return chosen;
}

}  // namespace medusa::chat
