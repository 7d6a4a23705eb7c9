// Files trained for a model are found in the cache by the model's content: the SHA-256 their
// training checkpoints record, not the folder's or the model file's name. A copy of stories260K
// under another name gets its heads and tuned tree; llama2xs, of the same shapes, does not.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "model/load_model.h"
#include "setup/drafting.h"
#include "setup/trained_files.h"
#include "llm/cpu_tree_runner.h"
#include "llm/medusa_heads_io.h"
#include "model/model_digest.h"
#include "model/safetensors_file.h"
#include "temp_dir.h"
#include "test_paths.h"
#include "train/checkpoint_identity.h"

using namespace medusa;
using medusa::test::TempDir;
namespace fs = std::filesystem;

namespace {

// What tune-tree writes: medusa_choices plus the budget/time table.
const char* kTreeJson = R"({"device": "test", "medusa_choices": [[0], [0, 0], [1], [0, 0, 0]], "nodes": 5,
  "table": [{"nodes": 1, "step_ms": 2.5, "expected_tokens_per_s": 390.0, "expected_tokens_per_step": 1.0}]})";

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// A piece's training checkpoint as train-heads and train-eagle leave it: the optimizer state with
// the identity of the model it was trained on (none when `trained_on` is null).
void write_checkpoint(const fs::path& piece, const ModelFile* trained_on) {
    std::map<std::string, std::string> metadata = {{"step", "1"}};
    if (trained_on) train::add_identity(train::checkpoint_identity(*trained_on, "4 Medusa heads of 1 blocks"), metadata);
    const std::vector<float> moments(4, 0.0f);
    fs::create_directories(piece / "checkpoint");
    write_safetensors((piece / "checkpoint" / "optimizer.safetensors").string(), {f32_tensor("adam.m", moments)},
                      metadata);
}

// <cache>/<name>/heads (4 heads initialised from `model`, saved as trained heads are) and tree.json.
fs::path write_heads_folder(const fs::path& cache, const std::string& name, const ModelFile& model,
                            const ModelFile* trained_on) {
    const fs::path folder = cache / name;
    save_medusa_heads(MedusaHeads::init_from_model(model, 4), (folder / "heads").string());
    write_checkpoint(folder / "heads", trained_on);
    write_text(folder / "tree.json", kTreeJson);
    return folder;
}

ModelFile copy_of_stories260K(const TempDir& dir) {
    const fs::path copy = dir.path / "my-model-copy.bin";
    fs::copy_file(test::model_path("stories260K.bin"), copy);
    return load_model(copy.string());
}

}  // namespace

TEST_CASE("a model's digest follows its content, not its path", "[trained-files]") {
    TempDir dir("medusa-digest");
    const ModelFile original = load_model(test::model_path("stories260K.bin"));
    const ModelFile copy = copy_of_stories260K(dir);
    const ModelFile other = load_model(test::model_path("llama2xs.bin"));
    CHECK(model_sha256(original).size() == 64);
    CHECK(model_sha256(copy) == model_sha256(original));
    CHECK(model_sha256(other) != model_sha256(original));
    CHECK(model_sha256(other) == model_sha256(other));  // asked again: the same answer
}

TEST_CASE("trained files are found for a copy of their model under any name, and only for it", "[trained-files]") {
    TempDir dir("medusa-trained-files");
    const ModelFile copy = copy_of_stories260K(dir);
    const ModelFile original = load_model(test::model_path("stories260K.bin"));
    const ModelFile other = load_model(test::model_path("llama2xs.bin"));  // dim 64 and vocabulary 512 too
    const fs::path cache = dir.path / "cache";
    const fs::path folder = write_heads_folder(cache, "a-folder-named-anything", original, &original);

    const TrainedFiles found = find_trained_files(cache.string(), copy);
    CHECK(found.folder == folder.string());
    CHECK(found.heads_path == (folder / "heads").string());
    CHECK(found.tree_path == (folder / "tree.json").string());
    CHECK(found.eagle_path.empty());
    CHECK(find_trained_files(cache.string(), other).folder.empty());
    CHECK(trained_on((folder / "heads").string(), other)->model == original.path);
    CHECK_FALSE(trained_on((folder / "heads").string(), other)->same);

    // Heads whose checkpoint records no model, or that have none, are not claimed for any model.
    fs::remove_all(folder);
    write_heads_folder(cache, "stories260K", original, nullptr);
    CHECK(find_trained_files(cache.string(), original).folder.empty());
    CHECK_FALSE(trained_on((cache / "stories260K/heads").string(), original).has_value());
    fs::remove_all(cache / "stories260K/heads/checkpoint");
    CHECK(find_trained_files(cache.string(), original).folder.empty());
    CHECK(find_trained_files((dir.path / "no-such-cache").string(), original).folder.empty());
}

