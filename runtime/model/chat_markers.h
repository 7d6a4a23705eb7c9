// The special pieces the chat formats write, shared by their renderers (chat_render.cpp) and the
// detection and stop rules (chat_template.cpp).
#pragma once

namespace medusa::chat_markers {

inline constexpr const char* kBos = "<s>";
inline constexpr const char* kEos = "</s>";
inline constexpr const char* kImStart = "<|im_start|>";
inline constexpr const char* kImEnd = "<|im_end|>";
inline constexpr const char* kHeaderStart = "<|start_header_id|>";
inline constexpr const char* kHeaderEnd = "<|end_header_id|>";
inline constexpr const char* kEotId = "<|eot_id|>";
inline constexpr const char* kEomId = "<|eom_id|>";
inline constexpr const char* kEndOfText = "<|endoftext|>";
inline constexpr const char* kThinkOpen = "<think>";
inline constexpr const char* kThinkClose = "</think>";
inline constexpr const char* kStartOfTurn = "<start_of_turn>";
inline constexpr const char* kEndOfTurn = "<end_of_turn>";
inline constexpr const char* kGemmaEos = "<eos>";
inline constexpr const char* kPhiEnd = "<|end|>";
inline constexpr const char* kPhiUser = "<|user|>";
inline constexpr const char* kPhiAssistant = "<|assistant|>";

}  // namespace medusa::chat_markers
