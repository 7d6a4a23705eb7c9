#include "model/runtime_warning.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace medusa {

namespace {

std::mutex warnings_mutex;
WarningSink warning_sink;
std::set<std::string> warnings_given;

// Control characters in a path or a file's text would rewrite the terminal: shown as '?'.
std::string one_printable_line(const std::string& text) {
    std::string out = text;
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

}  // namespace

void runtime_warning(const std::string& text) {
    WarningSink sink;
    {
        const std::lock_guard lock(warnings_mutex);
        if (!warnings_given.insert(text).second) return;
        sink = warning_sink;
    }
    if (sink) sink(text);
    else std::fprintf(stderr, "warning: %s\n", one_printable_line(text).c_str());
}

WarningSink set_warning_sink(WarningSink sink) {
    const std::lock_guard lock(warnings_mutex);
    warnings_given.clear();
    std::swap(sink, warning_sink);
    return sink;
}

}  // namespace medusa
