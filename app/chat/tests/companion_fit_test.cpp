// Files made for another model are left out when the model changes, each with a line saying why,
// and what fits is kept: heads trained for stories260K on llama2xs (same shapes, another model), an
// EAGLE layer of another hidden size, a tokenizer of another vocabulary; the worker drops them and
// decodes with the rest.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "companion_fit.h"
#include "decode_worker.h"
#include "llm/medusa_heads.h"
#include "llm/medusa_heads_io.h"
#include "model/load_model.h"
#include "model/safetensors_file.h"
#include "train/checkpoint_identity.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
namespace fs = std::filesystem;

namespace {

const std::string kModels = MEDUSA_SHARED_DIR "/models/";

struct TempDir {
    fs::path dir = fs::temp_directory_path() / ("medusa-chat-fit-" + std::to_string(::getpid()));
    TempDir() { fs::remove_all(dir), fs::create_directories(dir); }
    ~TempDir() { fs::remove_all(dir); }
};

// Heads for stories260K saved as training writes them (config.json naming that model).
std::string stories_heads(const fs::path& dir) {
    const ModelFile stories = load_model(kModels + "stories260K.bin");
    MedusaHeads heads = MedusaHeads::init_from_model(stories, 2);
    heads.source = stories.path;
    save_medusa_heads(heads, (dir / "heads").string());
    return (dir / "heads").string();
}

}  // namespace

TEST_CASE("files made for another model are named and left out, what fits is kept", "[chat]") {
    TempDir t;
    const std::string heads = stories_heads(t.dir);
    fs::create_directories(t.dir / "eagle");
    std::ofstream(t.dir / "eagle" / "config.json") << R"({"hidden_size": 128, "num_attention_heads": 8})";
    DecodeSettings s;
    set_heads_field(s, heads);
    s.eagle.layer = (t.dir / "eagle").string();
    s.mode = DrafterKind::Eagle;
    const ModelFile stories = load_model(kModels + "stories260K.bin");
    const ModelFile xs = load_model(kModels + "llama2xs.bin");

    const auto on_stories = ill_fitting_files(s, stories);
    REQUIRE(on_stories.size() == 1);  // the heads fit the model they were trained for
    CHECK(on_stories[0].what == Companion::EagleLayer);
    CHECK(on_stories[0].why == s.eagle.layer + ": hidden size 128, but stories260K.bin has 64");

    const auto on_xs = ill_fitting_files(s, xs);
    REQUIRE(on_xs.size() == 2);
    CHECK(on_xs[0].what == Companion::Heads);
    CHECK(on_xs[0].why == heads + ": trained for stories260K, not llama2xs.bin");
    DecodeSettings fitted = s;
    drop_files(fitted, on_xs);
    CHECK(heads_field(fitted).empty());
    CHECK(fitted.eagle.layer.empty());
    CHECK(fitted.mode == DrafterKind::Plain);  // EAGLE without a layer: plain decoding
    CHECK(fitted.tokenizer_path == s.tokenizer_path);  // tok512 fits both

    DecodeSettings other_vocab;
    other_vocab.tokenizer_path = kModels + "llama2-tokenizer.model";
    const auto tok = ill_fitting_files(other_vocab, stories);
    REQUIRE(tok.size() == 1);
    CHECK(tok[0].what == Companion::Tokenizer);
    CHECK_THAT(tok[0].why, Catch::Contains("32000"));
}

TEST_CASE("the worker decodes a model without heads trained for another, and says so once", "[chat]") {
    TempDir t;
    DecodeSettings s;
    s.model_path = kModels + "llama2xs.bin";
    set_heads_field(s, stories_heads(t.dir));
    s.mode = DrafterKind::Medusa;
    set_tree_field(s, "chain:2");
    s.max_new_tokens = 8;
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Once upon a time", s));
    worker.wait_idle();
    INFO(worker.last_error());
    CHECK(worker.last_error().empty());
    const auto dropped = worker.take_dropped();
    REQUIRE(dropped.size() == 1);
    CHECK(dropped[0].why == *s.medusa.heads + ": trained for stories260K, not llama2xs.bin");
    CHECK(worker.status().find(*s.medusa.heads) == std::string::npos);  // Medusa from llama2xs's own init heads
    CHECK(worker.take_dropped().empty());
}

TEST_CASE("heads whose checkpoint records their model fit it by content, whatever the names say", "[chat]") {
    TempDir t;
    const ModelFile stories = load_model(kModels + "stories260K.bin");
    const ModelFile xs = load_model(kModels + "llama2xs.bin");
    // Heads whose config.json names a file that is neither model (a renamed copy trained on).
    MedusaHeads heads = MedusaHeads::init_from_model(stories, 2);
    heads.source = "/elsewhere/my-copy.bin";
    const std::string folder = (t.dir / "heads").string();
    save_medusa_heads(heads, folder);
    auto record = [&](const ModelFile& trained_on) {
        std::map<std::string, std::string> metadata;
        train::add_identity(train::checkpoint_identity(trained_on, "2 Medusa heads of 1 blocks"), metadata);
        const std::vector<float> moments(2, 0.0f);
        fs::create_directories(t.dir / "heads" / "checkpoint");
        write_safetensors((t.dir / "heads" / "checkpoint" / "optimizer.safetensors").string(),
                          {f32_tensor("adam.m", moments)}, metadata);
    };
    DecodeSettings s;
    set_heads_field(s, folder);
    record(stories);
    CHECK(ill_fitting_files(s, stories).empty());  // the name says my-copy, the content says stories260K
    const auto on_xs = ill_fitting_files(s, xs);
    REQUIRE(on_xs.size() == 1);
    CHECK(on_xs[0].why == folder + ": trained for stories260K (another model by content), not llama2xs.bin");
    record(xs);  // recorded for llama2xs: left out of stories260K
    const auto on_stories = ill_fitting_files(s, stories);
    REQUIRE(on_stories.size() == 1);
    CHECK(on_stories[0].why == folder + ": trained for llama2xs (another model by content), not stories260K.bin");
}
