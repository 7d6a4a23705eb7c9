// The app's panels drawn without a window: an ImGui context with the app's fonts, a frame at a
// time over the app's real state.
#pragma once
#include <imgui.h>

#include "chat_app.h"
#include "chat_fonts.h"

namespace medusa::chat::test {

class HeadlessFrames {
public:
    HeadlessFrames() {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DeltaTime = 1.0f / 30;
        load_chat_fonts(15);
        unsigned char* pixels;
        int w, h;
        io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);  // builds the atlas
    }
    ~HeadlessFrames() { ImGui::DestroyContext(); }
    HeadlessFrames(const HeadlessFrames&) = delete;
    HeadlessFrames& operator=(const HeadlessFrames&) = delete;

    // One frame of the whole app (every panel, and the windows it opens), at this size.
    void whole_app(ChatApp& app, float width = 1280, float height = 720) {
        ImGui::GetIO().DisplaySize = ImVec2(width, height);
        ImGui::NewFrame();
        app.draw(width, height);
        ImGui::Render();
    }

    // One frame of the chat panel alone, in a window of this size.
    void chat_panel(ChatApp& app, float width = 1280, float height = 720) {
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(width, height);
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::Begin("chat");
        draw_chat_panel(app);
        ImGui::End();
        ImGui::Render();
    }
};

}  // namespace medusa::chat::test
