// `medusa export-gguf`: a model this engine reads (a llama2.c checkpoint, a GGUF file, or a
// synthetic model of real shapes) written as a GGUF llama model, so that llama.cpp can run the
// very bytes this engine runs.
#include <cstdio>

#include "commands.h"
#include "model/gguf_writer.h"
#include "session.h"

namespace medusa::cli {

int run_export_gguf(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("export-gguf"));
    if (!args.has("--out")) throw UsageError("pass --out FILE.gguf");
    check_output_flags(args, {"--out"});
    const ModelFile model = open_model(args);
    const Tokenizer tok = open_tokenizer(args, model);
    int shown = -1;
    write_gguf(model, tok, args.str("--out"), [&](size_t done, size_t total) {
        const int percent = total ? int(100 * done / total) : 100;
        if (percent == shown) return;
        shown = percent;
        std::fprintf(stderr, "\rwriting %s: %d%%", args.str("--out").c_str(), percent);
    });
    std::fprintf(stderr, "\nwrote %s: %zu tensors, vocabulary of %d from %s\n", args.str("--out").c_str(),
                 model.tensors.size(), tok.vocab_size(), tok.source().c_str());
    return 0;
}

}  // namespace medusa::cli
