// A model whose weights hold NaN must stop with one line naming the file and the cause, in every
// decoding path, not with "token id -1 outside the vocabulary" or a text of garbage. A drafter's
// NaN is not the model's: an EAGLE layer holding NaN is set aside with one warning naming its file.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_rusage.h"
#include "model/load_model.h"
#include "setup/drafting.h"
#include "file_text.h"
#include "llm/cpu_tree_runner.h"
#include "llm/eagle_layer_io.h"
#include "model/gguf_metadata.h"
#include "test_paths.h"

using medusa::test::model_path;

TEST_CASE("NaN weights are reported as NaN logits naming the model", "[nan-weights]") {
    std::ifstream in(model_path("stories260K.bin"), std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), {});
    // The token embedding (also the classifier) follows the 28-byte header: 512 x 64 floats.
    const float nan = std::nanf("");
    for (size_t i = 0; i < 512 * 64; ++i) std::memcpy(&b[28 + 4 * i], &nan, 4);
    const std::string path = "/tmp/medusa-nan-" + std::to_string(::getpid()) + ".bin";
    std::ofstream(path, std::ios::binary).write(b.data(), std::streamsize(b.size()));
    const std::vector<std::vector<std::string>> modes = {
        {},                                                  // greedy, GPU
        {"--cpu"},                                           // greedy, the CPU reference
        {"--temp", "0.8", "--seed", "1"},                    // sampling
        {"--temp", "0", "--repeat-penalty", "1.2", "--cpu"},  // penalised greedy
        {"--heads", "init", "--tree", "chain:2"},            // Medusa
        {"--ngram", "2"}};
    for (const auto& extra : modes) {
        std::vector<std::string> args = {"generate", "-m", path, "--tokenizer", model_path("tok512.model"),
                                         "-p", "Once upon a time", "-n", "8"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = medusa::test::run_medusa_limited(args);
        CAPTURE(extra, r.err);
        CHECK(r.exit_code == 1);
        CHECK(r.err.find(path + ": the model produced NaN/Inf logits (non-finite weights?)") != std::string::npos);
        // One line of error; a first run on a device also says it measures the verify pass.
        std::string err = r.err;
        if (err.rfind("measuring the verify pass", 0) == 0) err.erase(0, err.find('\n') + 1);
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    }
    std::remove(path.c_str());
}

namespace {

// Writes NaN over element `i` of tensor `name` in a safetensors file.
void poison_safetensors(const std::filesystem::path& file, const std::string& name, size_t i) {
    std::string bytes = medusa::test::read_text(file);
    uint64_t header_len;
    std::memcpy(&header_len, bytes.data(), 8);
    const auto header = nlohmann::json::parse(bytes.substr(8, header_len));
    REQUIRE(header.contains(name));
    REQUIRE(header[name]["dtype"] == "F32");
    const float nan = std::nanf("");
    std::memcpy(&bytes[8 + header_len + header[name]["data_offsets"][0].get<size_t>() + 4 * i], &nan, 4);
    medusa::test::write_text(file, bytes);
}

// Writes NaN over element `i` of the F32 tensor `name` in a GGUF file.
void poison_gguf(const std::filesystem::path& file, const std::string& name, size_t i) {
    std::string bytes = medusa::test::read_text(file);
    const medusa::GgufHeader h = medusa::read_gguf_header(std::vector<uint8_t>(bytes.begin(), bytes.end()), file.string());
    const float nan = std::nanf("");
    bool found = false;
    for (const medusa::GgufTensorInfo& t : h.tensors)
        if (t.name == name) {
            REQUIRE(t.type == 0);  // F32
            std::memcpy(&bytes[h.data_start + t.offset + 4 * i], &nan, 4);
            found = true;
        }
    REQUIRE(found);
    medusa::test::write_text(file, bytes);
}

}  // namespace

