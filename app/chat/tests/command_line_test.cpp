// medusa-chat's flags: --auto and --plain name the mode wherever the drafter flags stand (a
// drafter flag sets its drafter's files either way), the last drafter flag names the mode
// otherwise, and a value out of range is refused naming the flag.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "command_line.h"

using namespace medusa;
using namespace medusa::chat;

namespace {

Options parse(std::vector<std::string> args) {
    args.insert(args.begin(), "medusa-chat");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return parse_flags(int(argv.size()), argv.data(), Options{});
}

}  // namespace

TEST_CASE("--auto and --plain name the mode before or after the drafter flags", "[chat][flags]") {
    for (const auto& args : {std::vector<std::string>{"--auto", "--eagle", "layer"},
                             std::vector<std::string>{"--eagle", "layer", "--auto"}}) {
        const Options o = parse(args);
        CHECK(o.settings.mode == DrafterKind::Auto);
        CHECK(o.settings.eagle.layer == "layer");
    }
    const Options plain = parse({"--plain", "--draft-model", "d.bin", "--gamma", "3"});
    CHECK(plain.settings.mode == DrafterKind::Plain);
    CHECK(plain.settings.draft.model == "d.bin");
    CHECK(plain.settings.draft.gamma == 3);
    CHECK(parse({"--ngram", "4", "--eagle", "layer"}).settings.mode == DrafterKind::Eagle);  // the last drafter flag
    CHECK(parse({"--temp", "0.5"}).settings.mode == Options{}.settings.mode);               // no mode flag: as it was
    CHECK_THROWS_WITH(parse({"--gamma", "40"}), "--gamma expects a whole number from 1 to 16, got '40'");
    // A chat template goes with the model the flags name, before or after it.
    CHECK(parse({"--chat-template", "chatml", "-m", "a.bin"}).settings.chat_templates ==
          std::map<std::string, std::string>{{"a.bin", "chatml"}});
    CHECK_THROWS_WITH(parse({"--chat-template", "klingon"}), Catch::StartsWith("--chat-template: unknown 'klingon'"));
}
