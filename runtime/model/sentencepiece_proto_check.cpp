#include "model/sentencepiece_proto_check.h"

#include <algorithm>
#include <stdexcept>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/format_error.h"

namespace medusa {

namespace {

constexpr size_t kMaxProtoBytes = size_t(64) << 20;      // Gemma's 256K-piece model is 4 MB
constexpr uint64_t kMaxPieces = uint64_t(1) << 20;       // the largest vocabularies have 256K
constexpr size_t kMaxCharsmapBytes = size_t(4) << 20;    // NFKC with case folding is 245 KB
constexpr int kMaxRulesPerPrefix = 32;                   // Normalizer::kMaxTrieResultsSize

// The protobuf wire format, as far as reading a message's fields in order needs it.
class WireReader {
public:
    explicit WireReader(std::string_view bytes) : b_(bytes) {}
    bool done() const { return pos_ == b_.size(); }
    size_t pos() const { return pos_; }

    // The next field's number and wire type, its value skipped; length-delimited bytes in `bytes`,
    // a varint's value in `number`. False for anything protobuf would not parse (or that no
    // sentencepiece model holds: groups).
    bool next(uint32_t& field, uint32_t& wire, std::string_view& bytes, uint64_t& number) {
        uint64_t key = 0, length = 0;
        if (!varint(key) || key >> 32 || (key >> 3) == 0) return false;
        field = uint32_t(key >> 3), wire = uint32_t(key & 7);
        switch (wire) {
            case 0: return varint(number);
            case 1: return skip(8);
            case 5:  // a float's bits (SentencePiece.score)
                if (4 > b_.size() - pos_) return false;
                number = uint64_t(uint8_t(b_[pos_])) | uint64_t(uint8_t(b_[pos_ + 1])) << 8 |
                         uint64_t(uint8_t(b_[pos_ + 2])) << 16 | uint64_t(uint8_t(b_[pos_ + 3])) << 24;
                pos_ += 4;
                return true;
            case 2:
                if (!varint(length) || length > b_.size() - pos_) return false;
                bytes = b_.substr(pos_, size_t(length));
                pos_ += size_t(length);
                return true;
            default: return false;
        }
    }
    bool next(uint32_t& field, uint32_t& wire, std::string_view& bytes) {
        uint64_t number = 0;
        return next(field, wire, bytes, number);
    }

private:
    bool varint(uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ == b_.size()) return false;
            const uint8_t c = uint8_t(b_[pos_++]);
            v |= uint64_t(c & 0x7f) << shift;
            if (!(c & 0x80)) return true;
        }
        return false;
    }
    bool skip(size_t n) {
        if (n > b_.size() - pos_) return false;
        pos_ += n;
        return true;
    }

    std::string_view b_;
    size_t pos_ = 0;
};

// darts-clone's unit: a transition's label (its top bit set on a leaf, which no byte matches),
// whether a leaf hangs below it, the offset to its children; a leaf holds its value instead.
uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
bool has_leaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

// Unit c with byte label b is the transition on b from state c ^ b and from no other, so each
// state's transitions are listed once, grouped by state: the walk then costs a step per unit,
// where trying all 256 bytes at every state took 17 times as long on NFKC's trie (10.6 ms).
struct Transitions {
    std::vector<uint32_t> first;  // state s's units are units[first[s] .. first[s + 1])
    std::vector<uint32_t> units;
};

Transitions group_transitions(const std::vector<uint32_t>& units) {
    const size_t n = units.size();
    Transitions t;
    t.first.assign(n + 1, 0);
    for (size_t c = 0; c < n; ++c)
        if (label(units[c]) <= 0xFF && (c ^ label(units[c])) < n) ++t.first[(c ^ label(units[c])) + 1];
    for (size_t s = 0; s < n; ++s) t.first[s + 1] += t.first[s];
    t.units.resize(t.first[n]);
    std::vector<uint32_t> slot(t.first.begin(), t.first.end() - 1);
    for (size_t c = 0; c < n; ++c)
        if (label(units[c]) <= 0xFF && (c ^ label(units[c])) < n) t.units[slot[c ^ label(units[c])]++] = uint32_t(c);
    return t;
}

std::string state_problem(size_t from, size_t state, size_t n) {
    if ((state | 0xFF) < n) return "";
    return "unit " + std::to_string(from) + " leads to state " + std::to_string(state) +
           ", whose transitions lie past the trie's " + std::to_string(n) + " units";
}

