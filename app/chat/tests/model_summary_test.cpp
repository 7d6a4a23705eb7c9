// The file dialog's line about a model: format, shape, context, weight type, size and template,
// read from the real files; a file that is no model gets the reader's own words.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "model_summary.h"

using namespace medusa::chat;

TEST_CASE("a model file is described before it is loaded", "[chat][files]") {
    const std::string dir = std::string(MEDUSA_SHARED_DIR) + "/models/";
    const std::string llama2c = model_summary(dir + "stories260K.bin");
    CHECK_THAT(llama2c, Catch::StartsWith("stories260K.bin: llama2c-v0, llama, 5 layers, dim 64, vocab 512, context 512, "
                                          "F32 weights, 1.0 MB, no chat template"));
    const std::string gguf = model_summary(dir + "gguf/llama2xs-q8_0.gguf");
    CHECK_THAT(gguf, Catch::Contains("gguf, llama, 5 layers, dim 64, vocab 512") && Catch::Contains("Q8_0 weights"));
    const auto text = std::filesystem::temp_directory_path() / ("medusa_summary_" + std::to_string(::getpid()) + ".txt");
    std::ofstream(text) << "not a model at all\n";
    CHECK_THAT(model_summary(text.string()), Catch::Contains(text.string()));
    std::filesystem::remove(text);
}
