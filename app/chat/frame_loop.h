// The window's frames: how often one is drawn while the worker decodes, and frames drawn until
// a condition holds (the scripted runs' way of waiting for the app).
#pragma once
#include <functional>

#include "chat_app.h"
#include "window_renderer.h"

struct GLFWwindow;

namespace medusa::chat {

// While the worker decodes, frames wait their turn: a frame's drawing and the decoding steps share
// the device's one queue, so each frame drawn holds the next step up. Drawing may take a tenth of
// the time: at a CPU driver's 25-60 ms a frame that is 2 to 4 frames a second (at full rate the app
// decoded 50 tokens/s where the command line did 4,000), on a GPU 30. Input is handled as it comes.
struct FramePacer {
    double frame_start = 0, frame_end = 0;
    void wait(const ChatApp& app);
    void drawn();
};

// Runs frames until `done` holds (or the time runs out); returns whether it held. `capture`, when
// given, receives the last frame's pixels.
bool frames_until(GLFWwindow* window, WindowRenderer& r, ChatApp& app, const std::function<bool()>& done,
                  double seconds, Image* capture = nullptr);

}  // namespace medusa::chat
