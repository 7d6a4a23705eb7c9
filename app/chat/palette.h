// One set of colours for every panel, so "head 2" is the same colour in the chat, the tree and
// the timeline. The accepted-path highlight is an orange used nowhere else (the screenshot test
// looks for it in the tree panel).
#pragma once
#include <imgui.h>

#include "decode/decoding_kinds.h"

namespace medusa::chat {

// Tokens a draft model proposed and the target accepted (draft mode has one origin, not one per head).
constexpr int kDraftOrigin = 100;

inline ImU32 origin_color(int origin, float alpha = 1.0f) {
    // origin 0: the model's own token (root or bonus); k: accepted from Medusa head k.
    if (origin == kDraftOrigin) return ImGui::ColorConvertFloat4ToU32(ImVec4(0.30f, 0.86f, 0.70f, alpha));
    static const ImVec4 colors[] = {
        {0.47f, 0.71f, 1.00f, 1}, {0.40f, 0.86f, 0.45f, 1}, {0.95f, 0.85f, 0.30f, 1}, {0.95f, 0.47f, 0.80f, 1},
        {0.68f, 0.56f, 1.00f, 1}, {0.30f, 0.86f, 0.86f, 1}, {0.85f, 0.85f, 0.85f, 1}, {0.60f, 0.80f, 0.60f, 1},
    };
    ImVec4 c = colors[origin < 0 ? 0 : origin % 8];
    c.w = alpha;
    return ImGui::ColorConvertFloat4ToU32(c);
}

constexpr ImU32 kAcceptedPath = IM_COL32(255, 140, 0, 255);
// The step controller's words and the row of the shape it chose (opaque: the screenshot test
// finds the row by this exact colour).
constexpr ImU32 kControlText = IM_COL32(150, 220, 190, 255);
constexpr ImU32 kChosenShape = IM_COL32(38, 86, 66, 255);
constexpr ImU32 kPromptText = IM_COL32(175, 175, 185, 255);
constexpr ImU32 kRoleText = IM_COL32(120, 170, 230, 255);  // "You:" and "Assistant:" before a chat model's turns
constexpr ImU32 kLeftOut = IM_COL32(220, 160, 90, 255);  // the mark of a turn left out of the model's context
constexpr ImU32 kNodeFill = IM_COL32(38, 40, 52, 255);
constexpr ImU32 kCanvasBg = IM_COL32(24, 25, 32, 255);

// Which drafter a step used (the timeline's strip under each bar): the draft model's colour is its
// tokens', plain decoding a grey.
inline ImU32 drafter_color(DrafterKind kind) {
    switch (kind) {
        case DrafterKind::Medusa: return IM_COL32(170, 130, 255, 255);
        case DrafterKind::DraftModel: return origin_color(kDraftOrigin);
        case DrafterKind::Ngram: return IM_COL32(240, 200, 80, 255);
        case DrafterKind::Eagle: return IM_COL32(240, 120, 200, 255);
        case DrafterKind::Plain:
        case DrafterKind::Auto: break;
    }
    return IM_COL32(125, 125, 135, 255);
}

inline const char* origin_name(int origin) {
    if (origin == kDraftOrigin) return "draft token";
    static const char* names[] = {"model", "head 1", "head 2", "head 3", "head 4", "head 5", "head 6", "head 7"};
    return names[origin < 0 ? 0 : origin % 8];
}

}  // namespace medusa::chat
