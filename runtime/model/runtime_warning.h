// Warnings the runtime raises on its own, where nothing fails but the user should know (a cache
// entry ignored, a cache file set aside): each distinct text once per process, as one line
// "warning: TEXT" on stderr unless a front end installs its own sink.
#pragma once
#include <functional>
#include <string>

namespace medusa {

void runtime_warning(const std::string& text);

using WarningSink = std::function<void(const std::string&)>;
// Replaces where warnings go (an empty sink: stderr again) and forgets which were given; returns
// the previous sink.
WarningSink set_warning_sink(WarningSink sink);

}  // namespace medusa
