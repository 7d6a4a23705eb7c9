// libFuzzer target: Hugging Face tokenizer.json files from arbitrary bytes. Each is read into a
// byte-level BPE vocabulary that tokenizes and decodes text, or refused with a FormatError.
#include <cstdint>
#include <memory>
#include <string>

#include "model/hf_tokenizer.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        medusa::EmbeddedVocab v;
        v.bpe = std::make_shared<medusa::BpeVocab>(
            medusa::parse_hf_tokenizer(text, R"({"bos_token": "<|endoftext|>"})", "", "tokenizer.json"));
        const auto tok = medusa::Tokenizer::from_serialized(v, "tokenizer.json");
        const auto ids = tok.encode("Hello, it's 2024! <tool>\n\t x\xC3", false, true);
        for (int id : ids)
            if (id < 0 || id >= tok.vocab_size()) __builtin_trap();
        (void)tok.decode(ids);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
