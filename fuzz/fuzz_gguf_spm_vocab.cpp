// libFuzzer target: GGUF "llama" vocabularies (tokens, scores, token types, BOS/EOS/UNK ids) from
// files of arbitrary bytes, turned into a sentencepiece ModelProto. A vocabulary is refused with
// a FormatError, or becomes a tokenizer that holds exactly the file's pieces, in order, and
// encodes and decodes text with ids in range.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/gguf_metadata.h"
#include "model/gguf_vocab.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace {

using medusa::fuzz::check;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        const medusa::EmbeddedVocab v = medusa::load_gguf_vocab(bytes, "fuzz.gguf");
        if (v.bpe) return 0;  // byte-level BPE: fuzz_bpe_vocab's
        const auto tok = medusa::Tokenizer::from_serialized(v, "fuzz.gguf");
        const medusa::GgufHeader header = medusa::read_gguf_header(bytes, "fuzz.gguf");
        const auto& tokens = header.meta.array("tokenizer.ggml.tokens", medusa::STRING)->texts;
        check(tok.vocab_size() == int(tokens.size()));
        for (int id = 0; id < tok.vocab_size() && id < 1000; ++id) check(tok.piece(id) == tokens[size_t(id)]);
        for (bool special : {false, true}) {
            const auto ids = tok.encode("Hello world, it's 123 \xE2\x98\x83\n<s></s><unk> x\xFF", tok.bos_id() >= 0,
                                        special);
            for (int id : ids) check(id >= 0 && id < tok.vocab_size());
            (void)tok.decode(ids);
        }
        for (int id = 0; id < tok.vocab_size() && id < 400; ++id) (void)tok.piece_text(tok.bos_id(), id);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
