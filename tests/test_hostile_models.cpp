// Model files that load but would decode wrongly, or slowly enough to be a denial of service: a
// bias llama.cpp applies is applied here too or the file is refused (never decoded as if it were
// absent), and a sharded index of a quarter of a million entries is checked in linear time.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_rusage.h"
#include "file_text.h"
#include "model/gguf_writer.h"
#include "model/hf_loader.h"
#include "model/load_model.h"
#include "model/safetensors_file.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
namespace fs = std::filesystem;
using medusa::test::model_path;
using medusa::test::read_text;
using medusa::test::TempDir;
using medusa::test::write_text;

namespace {

// stories260K with q/k/v biases of its own in every layer, written as a GGUF llama file.
void write_biased_gguf(const fs::path& out) {
    ModelFile m = load_model(model_path("stories260K.bin"));
    static std::vector<std::vector<float>> values;  // alive while the writer reads them
    values.clear();
    const int L = m.config.n_layers;
    for (int l = 0; l < L; ++l)
        for (const auto& [name, n] : {std::pair<std::string, int>{"bq", m.config.dim}, {"bk", m.config.kv_dim()},
                                      {"bv", m.config.kv_dim()}}) {
            auto& v = values.emplace_back(size_t(n));
            for (int i = 0; i < n; ++i) v[size_t(i)] = 0.6f * std::sin(float(i * 7 + l * 3 + name[1]));
            m.tensors.push_back(f32_tensor("layers." + std::to_string(l) + "." + name, v));
        }
    m.config.qkv_bias = true;
    write_gguf(m, Tokenizer::from_file(model_path("tok512.model")), out.string());
}

std::vector<std::string> greedy(const std::string& model, bool cpu) {
    std::vector<std::string> a = {"generate", "-m", model, "--tokenizer", model_path("tok512.model"), "-p",
                                  "Once upon a time", "-n", "30", "--temp", "0"};
    if (cpu) a.push_back("--cpu");
    return a;
}

}  // namespace

TEST_CASE("q/k/v biases in a GGUF llama file are applied, on the GPU as on the CPU", "[hostile-models]") {
    TempDir dir("medusa-biases");
    const fs::path biased = dir.path / "biased.gguf";
    write_biased_gguf(biased);
    const ModelFile m = load_model(biased.string());
    CHECK(m.config.qkv_bias);
    REQUIRE(m.find("layers.4.bv"));

    auto run = [](const std::vector<std::string>& args) {
        const auto r = medusa::test::run_limited(medusa::test::medusa_bin(), args, 60);
        CAPTURE(r.err);
        REQUIRE(r.exit_code == 0);
        return r;
    };
    // The text is stdout's; run_limited keeps stderr only, so the trace carries the tokens.
    auto tokens = [&](const std::string& model, bool cpu) {
        const fs::path trace = dir.path / ("trace-" + std::to_string(cpu) + fs::path(model).filename().string());
        auto args = greedy(model, cpu);
        args.insert(args.end(), {"--trace", trace.string()});
        run(args);
        std::vector<int> emitted;
        std::istringstream lines(read_text(trace));
        for (std::string line; std::getline(lines, line);) {
            const nlohmann::json step = nlohmann::json::parse(line);
            for (int t : step["emitted"]) emitted.push_back(t);
        }
        return emitted;
    };
    const std::vector<int> plain = tokens(model_path("stories260K.bin"), false);
    const std::vector<int> gpu = tokens(biased.string(), false), cpu = tokens(biased.string(), true);
    REQUIRE(gpu.size() == 30);
    CHECK(gpu == cpu);      // both engines apply them alike
    CHECK(gpu != plain);    // and they change what the model writes
}

TEST_CASE("a bias the engine does not apply is refused naming the file and the tensor", "[hostile-models]") {
    TempDir dir("medusa-biases");
    const fs::path biased = dir.path / "biased.gguf";
    write_biased_gguf(biased);
    // The same file with layer 0's q bias renamed to a feed-forward bias (the same length).
    std::string bytes = read_text(biased);
    const size_t at = bytes.find("blk.0.attn_q.bias");
    REQUIRE(at != std::string::npos);
    bytes.replace(at, 17, "blk.0.ffn_up.bias");
    const fs::path ffn = dir.path / "ffn-bias.gguf";
    write_text(ffn, bytes);
    const auto r = medusa::test::run_medusa_limited({"info", "-m", ffn.string()});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(ffn.string() + ": tensor 'blk.0.ffn_up.bias' is a bias this engine does not apply"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

    // Hugging Face: mlp_bias in config.json, or an o_proj bias beside a llama config.
    const std::string config = R"({"hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 5,
        "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 512)";
    CHECK_THROWS_WITH(load_hf_from_parts({}, config + R"(, "mlp_bias": true})", "hf-dir"),
                      Catch::StartsWith("hf-dir: config.json: mlp_bias") && Catch::Contains("not supported"));
    std::vector<float> zeros(64, 0.0f);
    const auto shard = std::make_shared<const std::vector<uint8_t>>(
        serialize_safetensors({f32_tensor("model.layers.0.self_attn.o_proj.bias", zeros)}));
    std::vector<SafetensorsFile> shards;
    shards.push_back(SafetensorsFile::from_memory(shard, "hf-dir/model.safetensors"));
    CHECK_THROWS_WITH(load_hf_from_parts(std::move(shards), config + "}", "hf-dir"),
                      Catch::StartsWith("hf-dir/model.safetensors: tensor 'model.layers.0.self_attn.o_proj.bias' is a "
                                        "bias this engine does not apply"));
}

TEST_CASE("a sharded index of 200,000 entries is checked in linear time", "[hostile-index]") {
    // Each entry names an empty tensor of one shard: the index and the shard's header are valid
    // and large, and nothing in them is a model tensor. Checking each entry by scanning the shard
    // took minutes; the 20 s alarm of run_limited ends a run that does.
    TempDir dir("medusa-index");
    const int n = 200'000;
    std::string index = R"({"metadata": {}, "weight_map": {)", header = "{";
    for (int i = 0; i < n; ++i) {
        const std::string name = "t." + std::to_string(i);
        index += (i ? ", \"" : "\"") + name + "\": \"model-1.safetensors\"";
        header += (i ? ", \"" : "\"") + name + R"(": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]})";
    }
    index += "}}";
    header += "}";
    header += std::string((8 - header.size() % 8) % 8, ' ');
    write_text(dir.path / "model.safetensors.index.json", index);
    std::string shard(8, '\0');
    const uint64_t len = header.size();
    std::memcpy(shard.data(), &len, 8);
    write_text(dir.path / "model-1.safetensors", shard + header);
    write_text(dir.path / "config.json", R"({"hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 5,
        "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 512})");
    const auto r = medusa::test::run_medusa_limited({"info", "-m", dir.path.string()});
    CAPTURE(r.err);
    CHECK(r.exit_code == 1);  // not 128 + SIGALRM
    CHECK_THAT(r.err, Catch::Contains("tensor 'tok_embeddings' is missing"));
}
