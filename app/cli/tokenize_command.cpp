// `medusa tokenize`: a model's token ids for a text, as one JSON array on one line (llama.cpp's
// llama-tokenize habit: no BOS/EOS unless asked for).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "model/encode_in_pieces.h"
#include "model/file_bytes.h"
#include "model/load_model.h"
#include "session.h"

namespace medusa::cli {

namespace {

// GGUF files (which may hold only a vocabulary), Hugging Face folders and tokenizer files carry their
// own tokenizer and are not loaded as models; llama2.c checkpoints need the tokenizer beside them.
Tokenizer tokenizer_for(const Args& args) {
    if (args.has("--tokenizer")) return Tokenizer::from_file(args.str("--tokenizer"));
    if (!args.has("--model")) throw UsageError("no model: pass -m MODEL (or --tokenizer FILE)");
    const std::string path = args.str("--model");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw FormatError(path + ": no such file or directory");
    if (std::filesystem::is_directory(path, ec)) return Tokenizer::from_file(path);
    require_regular_file(path);  // before the peek below: opening a FIFO would block
    char magic[4] = {};
    std::ifstream(path, std::ios::binary).read(magic, 4);
    if (std::string(magic, 4) == "GGUF") return Tokenizer::from_file(path);
    return open_tokenizer(args, load_model(path));
}

}  // namespace

int run_tokenize(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("tokenize"));
    if (args.has("--prompt") == args.has("--file")) throw UsageError("give the text with -p TEXT or --file FILE");
    std::string text = args.str("--prompt");
    if (args.has("--file")) {
        const auto bytes = read_file_bytes(args.str("--file"));  // byte for byte: no newline is stripped
        text.assign(bytes->begin(), bytes->end());
    }
    const Tokenizer tok = tokenizer_for(args);
    // In pieces, printed as they come: memory is the text and one piece's tokenizing.
    bool first = true;
    std::fputs("[", stdout);
    encode_in_pieces(
        tok, text, args.has("--bos"), args.has("--parse-special"),
        [&](const std::vector<int>& ids) {
            std::string out;
            for (int id : ids) out += (first ? "" : ", ") + std::to_string(id), first = false;
            std::fwrite(out.data(), 1, out.size(), stdout);
            return true;
        },
        args.has("--file") ? args.str("--file") : "--prompt");
    std::fputs("]\n", stdout);
    return 0;
}

}  // namespace medusa::cli
