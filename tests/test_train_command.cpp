// `medusa train --objective NAME` reaches each objective's own flags and checks, the old command
// names stay its aliases, and a short run through it trains and reports as train-heads does.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli_runner.h"
#include "test_paths.h"
#include "train/training_objective.h"

namespace fs = std::filesystem;
using medusa::train::Objective;

TEST_CASE("objectives are named and read back by name", "[train-command]") {
    for (Objective o : {Objective::Heads, Objective::Joint, Objective::Eagle, Objective::Eagle3})
        CHECK(medusa::train::objective_named(medusa::train::objective_name(o)) == o);
    CHECK(medusa::train::objective_named("train-heads") == std::nullopt);
}

TEST_CASE("medusa train --objective picks the objective whose flags it then reads", "[train-command]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_train_command_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const std::string start = "train -m " + medusa::test::model_path("stories260K.bin") + " --tokenizer " +
                              medusa::test::model_path("tok512.model") + " --out " + dir.string();
    // Each check is only its objective's, and each refuses before the GPU opens.
    for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
             {" --heads 9", "medusa train: --heads must be 1 to 8\n"},
             {" --objective heads --heads 9", "medusa train: --heads must be 1 to 8\n"},
             {" --objective joint --lora-rank 0",
              "medusa train: --lora-rank, --batch-seqs must be positive and --seq-len 4 to the model's context\n"},
             {" --objective eagle --noise -1", "medusa train: --noise and --token-weight must not be negative\n"},
             {" --objective eagle3 --ttt-steps 0", "medusa train: --ttt-steps must be 1 to 32\n"},
             {" --objective eagle3 --noise 1", "medusa train: unknown option --noise\n"},
             {" --objective medusa", "medusa train: --objective expects heads, joint, eagle or eagle3\n"},
             {" --objective", "medusa train: --objective expects heads, joint, eagle or eagle3\n"}}) {
        CAPTURE(flags);
        const auto r = medusa::test::run_medusa(start + flags);
        CHECK(r.exit_code == 2);
        CHECK(r.err == says);
    }
    // The old names are aliases, and --objective is train's alone.
    const auto old = medusa::test::run_medusa("train-heads --objective joint");
    CHECK(old.exit_code == 2);
    CHECK(old.err.find("unknown option --objective") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("medusa train --objective heads trains and reports as train-heads", "[train-command]") {
    const fs::path dir = fs::temp_directory_path() / ("medusa_train_heads_run_" + std::to_string(getpid()));
    fs::remove_all(dir);
    const auto r = medusa::test::run_medusa("train --objective heads -m " + medusa::test::model_path("stories260K.bin") +
                                            " --tokenizer " + medusa::test::model_path("tok512.model") + " --out " +
                                            dir.string() + " --heads 1 --steps 2 --batch 32 --sequences 8 --max-len 24");
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("step 2/2  loss ") != std::string::npos);
    CHECK(r.out.find("training: 2 steps") != std::string::npos);
    const auto report = nlohmann::json::parse(medusa::test::slurp((dir / "accuracy.json").string()));
    CHECK(report["heads"] == 1);
    CHECK(report["steps"] == 2);
    CHECK(fs::exists(dir / "checkpoint" / "optimizer.safetensors"));
    fs::remove_all(dir);
}
