// libFuzzer target: Hugging Face tokenizer.json files from arbitrary bytes. Each is read into a
// byte-level BPE vocabulary that tokenizes and decodes text, or refused with a FormatError; its
// pre-tokenizer regexes also split the file's own first 2 KB, a long text of whatever they were
// mutated towards, within their budget of backtracking (run_fuzzers.sh gives 5 s per input).
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
        for (const std::string& sample : {std::string("Hello, it's 2024! <tool>\n\t x\xC3"), text.substr(0, 2048)}) {
            const auto ids = tok.encode(sample, false, true);
            for (int id : ids)
                if (id < 0 || id >= tok.vocab_size()) __builtin_trap();
            (void)tok.decode(ids);
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
