// libFuzzer target: arbitrary text through a byte-level BPE with Qwen2's pre-tokenizer, special and
// user-defined tokens. Every byte has a token, so decoding must give back the text exactly as
// llama.cpp reads it (invalid UTF-8 as U+FFFD): a mismatch or an id out of range is a crash.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/bpe_tokenizer.h"
#include "model/pretokenizer.h"

namespace {

const medusa::BpeTokenizer& tokenizer() {
    static const medusa::BpeTokenizer tok = [] {
        auto v = std::make_shared<medusa::BpeVocab>();
        for (int b = 0; b < 256; ++b) v->tokens.push_back(medusa::byte_to_unicode(uint8_t(b)));
        const std::string space = medusa::byte_to_unicode(' ');
        for (const char* m : {"t h", "th e", "i n", "e r", "o n", "1 2", "a n", "an d"}) v->merges.push_back(m);
        v->merges.push_back(space + " t");
        v->merges.push_back(space + "t he");
        for (const std::string& t : std::vector<std::string>{"th", "the", "in", "er", "on", "12", "an", "and", space + "t", space + "the"})
            v->tokens.push_back(t);
        v->types.assign(v->tokens.size(), medusa::kTokenNormal);
        for (auto [text, type] : {std::pair{"<|im_start|>", medusa::kTokenControl}, {"<think>", medusa::kTokenUserDefined}}) {
            v->tokens.push_back(text);
            v->types.push_back(type);
        }
        bool ignore = false;
        v->regexes = medusa::gguf_pre_tokenizer_regexes("qwen2", ignore, "fuzz");
        return medusa::BpeTokenizer(v, "fuzz");
    }();
    return tok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto& tok = tokenizer();
    for (bool special : {false, true}) {
        std::string back;
        for (int id : tok.encode(text, special)) {
            if (id < 0 || size_t(id) >= tok.vocab().tokens.size()) __builtin_trap();
            back += id >= int(tok.vocab().tokens.size()) - 2 ? tok.vocab().tokens[size_t(id)] : tok.token_bytes(id);
        }
        if (back != medusa::sanitize_utf8(text)) __builtin_trap();
    }
    return 0;
}
