// Medusa heads published by other tools: Medusa's medusa_lm_head.pt (torch.save's own files, in
// tests/data/torch, made by scripts/make_torch_fixtures.py), the legacy layout whose heads share
// the model's classifier, vLLM's layout, and our export to TGI's layout. Checkpoints are read
// without executing them: one that would run a command is refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "llm/medusa_heads_io.h"
#include "model/dequantize.h"
#include "model/load_model.h"
#include "model/safetensors_file.h"
#include "model/torch_checkpoint.h"
#include "model/torch_pickle.h"
#include "test_paths.h"

using namespace medusa;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(MEDUSA_SOURCE_DIR) + "/tests/data/torch/";

// The generator's formula (scripts/make_torch_fixtures.py) for element (i, j) of head k, block l.
std::vector<float> formula(int rows, int cols, int k, int l) {
    std::vector<float> v(size_t(rows) * cols);
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) v[size_t(i) * cols + j] = float(((i * 7 + j * 3 + 11 * k + 5 * l) % 17) - 8) / 64.0f;
    return v;
}

LlamaConfig stories_config() {
    LlamaConfig c;
    c.dim = 64, c.vocab_size = 512;
    return c;
}

fs::path temp_dir(const char* name) {
    const fs::path d = fs::temp_directory_path() / (std::string("medusa_heads_") + name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("Medusa's medusa_lm_head.pt loads as torch.save wrote it", "[heads-formats]") {
    const MedusaHeads h = load_medusa_heads(kFixtures + "medusa_lm_head.pt", stories_config());
    REQUIRE(h.count() == 2);
    REQUIRE(h.layers == 1);
    for (int k = 0; k < 2; ++k) {
        CHECK(h.heads[k].w1[0] == formula(64, 64, k, 0));
        CHECK(h.heads[k].b1[0] == formula(64, 1, k, 0));
        CHECK(h.heads[k].w2 == formula(512, 64, k, 1));
    }
    // The folder holding it works too, and heads that do not fit the model name the file.
    const fs::path dir = temp_dir("pt");
    fs::copy(kFixtures + "medusa_lm_head.pt", dir / "medusa_lm_head.pt");
    CHECK(load_medusa_heads(dir.string(), stories_config()).heads[1].w2 == formula(512, 64, 1, 1));
    LlamaConfig wrong = stories_config();
    wrong.dim = 128;
    CHECK_THAT(error_of([&] { load_medusa_heads(kFixtures + "medusa_lm_head.pt", wrong); }),
               Catch::Contains("medusa_lm_head.pt: Medusa heads have hidden size 64 but the model has 128"));
    fs::remove_all(dir);
}

TEST_CASE("legacy heads without a vocabulary projection share the model's classifier", "[heads-formats]") {
    const MedusaHeads h = load_medusa_heads(kFixtures + "legacy_medusa_lm_head.pt", stories_config());
    REQUIRE(h.count() == 3);
    REQUIRE(h.layers == 2);  // one ResBlock module repeated: both keys name the same storage
    for (int k = 0; k < 3; ++k) {
        CHECK(h.heads[k].w1[0] == formula(64, 64, k, 0));
        CHECK(h.heads[k].w1[1] == h.heads[k].w1[0]);
        CHECK(h.heads[k].b1[1] == formula(64, 1, k, 0));
        CHECK(h.heads[k].w2.empty());
    }
    const ModelFile model = load_model(test::model_path("stories260K.bin"));
    CHECK(h.w2_is_classifier(0, model));
    MedusaHeads copy = h;
    CHECK_THROWS_AS(copy.logits(0, std::vector<float>(64, 0.1f)), std::logic_error);
    copy.copy_shared_classifier(model);
    CHECK(copy.heads[2].w2 == dequantize(model.classifier()));
    CHECK(copy.logits(0, std::vector<float>(64, 0.1f)).size() == 512);
}

TEST_CASE("a checkpoint that would run code when unpickled is refused", "[heads-formats]") {
    // evil.pt pickles os.system: Python would run it on torch.load(weights_only=False).
    CHECK_THAT(error_of([] { load_medusa_heads(kFixtures + "evil.pt", stories_config()); }),
               Catch::Contains("evil.pt: the pickle names 'posix.system'") && Catch::Contains("refused"));
    // Opcodes a state dict never needs are refused by name, before anything is built from them.
    auto pickle_error = [](const std::string& pkl) {
        return error_of([&] { read_torch_state_dict(reinterpret_cast<const uint8_t*>(pkl.data()), pkl.size(), "x.pt"); });
    };
    using namespace std::string_literals;
    CHECK_THAT(pickle_error("\x80\x02" "cbuiltins\neval\n"s), Catch::Contains("names 'builtins.eval'"));
    CHECK_THAT(pickle_error("\x80\x02}q\x00(\x81"s), Catch::Contains("opcode 0x81") && Catch::Contains("refused"));
    CHECK_THAT(pickle_error("\x80\x02]q\x00."s), Catch::Contains("x.pt: the pickle holds no dict of tensors"));
    CHECK_THAT(pickle_error("\x80\x02}"s), Catch::Contains("x.pt: truncated"));
    CHECK_THAT(pickle_error("\x80\x02h\x05"s), Catch::Contains("memo entry 5 was never stored"));
    CHECK_THAT(error_of([] { read_torch_checkpoint(std::make_shared<std::vector<uint8_t>>(100, 7), "y.pt"); }),
               Catch::Contains("y.pt: not a PyTorch checkpoint"));
}

TEST_CASE("vLLM's Medusa layout loads, with its own or one shared lm_head", "[heads-formats]") {
    const fs::path dir = temp_dir("vllm");
    std::vector<std::vector<float>> keep;
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& name, std::vector<float> v, std::vector<int64_t> shape) {
        keep.push_back(std::move(v));
        tensors.push_back({name, DType::F32, std::move(shape), 0, reinterpret_cast<const uint8_t*>(keep.back().data()),
                           keep.back().size() * 4});
    };
    keep.reserve(16);
    for (int k = 0; k < 2; ++k) add("blocks." + std::to_string(k) + ".layers.0.weight", formula(64, 64, k, 0), {64, 64});
    add("lm_heads.0.weight", formula(512, 64, 0, 1), {512, 64});
    write_safetensors((dir / "model.safetensors").string(), tensors);
    std::ofstream(dir / "config.json") << R"({"model_type": "medusa", "num_heads": 2, "num_hidden_layers": 1,
                                              "original_lm_head": true, "medusa_fc_bias": false})";
    const MedusaHeads shared = load_medusa_heads(dir.string(), stories_config());
    REQUIRE(shared.count() == 2);
    CHECK(shared.heads[1].w1[0] == formula(64, 64, 1, 0));
    CHECK(shared.heads[1].b1[0] == std::vector<float>(64, 0.0f));  // no medusa_fc_bias: no biases
    CHECK(shared.heads[1].w2 == formula(512, 64, 0, 1));           // lm_heads.0 serves every head
    // Without original_lm_head each head needs its own; one missing is an error naming it.
    std::ofstream(dir / "config.json") << R"({"num_heads": 2, "num_hidden_layers": 1})";
    CHECK_THAT(error_of([&] { load_medusa_heads(dir.string(), stories_config()); }),
               Catch::Contains("1 of 2 heads have their own vocabulary projection"));
    add("lm_heads.1.weight", formula(512, 64, 1, 1), {512, 64});
    write_safetensors((dir / "model.safetensors").string(), tensors);
    CHECK(load_medusa_heads(dir.string(), stories_config()).heads[1].w2 == formula(512, 64, 1, 1));
    fs::remove_all(dir);
}

