// What the app remembers between runs, in the user's config folder
// (${XDG_CONFIG_HOME:-~/.config}/medusa-vk/settings.json): the decoding settings, the files, the
// window size and the tree view. Written atomically (a temporary file renamed over the old one),
// so a crash or a full disk never leaves half a file; a file that does not parse is ignored with
// a message naming it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "decode_settings.h"

namespace medusa::chat {

struct SavedState {
    DecodeSettings settings;
    int window_width = 1440, window_height = 880;
    bool tree_all = false, tree_fit = true;
    float tree_zoom = 1.0f;
    std::vector<std::string> recent_models;  // most recent first, at most kRecentModels
};

constexpr size_t kRecentModels = 8;
constexpr size_t kChosenTemplates = 256;  // chat templates chosen for models, kept
// `path` first in `recent`, once, the list cut to kRecentModels.
void remember_model(std::vector<std::string>& recent, const std::string& path);

// The config folder ("" when neither XDG_CONFIG_HOME nor HOME is set).
std::string config_dir();
// Reads `path`; nullopt when absent. Throws std::runtime_error naming the file when it is unreadable.
std::optional<SavedState> load_state(const std::string& path);
// Throws std::runtime_error naming the file and errno's message when it cannot be written.
void save_state(const std::string& path, const SavedState& state);

}  // namespace medusa::chat
