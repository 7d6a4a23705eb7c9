// A model whose weights hold NaN must stop with one line naming the file and the cause, in every
// decoding path, not with "token id -1 outside the vocabulary" or a text of garbage.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>

#include "cli_rusage.h"
#include "test_paths.h"

using medusa::test::model_path;

TEST_CASE("NaN weights are reported as NaN logits naming the model", "[nan-weights]") {
    std::ifstream in(model_path("stories260K.bin"), std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), {});
    // The token embedding (also the classifier) follows the 28-byte header: 512 x 64 floats.
    const float nan = std::nanf("");
    for (size_t i = 0; i < 512 * 64; ++i) std::memcpy(&b[28 + 4 * i], &nan, 4);
    const std::string path = "/tmp/medusa-nan-" + std::to_string(::getpid()) + ".bin";
    std::ofstream(path, std::ios::binary).write(b.data(), std::streamsize(b.size()));
    const std::vector<std::vector<std::string>> modes = {
        {},                                                  // greedy, GPU
        {"--cpu"},                                           // greedy, the CPU reference
        {"--temp", "0.8", "--seed", "1"},                    // sampling
        {"--temp", "0", "--repeat-penalty", "1.2", "--cpu"},  // penalised greedy
        {"--heads", "init", "--tree", "chain:2"},            // Medusa
        {"--ngram", "2"}};
    for (const auto& extra : modes) {
        std::vector<std::string> args = {"generate", "-m", path, "--tokenizer", model_path("tok512.model"),
                                         "-p", "Once upon a time", "-n", "8"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = medusa::test::run_medusa_limited(args);
        CAPTURE(extra, r.err);
        CHECK(r.exit_code == 1);
        CHECK(r.err.find(path + ": the model produced NaN/Inf logits (non-finite weights?)") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    std::remove(path.c_str());
}