TEST_CASE("heads export to TGI's layout and load back", "[heads-formats]") {
    const MedusaHeads pt = load_medusa_heads(kFixtures + "medusa_lm_head.pt", stories_config());
    const MedusaHeads legacy = load_medusa_heads(kFixtures + "legacy_medusa_lm_head.pt", stories_config());
    const fs::path dir = temp_dir("tgi");
    CHECK_THROWS_AS(save_medusa_heads(pt, dir.string(), {HeadsExport::Tgi, ""}), std::invalid_argument);
    for (const MedusaHeads* h : {&pt, &legacy}) {
        save_medusa_heads(*h, dir.string(), {HeadsExport::Tgi, "karpathy/tinyllamas"});
        const auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
        CHECK(config["medusa_num_heads"] == h->count());
        CHECK(config["medusa_num_layers"] == h->layers);
        CHECK(config["base_model_name_or_path"] == "karpathy/tinyllamas");
        CHECK_FALSE(config.contains("architectures"));  // TGI would read the file as another speculator
        const SafetensorsFile f = SafetensorsFile::open((dir / "medusa_lm_head.safetensors").string());
        CHECK(f.get("0.0.linear.weight").type == DType::F16);
        CHECK((f.find("0." + std::to_string(h->layers) + ".weight") != nullptr) == !h->heads[0].w2.empty());
        const MedusaHeads back = load_medusa_heads(dir.string(), stories_config());
        REQUIRE(back.count() == h->count());
        CHECK(back.heads.back().w1.back() == h->heads.back().w1.back());  // the values are exact in f16
        CHECK(back.heads.back().w2 == h->heads.back().w2);
    }
    fs::remove_all(dir);
}

