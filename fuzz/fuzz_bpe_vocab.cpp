// libFuzzer target: byte-level BPE vocabularies (tokens, types, merges, pre-tokenizer name, special
// ids) from GGUF files of arbitrary bytes. A vocabulary either becomes a tokenizer that encodes
// and decodes text, or is refused with a FormatError.
#include <cstdint>
#include <vector>

#include "model/gguf_vocab.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        const medusa::EmbeddedVocab v = medusa::load_gguf_vocab(bytes, "fuzz.gguf");
        const auto tok = medusa::Tokenizer::from_serialized(v, "fuzz.gguf");
        for (bool special : {false, true}) {
            const auto ids = tok.encode("Hello world, it's 123 \xE2\x98\x83\n<|im_start|><think> x\xFF", tok.bos_id() >= 0,
                                        special);
            for (int id : ids)
                if (id < 0 || id >= tok.vocab_size()) __builtin_trap();
            (void)tok.decode(ids);
        }
        for (int id = 0; id < tok.vocab_size() && id < 400; ++id) (void)tok.piece_text(0, id);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
