// libFuzzer target: sentencepiece .model files (serialized ModelProto) from arbitrary bytes, as
// Tokenizer::from_file reads one. A model loads and tokenizes, or is refused with a FormatError;
// what it encodes decodes without error, every id in range, and every piece can be printed.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/model_file.h"
#include "model/tokenizer.h"

namespace {

using medusa::fuzz::check;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string proto(reinterpret_cast<const char*>(data), size);
    try {
        const medusa::Tokenizer tok = medusa::Tokenizer::from_serialized(proto, "fuzz.model");
        const int n = tok.vocab_size();
        check(n > 0);
        for (bool special : {false, true}) {
            const auto ids = tok.encode("Once upon a time, \xE2\x98\x83 <s></s><unk> <0x41>\n\t  x\xFF", tok.bos_id() >= 0,
                                        special);
            for (int id : ids) check(id >= 0 && id < n);
            (void)tok.decode(ids);
        }
        for (int id = 0; id < n && id < 600; ++id) {
            (void)tok.piece_text(tok.bos_id(), id);
            const std::string p = tok.piece(id);
            const int back = tok.find_piece(p);
            check(back == -1 || (back >= 0 && back < n));
        }
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
