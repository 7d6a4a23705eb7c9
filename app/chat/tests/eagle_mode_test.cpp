// EAGLE mode in the app: the worker drafts with EAGLE's layer (an untrained one saved in EAGLE's
// layout, as `medusa train-eagle` writes them), the text equals plain greedy decoding's, and the
// captions and row labels speak of EAGLE levels and feature-level drafting.
#include <catch2/catch.hpp>

#include <filesystem>

#include "decode_worker.h"
#include "llm/eagle_layer_io.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "step_explain.h"
#include "worker_fixture.h"

using namespace medusa;
using namespace medusa::chat;
using medusa::chat::test::context;
using medusa::chat::test::decode_turn;

namespace {

std::vector<StepRecord> decode(const DecodeSettings& s, const std::string& prompt) {
    return decode_turn(s, prompt).steps();
}

}  // namespace

TEST_CASE("EAGLE mode writes plain greedy text and explains its levels", "[chat][eagle]") {
    const int validation_before = context().validation_messages();
    DecodeSettings s;
    s.max_new_tokens = 60;
    s.mode = DrafterKind::Plain;
    std::vector<int> plain;
    for (const StepRecord& r : decode(s, "Tom and his dog")) plain.insert(plain.end(), r.trace.emitted.begin(), r.trace.emitted.end());
    const auto dir = std::filesystem::temp_directory_path() / ("medusa_chat_eagle_" + std::to_string(getpid()));
    const ModelFile file = load_model(s.model_path);
    save_eagle_layer(EagleLayer::init(file.config, 5), dir.string(), file.path);
    s.mode = DrafterKind::Eagle;
    s.fixed_shape = true;  // every step drafts, whatever it costs on this machine
    s.eagle.layer = dir.string();
    s.eagle.top_k = 3;
    s.eagle.depth = 3;
    s.eagle.nodes = 10;
    const auto steps = decode(s, "Tom and his dog");
    std::vector<int> eagle;
    int trees = 0;
    for (const StepRecord& r : steps) {
        eagle.insert(eagle.end(), r.trace.emitted.begin(), r.trace.emitted.end());
        CHECK(r.trace.drafter == DrafterKind::Eagle);
        if (r.trace.nodes.size() < 2) continue;
        ++trees;
        CHECK(row_label(r.trace, 2) == "level 2");
        CHECK_THAT(step_caption(r), Catch::Contains("EAGLE level 1"));
    }
    CHECK(eagle == plain);
    CHECK(trees > 5);
    CHECK_THAT(drafter_explanation(steps.back().trace), Catch::Contains("feature level"));
    CHECK(s.mode_name() == "eagle (dynamic tree, 10 nodes, fixed shape, greedy)");
    std::filesystem::remove_all(dir);
    CHECK(context().validation_messages() == validation_before);
}

TEST_CASE("an EAGLE-3 checkpoint drafts in EAGLE mode and the status names the layers that feed it", "[chat][eagle]") {
    const int validation_before = context().validation_messages();
    DecodeSettings s;
    s.max_new_tokens = 40;
    s.mode = DrafterKind::Plain;
    std::vector<int> plain;
    for (const StepRecord& r : decode(s, "Tom and his dog")) plain.insert(plain.end(), r.trace.emitted.begin(), r.trace.emitted.end());
    s.mode = DrafterKind::Eagle;
    s.fixed_shape = true;
    s.eagle.layer = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/layers-0-2-4";  // SafeAILab's layout
    s.eagle.top_k = 2;
    s.eagle.depth = 4;
    s.eagle.nodes = 8;
    StepLog log;
    DecodeWorker worker(context(), log);
    REQUIRE(worker.generate("Tom and his dog", s));
    worker.wait_idle();
    INFO(worker.last_error());
    REQUIRE(worker.last_error().empty());
    CHECK_THAT(worker.status(), Catch::Contains("EAGLE-3 from target layers 0, 2, 4 fused by fc, draft vocabulary 256"));
    StepLogReader reader;
    reader.poll(log);
    std::vector<int> eagle3;
    int trees = 0;
    for (const StepRecord& r : reader.steps()) {
        eagle3.insert(eagle3.end(), r.trace.emitted.begin(), r.trace.emitted.end());
        trees += r.trace.nodes.size() > 1;
    }
    CHECK(eagle3 == plain);
    CHECK(trees > 5);
    // The tree panel's legend names the layers that feed the draft and its vocabulary.
    REQUIRE(worker.eagle_reads());
    CHECK(worker.eagle_reads()->target_layers == std::vector<int>{0, 2, 4});
    const std::string legend = drafter_explanation(reader.steps().back().trace, worker.eagle_reads());
    CHECK_THAT(legend, Catch::Contains("EAGLE-3") && Catch::Contains("layers 0, 2 and 4 is fused by fc") &&
                           Catch::Contains("256 of the 512 tokens"));
    CHECK(context().validation_messages() == validation_before);
}
