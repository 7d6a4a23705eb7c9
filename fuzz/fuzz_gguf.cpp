// libFuzzer target: GGUF files from arbitrary bytes, including the embedded vocabulary, which
// must either load into sentencepiece and tokenize, or be refused with a FormatError.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/dequantize.h"
#include "model/gguf_loader.h"
#include "model/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    try {
        const medusa::ModelFile m = medusa::load_gguf(bytes, "fuzz.gguf");
        for (const auto& t : m.tensors) (void)medusa::dequantize(t);
        if (!m.embedded_tokenizer.empty()) {
            const auto tok = medusa::Tokenizer::from_serialized(m.embedded_tokenizer, "fuzz.gguf");
            const auto ids = tok.encode("Once upon a time, \xE2\x98\x83 <0x41>\n", true);
            (void)tok.decode(ids);
            for (int id = 0; id < tok.vocab_size() && id < 600; ++id) (void)tok.piece_text(1, id);
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
