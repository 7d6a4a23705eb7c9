// Without any Vulkan driver (the loader pointed at a driver list that does not exist): `info`
// lists no device and says what to install, GPU commands fail with that one line, --cpu still
// decodes, and a training command leaves no output folder behind.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli_runner.h"
#include "scoped_env.h"
#include "temp_dir.h"
#include "test_paths.h"

using medusa::test::model_path;
using medusa::test::run_medusa;
namespace fs = std::filesystem;

namespace {

// The child processes see no driver; this process keeps the one it already has.
struct NoDriverEnvironment {
    medusa::test::ScopedEnv icd{"VK_ICD_FILENAMES", "/nonexistent/medusa-no-driver.json"};
    medusa::test::ScopedEnv drivers{"VK_DRIVER_FILES", "/nonexistent/medusa-no-driver.json"};
};

}  // namespace

TEST_CASE("without a Vulkan driver: info lists none, GPU commands say to install one or use --cpu", "[cli-errors]") {
    NoDriverEnvironment no_driver;
    const std::string model = " -m " + model_path("stories260K.bin") + " --tokenizer " + model_path("tok512.model");

    const auto info = run_medusa("info");
    INFO(info.err);
    CHECK(info.exit_code == 0);
    CHECK(info.out.find("none") != std::string::npos);
    CHECK(info.out.find("--cpu") != std::string::npos);

    const auto gen = run_medusa("generate" + model + " -p Once -n 4");
    CHECK(gen.exit_code == 1);
    CHECK(gen.err.find("no Vulkan driver or device found") != std::string::npos);
    CHECK(gen.err.find("--cpu") != std::string::npos);
    CHECK(std::count(gen.err.begin(), gen.err.end(), '\n') == 1);

    const auto cpu = run_medusa("generate" + model + " -p Once -n 4 --cpu");
    INFO(cpu.err);
    CHECK(cpu.exit_code == 0);
    CHECK(cpu.out.rfind("Once", 0) == 0);

    medusa::test::TempDir dir("medusa-no-driver");
    const fs::path out = dir.path / "heads";
    const auto train = run_medusa("train-heads" + model + " --out " + out.string() + " --steps 1");
    CHECK(train.exit_code == 1);
    CHECK(train.err.find("no Vulkan driver") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
}
