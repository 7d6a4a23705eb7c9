// A conversation written out for people and other programs: as text with its speakers (what the
// Copy button gives), as markdown, and as JSON messages with a role and a content each, as chat
// APIs take them. A story model's turn is its text and the continuation, with no speakers.
#pragma once
#include <string>

#include "chat_file.h"

namespace medusa::chat {

// "You: ...\n\nAssistant: ..." per chat turn, a story's text and continuation per story turn;
// turns apart by a blank line.
std::string conversation_text(const SavedChat& chat);
// "# title", the model, then **You:** and **Assistant:** before each message and reply.
std::string conversation_markdown(const SavedChat& chat);
// {"title", "model", "messages": [{"role": "user" | "assistant", "content"}]}.
std::string conversation_json(const SavedChat& chat);

// Where exporting the chat saved at `chat_path` writes: an "exported" folder beside it (the chats
// folder lists only saved chats), the file named as the chat's, with `extension` (".md", ".json").
std::string export_path(const std::string& chat_path, const std::string& extension);
// Writes the chat's markdown or JSON there (atomically); returns the path. Throws naming it.
std::string export_chat(const std::string& chat_path, const std::string& extension);

}  // namespace medusa::chat
