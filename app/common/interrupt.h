// Ctrl-C (SIGINT) or SIGTERM during a long command: the first one asks the running loop to stop
// at its next step (generation ends its text and prints its statistics, training saves a
// checkpoint to resume from, the app closes its window and saves its settings); a second one
// kills as usual. Outside an InterruptScope the signals keep their default effect, so commands
// that never look at the request still stop at once. Shared by the CLI and the app.
#pragma once
#include <stdexcept>

namespace medusa {

class InterruptScope {
public:
    InterruptScope();   // installs the handler
    ~InterruptScope();  // restores the previous one
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;
};

bool interrupt_requested();

// Thrown where work cannot end cleanly part-way (generating training text); the CLI exits 130.
struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

constexpr int kInterruptedExit = 130;  // 128 + SIGINT, what a shell reports for Ctrl-C

}  // namespace medusa
