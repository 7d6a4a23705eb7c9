// The app's scripted sessions, for the tests and the README: --smoke loads, generates, stops,
// clears, measures the speedup and switches to a draft model, checking each step; --screenshot
// generates a prompt and writes the window as a PNG with its layout beside it.
#pragma once
#include "chat_app.h"
#include "command_line.h"
#include "window_renderer.h"

struct GLFWwindow;

namespace medusa::chat {

// Each returns the exit code: 0, or 1 with the failed check on stderr.
int run_smoke(GLFWwindow* window, WindowRenderer& r, ChatApp& app);
// Throws std::runtime_error when decoding fails or does not finish in time.
int run_screenshot(GLFWwindow* window, WindowRenderer& r, ChatApp& app, const Options& o);

}  // namespace medusa::chat
