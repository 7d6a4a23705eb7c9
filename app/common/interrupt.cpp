#include "interrupt.h"

#include <signal.h>

#include <atomic>

namespace medusa {

namespace {

std::atomic<bool> requested{false};
struct sigaction previous_int, previous_term;

void on_signal(int) { requested.store(true); }  // SA_RESETHAND: the next one kills

}  // namespace

InterruptScope::InterruptScope() {
    requested.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, &previous_int);
    sigaction(SIGTERM, &sa, &previous_term);
}

InterruptScope::~InterruptScope() {
    sigaction(SIGINT, &previous_int, nullptr);
    sigaction(SIGTERM, &previous_term, nullptr);
}

bool interrupt_requested() { return requested.load(); }

}  // namespace medusa