TEST_CASE("of an EAGLE-2 and an EAGLE-3 layer trained for the model, the one whose greedy chains went deeper",
          "[trained-files]") {
    TempDir dir("medusa-trained-eagle");
    const ModelFile model = load_model(test::model_path("stories260K.bin"));
    const fs::path cache = dir.path / "cache", e2 = cache / "m/eagle", e3 = cache / "m/eagle3";
    for (const fs::path& layer : {e2, e3}) {
        write_text(layer / "model.safetensors", "x");  // looked up, not loaded
        write_checkpoint(layer, &model);
    }
    const auto eagle_of = [&] { return find_trained_files(cache.string(), model).eagle_path; };
    // No reports: EAGLE-3.
    CHECK(eagle_of() == e3.string());
    // EAGLE-2's report (train-eagle's layout, 5 deep) beats EAGLE-3's over their common 5 depths.
    write_text(e2 / "accuracy.json",
               R"({"trained": {"draft_on_greedy_text": {"chain_accepted": [0.9, 0.78, 0.67, 0.57, 0.49]}}})");
    write_text(e3 / "accuracy.json", R"({"draft_on_greedy_text": {"chain_accepted": [0.8, 0.68, 0.56, 0.5, 0.45, 0.38]}})");
    CHECK(eagle_of() == e2.string());
    // The other way round.
    write_text(e3 / "accuracy.json", R"({"draft_on_greedy_text": {"chain_accepted": [0.88, 0.78, 0.7, 0.63, 0.56, 0.51]}})");
    CHECK(eagle_of() == e3.string());
    // An unreadable report counts as none.
    write_text(e3 / "accuracy.json", "not json");
    CHECK(eagle_of() == e2.string());
    // A layer trained for another model is passed over.
    const ModelFile other = load_model(test::model_path("llama2xs.bin"));
    write_checkpoint(e2, &other);
    CHECK(eagle_of() == e3.string());
}

TEST_CASE("Medusa drafting takes the heads and tree the cache holds for the model where the spec leaves them to it",
          "[trained-files]") {
    TempDir dir("medusa-trained-drafting");
    const ModelFile model = copy_of_stories260K(dir);
    const fs::path folder = write_heads_folder(dir.path / "cache", "x", model, &model);
    CpuReferenceModel cpu(model);
    CpuTreeRunner runner(cpu);
    const DraftingTarget target{.file = model, .runner = runner};
    auto summary = [&](MedusaSpec m) { return build_drafting(m, target, nullptr, {}, StepShaping::Fixed).summary; };
    MedusaSpec m{.trained_cache = (dir.path / "cache").string(), .cached_heads = true, .cached_tree = true};
    CHECK(summary(m) == "medusa (heads " + (folder / "heads/medusa_lm_head.safetensors").string() +
                            ", 4 heads, 5-node tree " + (folder / "tree.json").string() + ")");
    m.cached_tree = false;  // a tree chosen: kept
    m.tree = "chain:3";
    CHECK_THAT(summary(m), Catch::Contains("4-node tree chain:3"));
    CHECK_THAT(summary(m), Catch::Contains("heads " + (folder / "heads").string()));
    m.cached_heads = false;  // heads left untrained
    CHECK_THAT(summary(m), Catch::StartsWith("medusa (untrained heads"));
    m = {.trained_cache = (dir.path / "elsewhere").string(), .cached_heads = true, .cached_tree = true};
    CHECK(summary(m) == "medusa (untrained heads, 4 heads, 64-node tree mc_sim_7b_63)");  // nothing cached
}

TEST_CASE("generate --speculate auto drafts with the heads trained for a renamed copy of the model", "[trained-files]") {
    TempDir dir("medusa-trained-cli");
    const ModelFile model = copy_of_stories260K(dir);
    // The folder carries the original's name: the copy's file name matches nothing.
    const fs::path folder = write_heads_folder(dir.path / "cache", "stories260K", model, &model);
    const std::string args = "generate -m " + model.path + " --tokenizer " + test::model_path("tok512.model") +
                             " --speculate auto -n 4 --temp 0 -p 'Once upon a time'";
    const auto r = test::run_medusa(args, "MEDUSA_CACHE=" + (dir.path / "cache").string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("+ medusa (heads " + (folder / "heads").string()));
    CHECK_THAT(r.err, Catch::Contains("5-node tree " + (folder / "tree.json").string()));
    // llama2xs, of the same shapes: not its heads.
    const auto other = test::run_medusa("generate -m " + test::model_path("llama2xs.bin") + " --tokenizer " +
                                            test::model_path("tok512.model") + " --speculate auto -n 4 --temp 0 -p 'Once'",
                                        "MEDUSA_CACHE=" + (dir.path / "cache").string());
    REQUIRE(other.exit_code == 0);
    CHECK_THAT(other.err, !Catch::Contains("medusa ("));
}
