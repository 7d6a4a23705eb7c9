// Hugging Face folders of Llama 3 (rope_scaling "llama3") and Qwen2 (q/k/v biases) with a
// byte-level tokenizer.json: the arch oracles' weights written as Transformers stores them
// (rotate_half row order, HF names, config.json), loaded, and run against the GGUF files'
// own forward pass, which test_gguf_forward checks against llama.cpp.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <list>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/bpe_tokenizer.h"
#include "model/dequantize.h"
#include "model/load_model.h"
#include "model/rope_rows.h"
#include "model/safetensors_file.h"
#include "test_paths.h"

using namespace medusa;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Writes `gguf` (loaded: rows in adjacent-pair order) as an HF folder: rows back in rotate_half order.
void write_hf_folder(const ModelFile& gguf, const fs::path& dir, const json& config) {
    fs::create_directories(dir);
    const LlamaConfig& c = gguf.config;
    std::list<std::vector<uint8_t>> keep;
    std::vector<Tensor> tensors;
    auto add = [&](const std::string& hf, const Tensor& t, int rope_heads) {
        const auto v = dequantize(t);
        const uint8_t* data = reinterpret_cast<const uint8_t*>(v.data());
        std::vector<uint8_t> bytes(data, data + v.size() * 4);
        if (rope_heads > 0) bytes = permute_rope_rows(bytes.data(), t.shape[0], bytes.size() / size_t(t.shape[0]), rope_heads, true);
        keep.push_back(std::move(bytes));
        tensors.push_back({hf, DType::F32, t.shape, 0, keep.back().data(), keep.back().size()});
    };
    add("model.embed_tokens.weight", gguf.get("tok_embeddings"), 0);
    add("model.norm.weight", gguf.get("norm"), 0);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
        add(h + "input_layernorm.weight", gguf.get(p + "attention_norm"), 0);
        add(h + "post_attention_layernorm.weight", gguf.get(p + "ffn_norm"), 0);
        add(h + "self_attn.q_proj.weight", gguf.get(p + "wq"), c.n_heads);
        add(h + "self_attn.k_proj.weight", gguf.get(p + "wk"), c.n_kv_heads);
        add(h + "self_attn.v_proj.weight", gguf.get(p + "wv"), 0);
        add(h + "self_attn.o_proj.weight", gguf.get(p + "wo"), 0);
        add(h + "mlp.gate_proj.weight", gguf.get(p + "w1"), 0);
        add(h + "mlp.down_proj.weight", gguf.get(p + "w2"), 0);
        add(h + "mlp.up_proj.weight", gguf.get(p + "w3"), 0);
        if (c.qkv_bias) {
            add(h + "self_attn.q_proj.bias", gguf.get(p + "bq"), c.n_heads);
            add(h + "self_attn.k_proj.bias", gguf.get(p + "bk"), c.n_kv_heads);
            add(h + "self_attn.v_proj.bias", gguf.get(p + "bv"), 0);
        }
    }
    write_safetensors((dir / "model.safetensors").string(), tensors);
    std::ofstream(dir / "config.json") << config.dump();
    // A byte-level tokenizer.json of the model's 512 ids: GPT-2's 256 byte symbols, then 256 merges
    // of pairs of letters.
    json vocab = json::object(), merges = json::array();
    for (int b = 0; b < 256; ++b) vocab[byte_to_unicode(uint8_t(b))] = b;
    for (int i = 0; i < 256; ++i) {
        const std::string a(1, char('a' + i / 16)), z(1, char('a' + i % 16));
        merges.push_back(a + " " + z);
        vocab[a + z] = 256 + i;
    }
    const json tok = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
                      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}};
    std::ofstream(dir / "tokenizer.json") << tok.dump();
}

fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("medusa_hf_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    return d;
}

// Logits of the last prompt position.
float logits_diff(LanguageModel& a, LanguageModel& b) {
    auto la = a.logits(3), lb = b.logits(3);
    return test::max_abs_diff(la.data(), lb.data(), la.size());
}

}  // namespace

TEST_CASE("Hugging Face folders of Llama 3 and Qwen2 run as their GGUF files do", "[hf-arch]") {
    test::ValidationGuard guard;
    const json base = {{"hidden_size", 256}, {"intermediate_size", 256}, {"num_hidden_layers", 2},
                       {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 512},
                       {"max_position_embeddings", 256}, {"tie_word_embeddings", true}, {"bos_token_id", 1},
                       {"eos_token_id", 2}};
    json llama3 = base, qwen2 = base;
    llama3.update({{"model_type", "llama"}, {"rope_theta", 500000.0}, {"rms_norm_eps", 1e-5},
                   {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                                     {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}}}});
    qwen2.update({{"model_type", "qwen2"}, {"rope_theta", 1000000.0}, {"rms_norm_eps", 1e-6}});
    for (const auto& [stem, config] : {std::pair{"llama3", llama3}, {"qwen2", qwen2}}) {
        CAPTURE(stem);
        const ModelFile gguf = load_model(test::ggml_path(std::string("arch/oracle-c-") + stem + "-f32.gguf"));
        const fs::path dir = temp_dir(stem);
        write_hf_folder(gguf, dir, config);
        const ModelFile hf = load_model(dir.string());
        CHECK(hf.config.qkv_bias == gguf.config.qkv_bias);
        CHECK(hf.config.rope_theta == gguf.config.rope_theta);
        CHECK(hf.config.tied_classifier);
        // rope_freqs from config.json's rope_scaling, as llama.cpp's converter computed the file's.
        REQUIRE((hf.find("rope_freqs") != nullptr) == (gguf.find("rope_freqs") != nullptr));
        if (const Tensor* f = hf.find("rope_freqs")) {
            const auto got = dequantize(*f), want = dequantize(gguf.get("rope_freqs"));
            for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= 1e-6f * want[i]);
        }
        REQUIRE(hf.embedded_tokenizer.bpe);
        CHECK(hf.embedded_tokenizer.bpe->tokens.size() == 512);
        const std::vector<int> prompt = {1, 400, 200, 300};
        CpuReferenceModel ref(gguf), cpu(hf);
        GpuModel gpu(test::gpu_context(), hf);
        ref.forward(TokenBlock::causal(0, prompt));
        cpu.forward(TokenBlock::causal(0, prompt));
        gpu.forward(TokenBlock::causal(0, prompt));
        CHECK(logits_diff(cpu, ref) < 1e-4f);
        CHECK(logits_diff(gpu, ref) < 1e-4f);
        // The CLI reads the folder's tokenizer.json for the prompt and the reply.
        const auto r = test::run_medusa("generate -m " + dir.string() + " -p 'abcab' -n 6 --temp 0");
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.rfind("abcab", 0) == 0);
        const auto t = test::run_medusa("tokenize -m " + dir.string() + " -p 'abcab'");
        CHECK(t.out == "[257, 99, 257]\n");  // "ab" (merge 1), "c", "ab": no merge joins "ab" and "c"
        fs::remove_all(dir);
    }
}
