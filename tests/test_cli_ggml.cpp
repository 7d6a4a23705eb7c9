// The `medusa` executable on llama.cpp's oracle files (shared/testdata/ggml): `info` names every
// file's weight types, `generate` runs on each with and without Medusa heads, `tokenize` prints
// llama.cpp's ids.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

#include "cli_runner.h"
#include "oracle_json.h"
#include "xz_file.h"

using medusa::test::run_medusa;

namespace {

// "quant/oracle-a-q4_k_m" -> {"f32": 5, "q4_k": 13, "q6_k": 3}: from the oracle's tensor list, or
// for the two held-out files from the README's table.
std::map<std::string, int> expected_types(const std::string& stem) {
    if (stem == "quant/oracle-a-q3_k_m") return {{"f32", 5}, {"q3_k", 9}, {"q4_k", 4}, {"q5_k", 2}, {"q6_k", 1}};
    if (stem == "quant/oracle-a-iq4_xs") return {{"f32", 5}, {"iq4_xs", 15}, {"q6_k", 1}};
    std::map<std::string, int> types;
    for (const auto& t : medusa::test::read_json(medusa::test::ggml_path(stem + ".tensors.json"))["tensors"]) {
        std::string name = t["type"];
        for (char& c : name) c = char(std::tolower(c));
        ++types[name];
    }
    return types;
}

const char* kFiles[] = {"quant/oracle-a-f32",    "quant/oracle-a-q4_0",   "quant/oracle-a-q4_1",
                        "quant/oracle-a-q5_0",   "quant/oracle-a-q5_1",   "quant/oracle-a-q8_0",
                        "quant/oracle-a-q2_k",   "quant/oracle-a-q3_k_m", "quant/oracle-a-q4_k_m",
                        "quant/oracle-a-q5_k_m", "quant/oracle-a-q6_k",   "quant/oracle-a-iq4_nl",
                        "quant/oracle-a-iq4_xs", "arch/oracle-c-llama3-f32", "arch/oracle-c-qwen2-f32"};

}  // namespace

TEST_CASE("medusa info lists the weight types of every oracle file", "[cli-ggml]") {
    for (const char* stem : kFiles) {
        CAPTURE(stem);
        const auto r = run_medusa("info -m " + medusa::test::ggml_path(std::string(stem) + ".gguf"));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        for (const auto& [type, count] : expected_types(stem))
            CHECK(r.out.find(" " + std::to_string(count) + " " + type) != std::string::npos);
    }
}

TEST_CASE("medusa generate runs on every oracle file, with and without Medusa heads", "[cli-ggml]") {
    for (const char* stem : kFiles)
        for (const char* heads : {"", "--heads init --tree chain:3"}) {
            CAPTURE(stem, heads);
            const auto r = run_medusa("generate -m " + medusa::test::ggml_path(std::string(stem) + ".gguf") +
                                      " -p 'Once upon a time' -n 6 --temp 0 " + heads);
            INFO(r.err);
            CHECK(r.exit_code == 0);
            CHECK(r.out.rfind("Once upon a time", 0) == 0);
            CHECK(r.out.size() > std::string("Once upon a time").size());
            CHECK(r.err.find(*heads ? "medusa (untrained heads" : "tokens/s") != std::string::npos);
        }
}

TEST_CASE("medusa tokenize prints llama.cpp's ids as one JSON array", "[cli-ggml]") {
    // The vocabulary is decompressed to a temporary file for the command, and removed after.
    const auto bytes = medusa::test::read_xz(medusa::test::ggml_path("tokenizer/ggml-vocab-llama-bpe.gguf.xz"));
    char vocab[] = "/tmp/medusa_vocab_XXXXXX";
    const int fd = mkstemp(vocab);
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(vocab, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), std::streamsize(bytes->size()));
    // Every oracle string with a newline or a tab, through --file byte for byte, against its .out line.
    const std::string base = medusa::test::ggml_path("tokenizer/ggml-vocab-llama-bpe.gguf");
    const std::string inp = medusa::test::slurp(base + ".inp"), out = medusa::test::slurp(base + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    char text[] = "/tmp/medusa_text_XXXXXX";
    close(mkstemp(text));
    int checked = 0;
    for (size_t at = 0, line = 0, next, eol; (next = inp.find(sep, at)) != std::string::npos;
         at = next + sep.size(), line = eol + 1) {
        eol = out.find('\n', line);
        REQUIRE(eol != std::string::npos);
        const std::string s = inp.substr(at, next - at);
        if (s.find_first_of("\n\t") == std::string::npos) continue;
        std::string want = "[";  // " 22691 198" -> "[22691, 198]"
        for (size_t i = line + 1; i < eol; ++i) want += out[i] == ' ' ? ", " : std::string(1, out[i]);
        want += "]";
        std::ofstream(text, std::ios::binary) << s;
        const auto r = run_medusa(std::string("tokenize -m ") + vocab + " --file " + text);
        CAPTURE(s);
        CHECK(r.out == want + "\n");
        ++checked;
    }
    CHECK(checked >= 8);
    auto r = run_medusa(std::string("tokenize -m ") + vocab + " -p 'Hello world'");
    CHECK(r.out == "[9906, 1917]\n");  // the oracle's line for "Hello world"
    r = run_medusa(std::string("tokenize -m ") + vocab + " -p 'Hello world' --bos");
    CHECK(r.out == "[128000, 9906, 1917]\n");
    r = run_medusa(std::string("tokenize -m ") + vocab + " -p '<|begin_of_text|>' --parse-special");
    CHECK(r.out == "[128000]\n");
    r = run_medusa(std::string("tokenize -m ") + vocab);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("-p TEXT or --file FILE") != std::string::npos);
    std::remove(vocab);
    std::remove(text);
    r = run_medusa("tokenize -m " + medusa::test::model_path("stories260K.bin") + " -p 'Once upon a time' --bos");
    CHECK(r.out == "[1, 403, 407, 261, 378]\n");
    r = run_medusa("tokenize -m /nonexistent.gguf -p x");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("/nonexistent.gguf: no such file") != std::string::npos);
}
