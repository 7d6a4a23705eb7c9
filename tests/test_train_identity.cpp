// A training checkpoint records what it was trained from: resuming it on another model, or with
// another number of heads, is refused naming both, before the GPU or the training text is touched,
// instead of training on without a word (another model) or failing deep inside (other heads).
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_rusage.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "temp_dir.h"
#include "test_paths.h"
#include "train/training_progress.h"

using namespace medusa;
using namespace medusa::train;
using medusa::test::model_path;
using medusa::test::TempDir;

TEST_CASE("a checkpoint of another model or shape is refused naming both", "[train-identity]") {
    TempDir dir("medusa-identity");
    const std::string ckpt = (dir.path / "checkpoint").string();
    std::filesystem::create_directories(ckpt);
    const ModelFile stories = load_model(model_path("stories260K.bin"));
    const ModelFile xs = load_model(model_path("llama2xs.bin"));
    const CheckpointIdentity two = checkpoint_identity(stories, "2 Medusa heads of 1 blocks");
    CHECK(two.model_sha256.size() == 64);
    CHECK(checkpoint_identity(stories, "x").model_sha256 == two.model_sha256);  // a function of the tensors
    CHECK(checkpoint_identity(xs, "x").model_sha256 != two.model_sha256);
    save_optimizer_checkpoint(ckpt, {{1, 2}, {3, 4}, 7}, 0, two);

    const auto same = find_resume_point(ckpt, true, two, {});
    REQUIRE(same);
    CHECK(same->step == 7);
    CHECK_THROWS_WITH(check_resumable(ckpt, checkpoint_identity(xs, "2 Medusa heads of 1 blocks")),
                      Catch::StartsWith(ckpt + ": was trained on " + stories.path) && Catch::Contains("not on " + xs.path));
    CHECK_THROWS_WITH(find_resume_point(ckpt, true, checkpoint_identity(stories, "3 Medusa heads of 1 blocks"), {}),
                      Catch::StartsWith(ckpt + ": holds 2 Medusa heads of 1 blocks, but this run trains 3 Medusa heads"));
}

TEST_CASE("train-heads --resume on another model or head count is refused at once", "[train-identity]") {
    TempDir dir("medusa-identity-cli");
    const std::string out = (dir.path / "run").string();
    auto train = [&](const std::string& model, const std::string& heads, bool resume) {
        std::vector<std::string> a = {"train-heads", "-m", model_path(model), "--tokenizer", model_path("tok512.model"),
                                      "--heads", heads, "--steps", "8", "--sequences", "8", "--max-len", "48",
                                      "--batch", "32", "--checkpoint-every", "4", "--out", out};
        if (resume) a.push_back("--resume");
        return medusa::test::run_medusa_limited(a, 120);
    };
    const auto first = train("stories260K.bin", "2", false);
    INFO(first.err);
    REQUIRE(first.exit_code == 0);

    const auto other_model = train("llama2xs.bin", "2", true);
    CHECK(other_model.exit_code == 1);
    CHECK_THAT(other_model.err, Catch::Contains("was trained on " + model_path("stories260K.bin")) &&
                                    Catch::Contains("not on " + model_path("llama2xs.bin")));
    CHECK(std::count(other_model.err.begin(), other_model.err.end(), '\n') == 1);  // nothing ran first

    const auto other_heads = train("stories260K.bin", "3", true);
    CHECK(other_heads.exit_code == 1);
    CHECK_THAT(other_heads.err, Catch::Contains("holds 2 Medusa heads of 1 blocks, but this run trains 3 Medusa heads"));

    const auto same = train("stories260K.bin", "2", true);
    INFO(same.err);
    CHECK(same.exit_code == 0);
}