// A rule's replacement starts at byte `at` of `replacements` and ends with a NUL inside them
// (`last_nul`: where their last NUL is, found once).
std::string replacement_problem(uint32_t at, std::string_view replacements, size_t last_nul) {
    if (at >= replacements.size())
        return "a rule's replacement starts at byte " + std::to_string(at) + " of " +
               std::to_string(replacements.size()) + " bytes of replacements";
    if (last_nul == std::string_view::npos || at > last_nul)
        return "the replacement at byte " + std::to_string(at) + " does not end with a NUL inside the blob";
    return "";
}

// Walks every state once, depth first from the root: every transition in the trie, every leaf's
// replacement, no cycle, and at most kMaxRulesPerPrefix rules matched along any path.
std::string walk_problem(const std::vector<uint32_t>& units, std::string_view replacements) {
    const size_t n = units.size();
    const Transitions tr = group_transitions(units);
    const size_t last_nul = replacements.rfind('\0');
    const std::vector<uint32_t>& first = tr.first;
    // Per state: 0 not reached yet, 1 being walked, 2 + k walked and at most k rules match from it.
    std::vector<uint8_t> seen(n, 0);
    struct Frame {
        uint32_t state;
        uint32_t next;     // its next transition to follow, an index into tr.units
        uint8_t most;      // the most rules matched from this state, over the transitions followed
        uint8_t via_leaf;  // whether the transition into this state matched a rule
    };
    const size_t root = offset(units[0]);
    if (auto p = state_problem(0, root, n); !p.empty()) return p;
    std::vector<Frame> stack{{uint32_t(root), first[root], 0, 0}};
    seen[root] = 1;
    const std::string too_many = "a text can match more than " + std::to_string(kMaxRulesPerPrefix) +
                                 " of its rules at once, more than sentencepiece can hold";
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == first[f.state + 1]) {
            const Frame done = f;
            seen[done.state] = uint8_t(2 + done.most);
            stack.pop_back();
            if (stack.empty()) break;
            const int most = done.via_leaf + done.most;
            if (most > kMaxRulesPerPrefix) return too_many;
            stack.back().most = std::max(stack.back().most, uint8_t(most));
            continue;
        }
        const size_t child = tr.units[f.next++];
        const uint32_t unit = units[child];
        const size_t next = child ^ offset(unit);
        if (auto p = state_problem(child, next, n); !p.empty()) return p;
        const uint8_t leaf = has_leaf(unit) ? 1 : 0;
        if (leaf)
            if (auto p = replacement_problem(value(units[next]), replacements, last_nul); !p.empty()) return p;
        if (seen[next] == 1) return "its trie loops back to state " + std::to_string(next);
        if (seen[next] == 0) {
            seen[next] = 1;
            stack.push_back({uint32_t(next), first[next], 0, leaf});
            continue;
        }
        const int most = leaf + seen[next] - 2;
        if (most > kMaxRulesPerPrefix) return too_many;
        f.most = std::max(f.most, uint8_t(most));
    }
    return "";
}

}  // namespace

// The blob is <trie bytes: uint32 LE><trie: uint32 LE units><replacements, each ending in NUL>.
// sentencepiece's commonPrefixSearch, from a state s, reads unit s ^ byte for the next input byte
// before it compares that unit's label, so every state must have all 256 of those units; a
// transition with a leaf reads the leaf at the state it leads to, whose value is where the
// replacement starts. Normalizer::NormalizePrefix keeps 32 matches on the stack but then reads as
// many as the search counted, so no input may match more than 32 rules. Real tries are DAGs
// (darts-clone shares equal subtries), so each state is walked once, remembering the most rules
// any text can match from it; a cycle is refused. Memory: about 20 bytes per unit.
std::string precompiled_charsmap_problem(std::string_view blob) {
    if (blob.empty()) return "";
    if (blob.size() > kMaxCharsmapBytes)
        return "it is " + std::to_string(blob.size()) + " bytes, more than the " + std::to_string(kMaxCharsmapBytes) +
               " any normalization needs";
    if (blob.size() <= 4) return "it is " + std::to_string(blob.size()) + " bytes, too short to hold a trie";
    uint32_t trie_bytes = 0;
    std::memcpy(&trie_bytes, blob.data(), 4);
    if (trie_bytes > blob.size() - 4)
        return "it says its trie has " + std::to_string(trie_bytes) + " bytes but only " +
               std::to_string(blob.size() - 4) + " follow";
    const size_t n = trie_bytes / 4;
    if (n == 0) return "its trie is empty";
    std::vector<uint32_t> units(n);
    std::memcpy(units.data(), blob.data() + 4, n * 4);
    return walk_problem(units, blob.substr(4 + size_t(trie_bytes)));
}

