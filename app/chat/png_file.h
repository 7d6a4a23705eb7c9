// PNG output for --screenshot (stb_image_write from Debian's libstb) and its sidecar listing
// where the panels are, which the screenshot test reads.
#pragma once
#include <string>

#include "chat_app.h"
#include "window_renderer.h"

namespace medusa::chat {

void write_png(const std::string& path, const Image& image);  // throws on failure
void write_layout_json(const std::string& path, const Image& image, const ChatApp& app);

}  // namespace medusa::chat
