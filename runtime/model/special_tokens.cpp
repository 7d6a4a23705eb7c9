#include "model/special_tokens.h"

#include <algorithm>

namespace medusa {

std::vector<TextFragment> split_special_tokens(std::string_view text, std::vector<SpecialToken> specials) {
    std::stable_sort(specials.begin(), specials.end(),
                     [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
    std::vector<TextFragment> fragments;
    if (!text.empty()) fragments.push_back({-1, text});
    for (const SpecialToken& s : specials) {
        if (s.text.empty()) continue;
        std::vector<TextFragment> out;
        for (const TextFragment& f : fragments) {
            if (f.token >= 0) {
                out.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (size_t at; (at = rest.find(s.text)) != std::string_view::npos;) {
                if (at > 0) out.push_back({-1, rest.substr(0, at)});
                out.push_back({s.id, rest.substr(at, s.text.size())});
                rest.remove_prefix(at + s.text.size());
            }
            if (!rest.empty()) out.push_back({-1, rest});
        }
        fragments = std::move(out);
    }
    return fragments;
}

}  // namespace medusa
