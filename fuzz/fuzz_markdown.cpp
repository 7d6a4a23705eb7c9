// libFuzzer target: chat messages shown as markdown (app/chat/markdown_text.h, md4c underneath).
// Any text lays out, showing at most 16 bytes per byte of it (linear: the layout once indented
// every level of a nested list, and padded every table row to the header's width); every piece
// from the source lies within it, and split into tokens at arbitrary points, every shown run lies
// within its token and the runs show the same text as the whole message does.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "markdown_text.h"

using medusa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 1 << 20) return 0;  // a reply as long as a context's worth of tokens
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string whole;
    for (const auto& p : medusa::chat::markdown_pieces(text)) {
        if (p.from_source()) {
            check(p.begin <= p.end && p.end <= text.size());
            whole += text.substr(p.begin, p.end - p.begin);
        } else {
            whole += p.added;
        }
    }
    check(whole.size() <= 16 * size + 64);
    // Tokens cut where the input says (a byte divisible by 7 ends a token).
    std::vector<std::string> tokens(1);
    for (char c : text) {
        tokens.back() += c;
        if (static_cast<unsigned char>(c) % 7 == 0) tokens.emplace_back();
    }
    std::string runs;
    for (const auto& r : medusa::chat::styled_runs(tokens)) {
        if (r.token >= 0) {
            check(size_t(r.token) < tokens.size());
            check(tokens[size_t(r.token)].find(r.text) != std::string::npos);
        }
        runs += r.text;
    }
    check(runs == whole);
    return 0;
}
