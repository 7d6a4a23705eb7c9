// `medusa info -m` names a model's chat template and where it was found, and prints a GGUF's own
// Jinja text line by line (made safe to print); a llama2.c story model has none.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_runner.h"
#include "test_paths.h"
#include "tiny_gguf.h"

using namespace medusa::test;

TEST_CASE("medusa info -m shows the chat template's name, where it came from and its text", "[cli]") {
    const std::string jinja = kChatmlTemplate + "\n{# a second line \x1b[2J #}";
    const std::filesystem::path gguf = write_tiny_gguf("info-chatml", &jinja);
    const CliResult r = run_medusa("info -m " + gguf.string());
    std::filesystem::remove(gguf);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("  chat template: chatml (GGUF tokenizer.chat_template: chatml)\n"));
    CHECK_THAT(r.out, Catch::Contains("  tokenizer.chat_template (" + std::to_string(jinja.size()) + " bytes):\n"));
    CHECK_THAT(r.out, Catch::Contains("    {% for message in messages %}{{'<|im_start|>' + message['role'] + '\n"));
    CHECK_THAT(r.out, Catch::Contains("    {# a second line \\x1B[2J #}\n"));  // the escape shown, not obeyed

    const CliResult story = run_medusa("info -m " + model_path("stories260K.bin"));
    REQUIRE(story.exit_code == 0);
    CHECK_THAT(story.out, Catch::Contains("  chat template: none (llama2.c checkpoint: a story model without a chat format)"));
    CHECK_THAT(story.out, !Catch::Contains("tokenizer.chat_template ("));
}
