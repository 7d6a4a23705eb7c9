#include "model/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <queue>

#include "model/format_error.h"

namespace medusa {

namespace {

std::string utf8(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += char(cp);
    } else if (cp < 0x800) {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    } else {
        s += char(0xE0 | (cp >> 12));
        s += char(0x80 | ((cp >> 6) & 0x3F));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes take
// the code points from U+0100 on, in byte order.
struct Alphabet {
    std::array<std::string, 256> text;
    std::unordered_map<uint32_t, uint8_t> byte_of;  // code point -> byte
    Alphabet() {
        uint32_t next = 256;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const uint32_t cp = printable ? b : next++;
            text[b] = utf8(cp);
            byte_of[cp] = uint8_t(b);
        }
    }
};

const Alphabet& alphabet() {
    static const Alphabet a;
    return a;
}

size_t utf8_length(uint8_t lead) { return lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4; }

}  // namespace

const std::string& byte_to_unicode(uint8_t b) { return alphabet().text[b]; }

std::string unicode_to_bytes(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        const size_t n = std::min(utf8_length(uint8_t(text[i])), text.size() - i);
        uint32_t cp = n == 1 ? uint8_t(text[i]) : uint8_t(text[i]) & (0x7F >> n);
        for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (uint8_t(text[i + k]) & 0x3F);
        const auto it = alphabet().byte_of.find(cp);
        if (it != alphabet().byte_of.end()) out += char(it->second);
        else out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

// Checked before anything is built from it.
const BpeVocab& checked(const BpeVocab& v, const std::string& source) {
    validate_bpe_vocab(v, source);
    return v;
}

BpeTokenizer::BpeTokenizer(std::shared_ptr<const BpeVocab> vocab, const std::string& source,
                           const std::vector<int32_t>& rstrip)
    : vocab_(std::move(vocab)), pre_(checked(*vocab_, source).regexes, source) {
    const BpeVocab& v = *vocab_;
    types_ = llama_cpp_token_types(v.tokens, v.types);
    ids_.reserve(v.tokens.size());
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        ids_[v.tokens[i]] = int(i);  // a repeated text means its last id, as in llama.cpp
        const bool strip = std::binary_search(rstrip.begin(), rstrip.end(), int32_t(i));
        if (types_[i] == kTokenUserDefined) user_defined_.push_back({v.tokens[i], int(i), strip});
        if (types_[i] == kTokenControl || types_[i] == kTokenUnknown) control_.push_back({v.tokens[i], int(i), strip});
    }
    ranks_.reserve(v.merges.size());
    for (size_t r = 0; r < v.merges.size(); ++r) ranks_.emplace(v.merges[r], int(r));
}

int BpeTokenizer::find(const std::string& token_text) const {
    const auto it = ids_.find(token_text);
    return it == ids_.end() ? -1 : it->second;
}

int BpeTokenizer::rank(std::string_view left, std::string_view right) const {
    std::string key;
    key.reserve(left.size() + 1 + right.size());
    key.append(left).append(1, ' ').append(right);
    const auto it = ranks_.find(key);
    return it == ranks_.end() ? -1 : it->second;
}

// One word, already in the alphabet.
void BpeTokenizer::encode_word(std::string_view word, std::vector<int>& out) const {
    if (vocab_->ignore_merges)
        if (const auto it = ids_.find(std::string(word)); it != ids_.end()) return out.push_back(it->second);
    struct Symbol {
        size_t start, len;
        int prev, next;
    };
    std::vector<Symbol> sym;
    for (size_t i = 0; i < word.size();) {
        const size_t n = std::min(utf8_length(uint8_t(word[i])), word.size() - i);
        sym.push_back({i, n, int(sym.size()) - 1, -1});
        i += n;
    }
    for (size_t i = 0; i + 1 < sym.size(); ++i) sym[i].next = int(i + 1);
    struct Pair {
        int rank, left, right;
        size_t len;  // of the merged text when queued: a stale pair no longer matches it
    };
    // Lowest rank first; among equal ranks the leftmost (as llama.cpp orders its queue).
    auto later = [](const Pair& a, const Pair& b) { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); };
    std::priority_queue<Pair, std::vector<Pair>, decltype(later)> queue(later);
    auto text = [&](int i) { return word.substr(sym[i].start, sym[i].len); };
    auto push = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        if (const int r = rank(text(left), text(right)); r >= 0) queue.push({r, left, right, sym[left].len + sym[right].len});
    };
    for (size_t i = 0; i + 1 < sym.size(); ++i) push(int(i), int(i + 1));
    while (!queue.empty()) {
        const Pair p = queue.top();
        queue.pop();
        Symbol &l = sym[p.left], &r = sym[p.right];
        if (l.len == 0 || r.len == 0 || l.next != p.right || l.len + r.len != p.len) continue;  // stale
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) sym[r.next].prev = p.left;
        push(l.prev, p.left);
        push(p.left, l.next);
    }
    for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[i].next) {
        const std::string piece(text(i));
        if (const auto it = ids_.find(piece); it != ids_.end()) {
            out.push_back(it->second);
        } else {  // not a token (a vocabulary without every merge result): its single bytes, where they are tokens
            for (char c : piece)
                if (const auto b = ids_.find(std::string(1, c)); b != ids_.end()) out.push_back(b->second);
        }
    }
}

std::vector<int> BpeTokenizer::encode(std::string_view text, bool parse_special) const {
    std::vector<SpecialToken> specials = user_defined_;
    if (parse_special) specials.insert(specials.end(), control_.begin(), control_.end());
    std::vector<int> out;
    for (const TextFragment& f : split_special_tokens(text, std::move(specials))) {
        if (f.token >= 0) {
            out.push_back(f.token);
            continue;
        }
        const std::string clean = sanitize_utf8(f.text);
        std::string mapped;
        for (std::string_view word : pre_.split(clean)) {
            mapped.clear();
            for (char c : word) mapped += byte_to_unicode(uint8_t(c));
            encode_word(mapped, out);
        }
    }
    return out;
}

std::string BpeTokenizer::token_bytes(int id) const {
    if (id < 0 || size_t(id) >= vocab_->tokens.size()) return "";
    const int type = types_[size_t(id)];
    if (type == kTokenControl || type == kTokenUnused || type == kTokenUnknown) return "";
    if (type == kTokenUserDefined) return vocab_->tokens[size_t(id)];
    return unicode_to_bytes(vocab_->tokens[size_t(id)]);
}

}  // namespace medusa
