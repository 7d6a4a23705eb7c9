// The runtime's warnings (model/runtime_warning.h) raised while in scope, in order, instead of
// on stderr.
#pragma once
#include <string>
#include <vector>

#include "model/runtime_warning.h"

namespace medusa::test {

struct CapturedWarnings {
    std::vector<std::string> lines;
    WarningSink previous;
    CapturedWarnings() : previous(set_warning_sink([this](const std::string& w) { lines.push_back(w); })) {}
    ~CapturedWarnings() { set_warning_sink(previous); }
    CapturedWarnings(const CapturedWarnings&) = delete;
    CapturedWarnings& operator=(const CapturedWarnings&) = delete;
};

}  // namespace medusa::test