void check_sentencepiece_proto(std::string_view proto, const std::string& source) {
    auto bad = [&](const std::string& what) { throw FormatError(source + ": not a sentencepiece model: " + what); };
    if (proto.size() > kMaxProtoBytes)
        bad(std::to_string(proto.size()) + " bytes, more than the " + std::to_string(kMaxProtoBytes) +
            " any vocabulary needs");
    WireReader model(proto);
    uint64_t pieces = 0;
    while (!model.done()) {
        const size_t at = model.pos();
        uint32_t field = 0, wire = 0;
        std::string_view bytes;
        if (!model.next(field, wire, bytes)) bad("malformed protobuf at byte " + std::to_string(at));
        if (field == 1 && wire == 2 && ++pieces > kMaxPieces)
            bad("more than " + std::to_string(kMaxPieces) + " pieces");
        if ((field != 3 && field != 5) || wire != 2) continue;
        // normalizer_spec (3) or denormalizer_spec (5): protobuf merges repeated occurrences and keeps
        // the last precompiled_charsmap (2), so every one is checked.
        const char* spec = field == 3 ? "normalizer_spec" : "denormalizer_spec";
        WireReader normalizer(bytes);
        while (!normalizer.done()) {
            const size_t inner = normalizer.pos();
            uint32_t f = 0, w = 0;
            std::string_view charsmap;
            if (!normalizer.next(f, w, charsmap))
                bad(std::string("malformed protobuf in its ") + spec + " at byte " + std::to_string(at) + " + " +
                    std::to_string(inner));
            if (f != 2 || w != 2) continue;
            if (const std::string problem = precompiled_charsmap_problem(charsmap); !problem.empty())
                bad(std::string("the normalization rules of its ") + spec + " (precompiled_charsmap) are malformed: " +
                    problem);
        }
    }
}

SentencepieceVocab read_sentencepiece_vocab(std::string_view proto) {
    SentencepieceVocab out;
    auto bad = [] { throw std::invalid_argument("malformed protobuf"); };  // check_sentencepiece_proto's to say
    WireReader model(proto);
    while (!model.done()) {
        uint32_t field = 0, wire = 0;
        std::string_view bytes;
        uint64_t number = 0;
        if (!model.next(field, wire, bytes, number)) bad();
        if (wire != 2 || (field != 1 && field != 2 && field != 3)) continue;
        // A field given twice: protobuf keeps the last value.
        WireReader inner(bytes);
        SentencepiecePiece piece;
        while (!inner.done()) {
            uint32_t f = 0, w = 0;
            std::string_view b;
            uint64_t n = 0;
            if (!inner.next(f, w, b, n)) bad();
            if (field == 1 && f == 1 && w == 2) piece.text = b;  // SentencePiece.piece
            if (field == 1 && f == 2 && w == 5) {                // SentencePiece.score
                const uint32_t bits = uint32_t(n);
                std::memcpy(&piece.score, &bits, 4);
            }
            if (field == 1 && f == 3 && w == 0) piece.type = int32_t(n);  // SentencePiece.type
            if (field == 2 && w == 0 && f >= 40 && f <= 42)                // TrainerSpec.unk_id, bos_id, eos_id
                (f == 40 ? out.unk : f == 41 ? out.bos : out.eos) = int32_t(n);
            if (field == 3 && f == 3 && w == 0) out.add_dummy_prefix = n != 0;  // NormalizerSpec.add_dummy_prefix
        }
        if (field == 1) out.pieces.push_back(std::move(piece));
    }
    return out;
}

SentencepieceExtras read_sentencepiece_extras(std::string_view proto) {
    SentencepieceVocab v = read_sentencepiece_vocab(proto);
    SentencepieceExtras out;
    out.add_dummy_prefix = v.add_dummy_prefix;
    for (size_t id = 0; id < v.pieces.size(); ++id)
        if (v.pieces[id].type == 4 && !v.pieces[id].text.empty())  // USER_DEFINED
            out.user_defined.push_back({std::move(v.pieces[id].text), int(id)});
    return out;
}

}  // namespace medusa
