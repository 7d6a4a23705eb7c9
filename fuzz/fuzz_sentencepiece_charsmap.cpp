// libFuzzer target: a sentencepiece model's normalization rules (precompiled_charsmap, a
// darts-clone trie and its replacement strings) from arbitrary bytes, inside a fixed valid model,
// so every mutation lands in the trie sentencepiece walks. A model whose rules pass the load check
// must normalize any text without reading outside them: libsentencepiece is not instrumented, so
// each text's trie walk is also replayed here as darts-clone and NormalizePrefix make it, each
// read bounds-checked.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace {

using medusa::fuzz::check;

void varint(std::string& out, uint64_t v) {
    while (v >= 0x80) out += char((v & 0x7f) | 0x80), v >>= 7;
    out += char(v);
}
void field(std::string& out, int number, uint64_t v) {
    varint(out, uint64_t(number) << 3);
    varint(out, v);
}
void field(std::string& out, int number, std::string_view bytes) {
    varint(out, uint64_t(number) << 3 | 2);
    varint(out, bytes.size());
    out += bytes;
}

// A unigram model of letters and a few words (make_seeds.py's unigram.model) normalizing and
// denormalizing with `charsmap`.
std::string model_with(std::string_view charsmap) {
    std::string model;
    auto piece = [&](const std::string& text, float score, int type) {
        std::string p;
        field(p, 1, text);
        varint(p, 2 << 3 | 5);
        p.append(reinterpret_cast<const char*>(&score), 4);
        field(p, 3, uint64_t(type));
        field(model, 1, p);
    };
    piece("<unk>", 0, 2), piece("<s>", 0, 3), piece("</s>", 0, 3);
    int n = 3;
    for (const char* w : {"\xE2\x96\x81the", "\xE2\x96\x81once", "\xE2\x96\x81", "fi", "ss"}) piece(w, -0.5f * float(n), 1), ++n;
    for (char c : std::string("abcdefghijklmnopqrstuvwxyz.,!ABX")) piece(std::string(1, c), -float(n), 1), ++n;
    std::string trainer, normalizer;
    field(trainer, 3, 1), field(trainer, 4, uint64_t(n)), field(trainer, 40, 0), field(trainer, 41, 1);
    field(trainer, 42, 2), field(trainer, 43, ~uint64_t(0));
    field(model, 2, trainer);
    field(normalizer, 1, "fuzz"), field(normalizer, 2, charsmap), field(normalizer, 3, 1), field(normalizer, 5, 1);
    field(model, 3, normalizer);
    std::string denormalizer;
    field(denormalizer, 2, charsmap);
    field(model, 5, denormalizer);
    return model;
}

uint32_t unit_at(std::string_view blob, size_t units, size_t i) {
    check(i < units);
    uint32_t u;
    std::memcpy(&u, blob.data() + 4 + 4 * i, 4);
    return u;
}

// darts-clone's commonPrefixSearch from each position of `text`, with NormalizePrefix's use of
// its results: every unit read inside the trie, every replacement a NUL-terminated string inside
// the blob, at most 32 results.
void replay(std::string_view blob, std::string_view text) {
    uint32_t trie_bytes;
    std::memcpy(&trie_bytes, blob.data(), 4);
    const size_t units = trie_bytes / 4;
    const std::string_view replacements = blob.substr(4 + size_t(trie_bytes));
    for (size_t from = 0; from < text.size(); ++from) {
        size_t pos = unit_at(blob, units, 0) >> 10 << ((unit_at(blob, units, 0) & (1u << 9)) >> 6);
        int results = 0;
        for (size_t i = from; i < text.size(); ++i) {
            const uint8_t byte = uint8_t(text[i]);
            pos ^= byte;
            const uint32_t u = unit_at(blob, units, pos);
            if ((u & ((1u << 31) | 0xFF)) != byte) break;
            pos ^= (u >> 10) << ((u & (1u << 9)) >> 6);
            if ((u >> 8) & 1) {
                const uint32_t value = unit_at(blob, units, pos) & ((1u << 31) - 1);
                check(value < replacements.size() && replacements.find('\0', value) != std::string_view::npos);
                ++results;
            }
        }
        check(results <= 32);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view charsmap(reinterpret_cast<const char*>(data), size);
    // The rules' own bytes make a text that follows their trie's paths more often than chance.
    const std::string texts[] = {"Once upon a time, \xEF\xBC\xA1\xEF\xBC\xA2 \xEF\xAC\x81ne Stra\xC3\x9F" "e \xE2\x91\xA0 AB\tx\xFF",
                                 std::string(charsmap.substr(0, 1024))};
    try {
        const medusa::Tokenizer tok = medusa::Tokenizer::from_serialized(model_with(charsmap), "fuzz.model");
        for (const std::string& text : texts) {
            if (!charsmap.empty()) replay(charsmap, text);
            const auto ids = tok.encode(text, true, false);
            for (int id : ids) check(id >= 0 && id < tok.vocab_size());
            (void)tok.decode(ids);
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
