// The token ids llama.cpp gives for a vocabulary's test strings, in the format of llama.cpp's
// tests/test-tokenizer-0 (what tests/data/tokenizer/*.out hold). Test-data tooling only: it is
// built and run by scripts/make_family_vocab_fixtures.py against a prebuilt libllama, and is no
// part of the project's build. Built as
//
//   g++ -std=c++17 -O1 -I LLAMA_SRC/include -I LLAMA_SRC/ggml/include tokenizer_oracle.cpp
//       -o tokenizer_oracle LIBDIR/libllama.v0.5.0.so LIBDIR/libggml.v0.5.0.so LIBDIR/libggml-base.so
//       -Wl,-rpath,LIBDIR
//
// and run as
//
//   tokenizer_oracle [--parse-special] VOCAB.gguf TEXT.inp OUT.out [DETOKENIZED.txt]
//
// The calls are test-tokenizer-0's: a vocab_only model load, then for every string
// llama_tokenize(add_special = false, parse_special = false). Each output line is the ids, each
// preceded by a space (an empty line: no tokens). --parse-special sets parse_special = true (the
// fixtures' chat strings). The optional fourth file gets, per string, what
// llama_detokenize(remove_special = false, unparse_special = false) makes of those ids, each
// followed by the .inp file's separator.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "llama.h"

namespace {

std::vector<std::string> read_strings(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "%s: cannot be read\n", path.c_str());
        std::exit(1);
    }
    const std::string text((std::istreambuf_iterator<char>(f)), {});
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t next; (next = text.find(sep, at)) != std::string::npos; at = next + sep.size())
        out.push_back(text.substr(at, next - at));
    if (at != text.size()) {
        std::fprintf(stderr, "%s: does not end with the separator\n", path.c_str());
        std::exit(1);
    }
    return out;
}

std::vector<llama_token> tokenize(const llama_vocab* vocab, const std::string& text, bool parse_special) {
    std::vector<llama_token> ids(text.size() + 2);
    int n = llama_tokenize(vocab, text.data(), int32_t(text.size()), ids.data(), int32_t(ids.size()),
                           /*add_special=*/false, parse_special);
    if (n < 0) {
        ids.resize(size_t(-n));
        n = llama_tokenize(vocab, text.data(), int32_t(text.size()), ids.data(), int32_t(ids.size()), false,
                           parse_special);
    }
    ids.resize(size_t(n));
    return ids;
}

std::string detokenize(const llama_vocab* vocab, const std::vector<llama_token>& ids) {
    std::string text(ids.size() * 64 + 16, '\0');
    int n = llama_detokenize(vocab, ids.data(), int32_t(ids.size()), text.data(), int32_t(text.size()),
                             /*remove_special=*/false, /*unparse_special=*/false);
    if (n < 0) {
        text.resize(size_t(-n));
        n = llama_detokenize(vocab, ids.data(), int32_t(ids.size()), text.data(), int32_t(text.size()), false, false);
    }
    text.resize(size_t(n));
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    const bool parse_special = argc > 1 && std::string(argv[1]) == "--parse-special";
    if (parse_special) --argc, ++argv;
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s [--parse-special] VOCAB.gguf TEXT.inp OUT.out [DETOKENIZED.txt]\n", argv[0]);
        return 2;
    }
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "%s: llama.cpp cannot load it\n", argv[1]);
        return 1;
    }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    const std::vector<std::string> strings = read_strings(argv[2]);
    std::string out, detok;
    for (const std::string& s : strings) {
        const std::vector<llama_token> ids = tokenize(vocab, s, parse_special);
        for (llama_token id : ids) out += " " + std::to_string(id);
        out += "\n";
        detok += detokenize(vocab, ids) + "\n__ggml_vocab_test__\n";
    }
    std::ofstream(argv[3], std::ios::binary) << out;
    if (argc > 4) std::ofstream(argv[4], std::ios::binary) << detok;
    std::fprintf(stderr, "%s: %zu strings, %d tokens in the vocabulary\n", argv[1], strings.size(),
                 llama_vocab_n_tokens(vocab));
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
