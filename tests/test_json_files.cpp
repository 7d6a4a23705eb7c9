// JSON and other whole-file inputs: nesting, size and file kind are checked before anything
// recurses or allocates, and every error is one line naming the file.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "decode/tree.h"
#include "llm/eagle_layer_io.h"
#include "llm/medusa_heads.h"
#include "llm/medusa_heads_io.h"
#include "model/file_bytes.h"
#include "model/json_file.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "test_paths.h"

using namespace medusa;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

std::string deep(size_t n) { return std::string(n, '[') + std::string(n, ']'); }

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& tag)
        : path(fs::temp_directory_path() / ("medusa-" + tag + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("JSON nested past the limit is refused before parsing", "[robust-json]") {
    const std::string ok = deep(kMaxJsonDepth), too_deep = deep(kMaxJsonDepth + 1);
    CHECK_NOTHROW(check_json_depth(ok.data(), ok.data() + ok.size(), "ok.json"));
    CHECK_THAT(error_of([&] { check_json_depth(too_deep.data(), too_deep.data() + too_deep.size(), "d.json"); }),
               Contains("d.json: JSON nested deeper than 512 levels"));
    // Brackets inside strings, escaped quotes included, do not count.
    const std::string in_string = std::string("[\"") + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
    CHECK_NOTHROW(parse_json_text(in_string, "s.json"));
    CHECK_THAT(error_of([] { parse_json_text("[1, ", "m.json"); }), Contains("m.json: malformed JSON"));
}

TEST_CASE("a tree file nested 100,000 deep is an error, not a stack overflow", "[robust-json]") {
    const std::string text = deep(100000);
    CHECK_THAT(error_of([&] { parse_tree_json(text, "deep.json"); }), Contains("deep.json: JSON nested deeper"));
    CHECK_THAT(error_of([&] { parse_tree_json("{\"medusa_choices\": " + text + "}", "o.json"); }),
               Contains("o.json: JSON nested deeper"));
    // Within the limit, a nested path is named by a bounded excerpt, not a dump of all of it.
    const std::string msg = error_of([] { parse_tree_json(std::string("[[0], ") + deep(400) + "]", "n.json"); });
    CHECK_THAT(msg, Contains("n.json: path [[[[") && Contains("...") && Contains("not an integer"));
    CHECK(msg.size() < 200);
}

TEST_CASE("file inputs must be regular files of bounded size", "[robust-json]") {
    TempDir tmp("regular");
    const fs::path fifo = tmp.path / "fifo.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    fs::create_symlink(fifo, tmp.path / "link.json");
    CHECK_THAT(error_of([&] { read_json_file(fifo.string()); }), Contains(fifo.string() + ": not a regular file (a FIFO)"));
    CHECK_THAT(error_of([&] { read_json_file((tmp.path / "link.json").string()); }), Contains("(a FIFO)"));
    CHECK_THAT(error_of([&] { read_json_file(tmp.path.string()); }), Contains(": not a regular file (a directory)"));
    CHECK_THAT(error_of([] { read_file_bytes("/dev/zero"); }),
               Contains("/dev/zero: not a regular file (a character device)"));
    CHECK_THAT(error_of([&] { read_tree_file(fifo.string()); }), Contains("(a FIFO)"));
    CHECK_THAT(error_of([&] { load_tree(fifo.string()); }), Contains("(a FIFO)"));
    CHECK_THAT(error_of([&] { load_model(fifo.string()); }), Contains("(a FIFO)"));
    CHECK_THAT(error_of([&] { Tokenizer::from_file(fifo.string()); }), Contains("(a FIFO)"));
    const fs::path big = tmp.path / "big.json";
    std::ofstream(big) << "[" << std::string(100, ' ') << "]";
    CHECK_THAT(error_of([&] { read_text_file(big.string(), 64); }), Contains("big.json: 102 bytes is too large"));
    CHECK(read_text_file(big.string()).size() == 102);
}

TEST_CASE("Medusa heads config.json counts are checked for type and range", "[robust-json]") {
    const ModelFile model = load_model(test::model_path("stories260K.bin"));
    TempDir tmp("heads-config");
    save_medusa_heads(MedusaHeads::init_from_model(model, 2), tmp.path.string());
    const std::string config = (tmp.path / "config.json").string();
    REQUIRE(load_medusa_heads(tmp.path.string(), model.config).count() == 2);
    struct Case {
        std::string json, says;
    };
    for (const Case& c : {Case{R"({"medusa_num_heads": "2"})", "'medusa_num_heads' is \"2\", not an integer"},
                          Case{R"({"medusa_num_heads": null})", "'medusa_num_heads' is null, not an integer"},
                          Case{R"({"medusa_num_heads": 1e300})", "not an integer"},
                          Case{R"({"medusa_num_heads": -3})", "'medusa_num_heads' = -3 is out of range (1..8)"},
                          Case{R"({"medusa_num_heads": 18446744073709551615})", "out of range"},
                          Case{R"({"medusa_num_layers": 100000})", "'medusa_num_layers' = 100000 is out of range"},
                          Case{std::string("[") + deep(100000) + "]", "JSON nested deeper"},
                          Case{"{\"medusa_num_heads\": ", "malformed JSON"}}) {
        CAPTURE(c.json);
        std::ofstream(config) << c.json;
        const std::string msg = error_of([&] { load_medusa_heads(tmp.path.string(), model.config); });
        CHECK_THAT(msg, Contains(config + ": ") && Contains(c.says));
        CHECK(msg.find('\n') == std::string::npos);
    }
}

TEST_CASE("EAGLE config.json integers are checked for type and range, the file for its kind", "[robust-json]") {
    const ModelFile model = load_model(test::model_path("stories260K.bin"));
    TempDir tmp("eagle-config");
    std::ofstream(tmp.path / "model.safetensors") << "";  // the config is read first
    const std::string config = (tmp.path / "config.json").string();
    struct Case {
        std::string json, says;
    };
    for (const Case& c : {Case{R"({"hidden_size": "64"})", "'hidden_size' is missing or not an integer"},
                          Case{R"({"hidden_size": 1e300})", "'hidden_size' is missing or not an integer"},
                          Case{R"({"hidden_size": 18446744073709551615})", "'hidden_size' = 18446744073709551615 is out of range"},
                          Case{R"({"hidden_size": -64})", "'hidden_size' = -64 is out of range"},
                          Case{deep(100000), "JSON nested deeper"}}) {
        CAPTURE(c.json.substr(0, 60));
        std::ofstream(config) << c.json;
        const std::string msg = error_of([&] { load_eagle_layer(tmp.path.string(), model.config); });
        CHECK_THAT(msg, Contains(config + ": ") && Contains(c.says));
    }
    fs::remove(config);
    REQUIRE(::mkfifo(config.c_str(), 0600) == 0);
    CHECK_THAT(error_of([&] { load_eagle_layer(tmp.path.string(), model.config); }),
               Contains(config + ": not a regular file (a FIFO)"));
}
