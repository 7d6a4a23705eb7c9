// Dropped files are told apart by content, never by name: real model, tokenizer, heads, EAGLE,
// tree and benchmark files, each also saved under a misleading name.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "file_kind.h"
#include "llm/eagle_layer_io.h"
#include "llm/medusa_heads.h"
#include "llm/medusa_heads_io.h"
#include "model/load_model.h"
#include "model/model_file.h"

using namespace medusa;
using namespace medusa::chat;
namespace fs = std::filesystem;

namespace {

std::string model(const std::string& name) { return std::string(MEDUSA_SHARED_DIR) + "/models/" + name; }

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("a dropped file's kind comes from its content, not its name", "[chat][files]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_file_kind_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    CHECK(classify_file(model("stories260K.bin")) == FileKind::Model);      // llama2.c v0: no magic
    CHECK(classify_file(model("stories260K_q80.bin")) == FileKind::Model);  // llama2.c v2: ak42
    CHECK(classify_file(model("tok512.model")) == FileKind::Tokenizer);
    for (const auto& e : fs::directory_iterator(model("gguf")))
        if (e.path().extension() == ".gguf") {
            CHECK(classify_file(e.path().string()) == FileKind::Model);
            break;
        }

    // llama.cpp's EAGLE-3 draft is a GGUF too: its architecture tells it apart.
    fs::copy_file(std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/gguf/layers-0-2-4.gguf", dir / "draft.gguf");
    CHECK(classify_file((dir / "draft.gguf").string()) == FileKind::EagleLayer);

    const ModelFile m = load_model(model("stories260K.bin"));
    save_medusa_heads(MedusaHeads::init_from_model(m, 2), (dir / "tree.json").string());  // a folder named like a tree
    CHECK(classify_file((dir / "tree.json").string()) == FileKind::MedusaHeads);
    save_eagle_layer(EagleLayer::init(m.config, 1), (dir / "medusa").string(), "stories260K");
    CHECK(classify_file((dir / "medusa").string()) == FileKind::EagleLayer);

    fs::copy_file(model("stories260K_q80.bin"), dir / "medusa_tree.json");
    CHECK(classify_file((dir / "medusa_tree.json").string()) == FileKind::Model);
    write(dir / "medusa_heads.bin", "[[0], [1], [0, 0]]");
    CHECK(classify_file((dir / "medusa_heads.bin").string()) == FileKind::Tree);
    write(dir / "model.gguf", R"({"device": {"name": "x"}, "compare": {"prompt_sets": {}}})");
    CHECK(classify_file((dir / "model.gguf").string()) == FileKind::Benchmark);
    write(dir / "heads.json", "{\"medusa\": 1}");
    CHECK(classify_file((dir / "heads.json").string()) == FileKind::Unknown);
    write(dir / "empty.bin", "");
    CHECK(classify_file((dir / "empty.bin").string()) == FileKind::Unknown);
    CHECK(classify_file((dir / "missing").string()) == FileKind::Unknown);
    fs::remove_all(dir);
}
