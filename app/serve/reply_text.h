// A reply's text as a client receives it: cut before the first stop string, and sent in whole
// UTF-8 characters (JSON carries no half character: one that a byte-level token splits is held
// until the token that completes it).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "model/chat_template.h"

namespace medusa::serve {

class ReplyText {
public:
    explicit ReplyText(std::vector<std::string> stops);
    std::string feed(const std::string& piece);  // what can be sent now
    std::string finish();                        // at the end: what was held back
    bool stopped() const { return filter_.stopped(); }

private:
    std::string whole_characters(std::string text);
    StopStringFilter filter_;
    std::string partial_;  // the start of a character still incomplete
};

// How many bytes at the end of `text` begin a UTF-8 character that is not complete yet (0-3).
size_t incomplete_utf8_tail(std::string_view text);

}  // namespace medusa::serve