TEST_CASE("a NaN EAGLE layer is set aside with one warning naming it, and decoding goes on plainly", "[nan-weights]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("medusa_nan_eagle_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const medusa::ModelFile target = medusa::load_model(model_path("stories260K.bin"));
    // EAGLE-2: a layer written whole, one up-projection weight NaN. EAGLE-3: the published layout
    // and llama.cpp's GGUF, each with one NaN weight in its file.
    medusa::EagleLayer e2 = medusa::EagleLayer::init(target.config, 5);
    e2.w_up[7] = std::nanf("");
    medusa::save_eagle_layer(e2, (dir / "eagle2").string(), target.path);
    const std::string fixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/eagle3/";
    fs::create_directories(dir / "eagle3");
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(fixtures + "layers-0-2-4/" + f, dir / "eagle3" / f);
    poison_safetensors(dir / "eagle3" / "model.safetensors", "midlayer.self_attn.q_proj.weight", 100);
    fs::copy_file(fixtures + "gguf/layers-0-2-4.gguf", dir / "eagle3.gguf");
    poison_gguf(dir / "eagle3.gguf", "output.weight", 3);
    const std::string common = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                               model_path("tok512.model") + " -p 'Once upon a time' -n 32 --temp 0 ";
    for (const std::string engine : {"", "--cpu "}) {
        const auto plain = medusa::test::run_medusa(common + engine);
        REQUIRE(plain.exit_code == 0);
        for (const fs::path& layer : {dir / "eagle2", dir / "eagle3", dir / "eagle3.gguf"})
            for (const std::string shaping : {"--fixed-shape", "", "--speculate auto"}) {
                CAPTURE(engine, layer, shaping);
                const auto r = medusa::test::run_medusa(common + engine + "--eagle " + layer.string() + " " + shaping);
                INFO(r.err);
                CHECK(r.exit_code == 0);
                CHECK(r.out == plain.out);
                const std::string warning = ": the EAGLE layer holds NaN or infinite weights: decoding goes on without it\n";
                CHECK_THAT(r.err, Catch::Contains("warning: " + layer.string()) && Catch::Contains(warning));
                CHECK(r.err.find(warning) == r.err.rfind(warning));  // once
                CHECK(r.err.find("NaN/Inf logits") == std::string::npos);
            }
    }
    fs::remove_all(dir);
}

TEST_CASE("an EAGLE layer whose finite weights overflow to NaN drafts nothing, and decoding goes on plainly",
          "[nan-weights]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("medusa_overflow_eagle_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const medusa::ModelFile target = medusa::load_model(model_path("stories260K.bin"));
    medusa::EagleLayer e = medusa::EagleLayer::init(target.config, 5);
    for (size_t i = 0; i < e.w_down.size(); ++i) e.w_down[i] = i % 2 ? 3e38f : -3e38f;  // +Inf and -Inf meet
    REQUIRE(e.non_finite_note().empty());
    medusa::save_eagle_layer(e, dir.string(), target.path);
    const std::string common = "generate -m " + model_path("stories260K.bin") + " --tokenizer " +
                               model_path("tok512.model") + " -p 'Once upon a time' -n 32 --temp 0 ";
    for (const std::string engine : {"", "--cpu "}) {
        CAPTURE(engine);
        const auto plain = medusa::test::run_medusa(common + engine);
        const auto r = medusa::test::run_medusa(common + engine + "--fixed-shape --eagle " + dir.string());
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == plain.out);
        CHECK(r.err.find("NaN/Inf logits") == std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("the app's worker builds its drafting from a NaN EAGLE layer as plain decoding with the warning",
          "[nan-weights]") {
    // The app's decode worker builds its drafter with build_drafting, as the command line does.
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("medusa_nan_eagle_worker_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const medusa::ModelFile target = medusa::load_model(model_path("stories260K.bin"));
    medusa::EagleLayer e2 = medusa::EagleLayer::init(target.config, 5);
    e2.fc_w[0] = INFINITY;
    medusa::save_eagle_layer(e2, dir.string(), target.path);
    medusa::CpuReferenceModel model(target);
    medusa::CpuTreeRunner runner(model);
    for (const auto shaping : {medusa::StepShaping::Fixed, medusa::StepShaping::Controlled}) {
        const medusa::Drafting d = medusa::build_drafting(medusa::EagleSpec{.layer = dir.string()},
                                                          {.file = target, .runner = runner}, nullptr, {}, shaping);
        REQUIRE(d.drafter);
        CHECK(d.drafter->kind() == medusa::DrafterKind::Plain);
        CHECK(d.members.empty());
        CHECK_FALSE(d.eagle);
        REQUIRE(d.warnings.size() == 1);
        CHECK_THAT(d.warnings[0], Catch::StartsWith((dir / "model.safetensors").string() + ": the EAGLE layer holds NaN"));
    }
    fs::remove_all(dir);
}