TEST_CASE("published heads decode on the GPU exactly as plain greedy decoding", "[heads-formats]") {
    // Greedy Medusa keeps only what the model itself would say, whatever the heads guess.
    const std::string base = "generate -m " + test::model_path("stories260K.bin") + " --tokenizer " +
                             test::model_path("tok512.model") + " -p 'Once upon a time' -n 40 --temp 0 ";
    const auto plain = test::run_medusa(base);
    REQUIRE(plain.exit_code == 0);
    for (const char* heads : {"medusa_lm_head.pt --tree chain:2", "legacy_medusa_lm_head.pt --tree dense:2,2,1"}) {
        CAPTURE(heads);
        const auto r = test::run_medusa(base + "--heads " + kFixtures + heads);
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == plain.out);
        CHECK(r.err.find("medusa (") != std::string::npos);
    }
}

TEST_CASE("medusa export-heads writes TGI's layout from a .pt file", "[heads-formats]") {
    const fs::path dir = temp_dir("export");
    const std::string base = "export-heads -m " + test::model_path("stories260K.bin") + " --out " + dir.string();
    auto r = test::run_medusa(base + " --heads " + kFixtures + "legacy_medusa_lm_head.pt --layout tgi --base-model x/y");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // Two residual blocks: TGI's fallback without projections takes one, so the classifier is written out.
    const SafetensorsFile f = SafetensorsFile::open((dir / "medusa_lm_head.safetensors").string());
    REQUIRE(f.find("2.2.weight"));
    const ModelFile model = load_model(test::model_path("stories260K.bin"));
    const auto classifier = dequantize(model.classifier());
    const auto written = dequantize(f.get("2.2.weight"));
    float worst = 0;
    for (size_t i = 0; i < written.size(); ++i) worst = std::max(worst, std::abs(written[i] - classifier[i]));
    CHECK(worst < 1e-3f);  // f16
    r = test::run_medusa(base + " --heads " + kFixtures + "medusa_lm_head.pt --layout tgi");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--base-model") != std::string::npos);
    r = test::run_medusa(base + " --heads " + kFixtures + "evil.pt");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("evil.pt: the pickle names 'posix.system'") != std::string::npos);
    fs::remove_all(dir);
}
