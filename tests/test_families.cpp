// Qwen3, Gemma 3 and Phi-3 against llama.cpp: tiny random-weight GGUF files of each family with
// every feature live (tests/data/arch, written by llama.cpp's gguf-py; their logits computed by
// llama.cpp's libllama and by an independent float64 reference, scripts/make_arch_fixtures.py),
// decoded by the CPU reference and the GPU in both kernel layouts; each feature shown to matter by
// switching it off; local layers' ring caches and windows under trees; the families' Hugging Face
// folders; the memory a sliding window saves.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>

#include "block_params_fixture.h"
#include "decode/draft_model_drafter.h"
#include "decode/eagle_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decode_support.h"
#include "gpu_fixture.h"
#include "greedy_reference.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "llm/model_memory.h"
#include "model/dequantize.h"
#include "model/gguf_loader.h"
#include "model/gguf_writer.h"
#include "model/load_model.h"
#include "model/rope_rows.h"
#include "model/safetensors_file.h"
#include "model/synthetic_model.h"
#include "oracle_json.h"
#include "serve_process.h"
#include "xz_file.h"

using namespace medusa;

namespace {

std::string arch_path(const std::string& name) { return std::string(MEDUSA_SOURCE_DIR) + "/tests/data/arch/" + name; }

// A run's logits file (`stem`.logits.json.xz).
nlohmann::json oracle(const std::string& stem) {
    const auto bytes = test::read_xz(arch_path(stem + ".logits.json.xz"));
    return nlohmann::json::parse(bytes->begin(), bytes->end());
}

std::vector<int> ints(const nlohmann::json& a) { return a.get<std::vector<int>>(); }

double max_abs(std::span<const float> got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double m = 0;
    for (size_t i = 0; i < want.size(); ++i) m = std::max(m, std::fabs(double(got[i]) - want[i]));
    return m;
}

int best(std::span<const float> l) { return int(std::max_element(l.begin(), l.end()) - l.begin()); }

struct Engine {
    std::string name;
    std::unique_ptr<LanguageModel> model;
};

// The CPU reference and the GPU in both kernel layouts, over `context` positions (0: the file's).
std::vector<Engine> engines(const ModelFile& file, int context = 0) {
    std::vector<Engine> e;
    e.push_back({"cpu-reference", std::make_unique<CpuReferenceModel>(file, context)});
    for (const KernelLayouts layouts : {KernelLayouts::Gpu, KernelLayouts::Cpu})
        e.push_back({layouts == KernelLayouts::Gpu ? "gpu layouts" : "cpu layouts",
                     std::make_unique<GpuModel>(test::gpu_context(), file,
                                                GpuModelOptions{.context = context, .layouts = layouts})});
    return e;
}

// Teacher-forced along llama.cpp's greedy path (the JSON's "greedy"): the logits at every step
// against `want_steps`, and the argmax against llama.cpp's ids. Returns the largest difference.
double run_path(LanguageModel& m, const nlohmann::json& j, const nlohmann::json& want_steps, std::vector<int>* ids) {
    const std::vector<int> prompt = ints(j["prompt"]), greedy = ints(j["greedy"]);
    m.forward(TokenBlock::causal(0, prompt));
    double worst = 0;
    for (size_t k = 0; k < greedy.size(); ++k) {
        auto logits = m.logits(k == 0 ? int(prompt.size()) - 1 : 0);
        worst = std::max(worst, max_abs(logits, test::json_floats(want_steps[k])));
        if (ids) ids->push_back(best(logits));
        m.forward(TokenBlock::causal(int(prompt.size() + k), {greedy[k]}));
    }
    return worst;
}

struct Oracle {
    std::string stem;        // the run's logits file
    bool exact_gelu_only;    // llama.cpp's GELU table: compare logits with the float64 reference
    std::string gguf = "";   // the model file, when not the one the run names
    std::function<void(ModelFile&)> as_run = [](ModelFile&) {};  // the file as llama.cpp ran it
};

// Every F32 run llama.cpp made. gemma3-nowindow is gemma3-f32 without its window key, which the
// configuration here switches off in the same way (every layer global, with the global RoPE).
const std::vector<Oracle>& f32_oracles() {
    static const std::vector<Oracle> o = {
        {"qwen3-f32", false},
        {"gemma3-f32", true},
        {"gemma3-nowindow-f32", true, "gemma3-f32.gguf", [](ModelFile& m) { m.config.arch.sliding_window = 0; }},
        {"phi3-f32.short", false},
        {"phi3-f32.long", false},
    };
    return o;
}

}  // namespace

TEST_CASE("Qwen3, Gemma 3 and Phi-3 files give llama.cpp's logits at every step and its greedy ids", "[families]") {
    test::ValidationGuard guard;
    for (const Oracle& o : f32_oracles()) {
        CAPTURE(o.stem);
        const auto j = oracle(o.stem);
        ModelFile file = load_model(arch_path(o.gguf.empty() ? j["file"].get<std::string>() : o.gguf));
        o.as_run(file);
        const std::vector<int> greedy = ints(j["greedy"]);
        REQUIRE(greedy.size() == 24);
        // Gemma: llama.cpp's CPU GELU reads an fp16 table (its logits move by up to ~0.1), so the
        // logits are the exact-GELU float64 reference's and the ids llama.cpp's.
        const nlohmann::json& want = o.exact_gelu_only ? j["reference_f64"]["step_logits"] : j["step_logits"];
        for (Engine& e : engines(file, j["n_ctx"].get<int>())) {
            CAPTURE(e.name);
            std::vector<int> ids;
            CHECK(run_path(*e.model, j, want, &ids) < 1e-3);
            CHECK(ids == greedy);
        }
    }
}

TEST_CASE("quantized Qwen3, Gemma 3 and Phi-3 files match a reference that dequantizes the weights", "[families]") {
    test::ValidationGuard guard;
    for (const char* stem : {"qwen3-q8_0", "qwen3-q4_0", "gemma3-q8_0", "phi3-q8_0"}) {
        CAPTURE(stem);
        const auto j = oracle(stem);
        const ModelFile file = load_model(arch_path(std::string(stem) + ".gguf"));
        const auto& ref = j["reference_f64"];
        for (Engine& e : engines(file, j["n_ctx"].get<int>())) {
            CAPTURE(e.name);
            // Weights dequantized as gguf-py does, activations in f32: the reference's logits.
            CHECK(run_path(*e.model, j, ref["step_logits"], nullptr) < 1e-3);
        }
    }
}

TEST_CASE("each family feature is live: switched off, the logits leave llama.cpp's", "[families]") {
    // The float64 reference's own sensitivities (what switching a feature off moves its logits by),
    // and this engine's: the CPU reference with the feature switched off in the model's
    // configuration no longer matches llama.cpp, while the file as it is does (the case above).
    struct Off {
        const char* oracle;
        const char* feature;  // the JSON's sensitivity name
        std::function<void(ModelFile&)> switch_off;
    };
    const std::vector<Off> offs = {
        {"qwen3-f32", "q_norm", [](ModelFile& m) { m.config.arch.qk_norm = false; }},
        {"gemma3-f32", "window", [](ModelFile& m) { m.config.arch.sliding_window = 0; }},
        {"gemma3-f32", "embedding_scale", [](ModelFile& m) { m.config.arch.embedding_scale = 1.0f; }},
        {"gemma3-f32", "post_attention_norm", [](ModelFile& m) { m.config.arch.post_norms = false; }},
        {"gemma3-f32", "silu_instead_of_gelu", [](ModelFile& m) { m.config.arch.activation = GateActivation::Silu; }},
        {"gemma3-f32", "swa_rope_base", [](ModelFile& m) { m.config.arch.local_rope_theta = m.config.rope_theta; }},
        {"gemma3-f32", "global_linear_scaling", [](ModelFile& m) { m.config.rope_position_scale = 1.0f; }},
        {"phi3-f32.long", "partial_rotary", [](ModelFile& m) { m.config.arch.rope_dims = 0; }},
        {"phi3-f32.long", "attn_factor", [](ModelFile& m) { m.config.arch.rope_attn_factor = 1.0f; }},
    };
    for (const Off& o : offs) {
        CAPTURE(o.oracle, o.feature);
        const auto j = oracle(o.oracle);
        CHECK(j["sensitivity"][o.feature].get<double>() > 1e-2);
        ModelFile file = load_model(arch_path(j["file"].get<std::string>()));
        o.switch_off(file);
        if (std::string(o.feature) == "partial_rotary") file.tensors.erase(
            std::remove_if(file.tensors.begin(), file.tensors.end(),
                           [](const Tensor& t) { return t.name.rfind("rope_factors", 0) == 0; }),
            file.tensors.end());
        CpuReferenceModel cpu(file, j["n_ctx"].get<int>());
        CHECK(run_path(cpu, j, j["reference_f64"]["step_logits"], nullptr) > 1e-2);
    }
    // LongRoPE's factors are chosen by the context: the long run's file at the short run's
    // context gives the short run's logits, not the long one's.
    const auto shorter = oracle("phi3-f32.short");
    const auto longer = oracle("phi3-f32.long");
    const ModelFile phi = load_model(arch_path("phi3-f32.gguf"));
    CpuReferenceModel at_short(phi, shorter["n_ctx"].get<int>());
    CHECK(run_path(at_short, longer, longer["step_logits"], nullptr) > 1e-2);
}

TEST_CASE("local layers keep a ring of slots: GPU decoding past the ring and trees over it match the CPU", "[families]") {
    test::ValidationGuard guard;
    // Gemma 3's file has a window of 8; over 400 positions a local layer's ring holds 8 + 256
    // slots, so decoding to the end wraps it once (the CPU reference keeps every slot).
    const ModelFile file = load_model(arch_path("gemma3-f32.gguf"));
    const int context = 400;
    REQUIRE(KvCache::ring_rows(file.config.arch.sliding_window, context) < context);
    CpuReferenceModel cpu(file, context);
    std::vector<std::unique_ptr<GpuModel>> gpus;
    for (const KernelLayouts layouts : {KernelLayouts::Gpu, KernelLayouts::Cpu})
        gpus.push_back(std::make_unique<GpuModel>(test::gpu_context(), file,
                                                  GpuModelOptions{.context = context, .layouts = layouts}));
    std::vector<int> seq = {1, 400, 200, 300};
    cpu.forward(TokenBlock::causal(0, seq));
    for (auto& g : gpus) g->forward(TokenBlock::causal(0, seq));
    double worst = 0;
    int row = int(seq.size()) - 1;
    while (int(seq.size()) < 360) {
        const int next = best(cpu.logits(row));
        for (auto& g : gpus) worst = std::max(worst, max_abs(g->logits(row), {cpu.logits(row).begin(), cpu.logits(row).end()}));
        seq.push_back(next);
        const TokenBlock b = TokenBlock::causal(int(seq.size()) - 1, {next});
        cpu.forward(b);
        for (auto& g : gpus) g->forward(b);
        row = 0;
    }
    CHECK(worst < 1e-3);
    // A tree over the wrapped rings: each node's logits as the CPU's.
    const TokenBlock tree = test::random_tree_block(int(seq.size()), 24, file.config.vocab_size, 5);
    cpu.forward(tree);
    for (auto& g : gpus) {
        g->forward(tree);
        for (int t = 0; t < tree.size(); ++t) CHECK(max_abs(g->logits(t), {cpu.logits(t).begin(), cpu.logits(t).end()}) < 1e-3);
    }
}

TEST_CASE("a sliding window's ring takes a fifth of the KV memory of full caches at Gemma 3 4B's shape", "[families]") {
    ModelFile gemma = synthetic_model_shapes("gemma3-4b", DType::Q4_0);
    const uint64_t rings = plan_model_memory(gemma, 32768).kv_cache;
    gemma.config.arch.sliding_window = 0;
    const uint64_t full = plan_model_memory(gemma, 32768).kv_cache;
    const double ratio = double(rings) / double(full);
    INFO("KV cache: " << rings << " bytes with rings, " << full << " without: " << ratio);
    // 5 global layers of 34 at 32,768 positions, 29 rings of 1,024 + 256 slots.
    CHECK(ratio == Approx((5 * 32768.0 + 29 * 1280.0) / (34 * 32768.0)).epsilon(1e-9));
    CHECK(ratio < 0.2);
}

namespace {

// Every drafter on `target` (decoded over `context` positions), each against plain greedy decoding
// on the same engine, to the end of the context: untrained and random Medusa heads, a draft model
// of the same family (`draft`), n-gram lookup, and fresh EAGLE-2 and EAGLE-3 layers.
void check_family_drafters(const std::string& target_name, const std::string& draft_name, int context) {
    test::ValidationGuard guard;
    CAPTURE(target_name, draft_name);
    const ModelFile file = load_model(arch_path(target_name)), draft_file = load_model(arch_path(draft_name));
    const GpuModelOptions options{.context = context};
    GpuModel model(test::gpu_context(), file, options), draft(test::gpu_context(), draft_file, options);
    GpuTreeRunner runner(model);
    const std::vector<int> prompt = {1, 400, 200, 300, 17, 99};
    const auto expected = test::greedy_ar(model, prompt, 100000);
    REQUIRE(int(expected.size()) == model.config().seq_len - int(prompt.size()) + 1);
    auto check = [&](const std::string& what, Drafter& d) {
        INFO(what);
        GenerationStats stats;
        CHECK(test::decode(runner, d, test::greedy_options(100000), prompt, &stats) == expected);
        CHECK(stats.stop_reason == StopReason::Context);
    };
    NoDrafter plain;
    check("plain", plain);
    const TreeBuffers tree = build_tree_buffers(load_tree("dense:2,2,2"), 10);
    const MedusaHeads init = MedusaHeads::init_from_model(file, 3), noise = test::random_heads(file, 3, 17);
    MedusaDrafter medusa_init(runner, file, init, tree), medusa_noise(runner, file, noise, tree);
    check("medusa, init heads", medusa_init);
    check("medusa, random heads", medusa_noise);
    DraftModelDrafter chain(draft, {.gamma = 4, .branches = 1});
    check("draft chain", chain);
    DraftModelDrafter branches(draft, {.gamma = 3, .branches = 2});
    check("draft tree", branches);
    NgramDrafter ngram({.max_tokens = 8, .branches = 2});
    check("n-gram", ngram);
    EagleOptions o;
    o.top_k = 4, o.depth = 4, o.nodes = 20;
    const EagleLayer eagle = EagleLayer::init(file.config, 3);
    auto eagle_runner = runner.eagle_runner(file, eagle);
    EagleDrafter eagle2(*eagle_runner, o);
    check("EAGLE-2", eagle2);
    std::vector<int> draft_vocab;
    for (int t = 0; t < file.config.vocab_size; t += 3) draft_vocab.push_back(t);
    const std::vector<float> norm = dequantize(file.get("norm")), head = dequantize(file.classifier());
    const EagleLayer eagle3 =
        EagleLayer::init_eagle3(file.config, eagle3_default_layers(file.config.n_layers), draft_vocab, norm, head, 4);
    auto eagle3_runner = runner.eagle_runner(file, eagle3);
    EagleDrafter eagle3_drafter(*eagle3_runner, o);
    check("EAGLE-3", eagle3_drafter);
}

}  // namespace

TEST_CASE("every drafter gives plain greedy text to the end of the context: Qwen3", "[families]") {
    check_family_drafters("qwen3-f32.gguf", "qwen3-q4_0.gguf", 0);
}
TEST_CASE("every drafter gives plain greedy text to the end of the context: Gemma 3, its rings wrapped", "[families]") {
    check_family_drafters("gemma3-f32.gguf", "gemma3-q8_0.gguf", 400);
}
// 300 positions of the file's 1024: past LongRoPE's original 256, so the long factors.
TEST_CASE("every drafter gives plain greedy text to the end of the context: Phi-3", "[families]") {
    check_family_drafters("phi3-f32.gguf", "phi3-q8_0.gguf", 300);
}

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A GGUF fixture written as Transformers stores the family: HF names, q/k rows (and q/k norm
// gains) in rotate_half order, Gemma's norms as w with the model multiplying by 1 + w, Phi-3's
// q|k|v and gate|up fused; config.json as the family's.
class HfFolder {
public:
    explicit HfFolder(const ModelFile& gguf) : g_(gguf) {}
    // The parts stacked by rows, each part's rows in rotate_half order over `heads` heads (0: as they are).
    void add(const std::string& name, const std::vector<std::pair<const Tensor*, int>>& parts, bool gain = false) {
        std::vector<uint8_t> bytes;
        int64_t rows = 0;
        for (const auto& [t, heads] : parts) {
            std::vector<float> v = dequantize(*t);
            if (gain && g_.config.arch.family == ModelFamily::Gemma3)
                for (float& x : v) x -= 1.0f;
            std::vector<uint8_t> b(reinterpret_cast<const uint8_t*>(v.data()),
                                   reinterpret_cast<const uint8_t*>(v.data()) + v.size() * 4);
            if (heads > 0) b = permute_rope_rows(b.data(), t->shape[0], b.size() / size_t(t->shape[0]), heads, true,
                                                 rotated_dims(g_.config));
            bytes.insert(bytes.end(), b.begin(), b.end());
            rows += t->shape[0];
        }
        std::vector<int64_t> shape = parts[0].first->shape;
        shape[0] = rows;
        keep_.push_back(std::move(bytes));
        tensors_.push_back({name, DType::F32, shape, 0, keep_.back().data(), keep_.back().size()});
    }
    void write(const fs::path& dir, const json& config) {
        fs::create_directories(dir);
        write_safetensors((dir / "model.safetensors").string(), tensors_);
        std::ofstream(dir / "config.json") << config.dump();
    }

private:
    const ModelFile& g_;
    std::list<std::vector<uint8_t>> keep_;
    std::vector<Tensor> tensors_;
};

// `model` prefixes the decoder's tensors ("model." or Gemma3ForConditionalGeneration's
// "language_model.model."), `head` names the LM head.
void write_family_folder(const ModelFile& g, const fs::path& dir, const json& config, const std::string& model = "model.",
                         const std::string& head = "lm_head.weight") {
    const LlamaConfig& c = g.config;
    const bool gemma = c.arch.family == ModelFamily::Gemma3, phi = c.arch.family == ModelFamily::Phi3;
    HfFolder f(g);
    f.add(model + "embed_tokens.weight", {{&g.get("tok_embeddings"), 0}});
    f.add(model + "norm.weight", {{&g.get("norm"), 0}}, true);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".", h = model + p;
        auto t = [&](const char* n) { return &g.get(p + n); };
        f.add(h + "input_layernorm.weight", {{t("attention_norm"), 0}}, true);
        if (gemma) {
            f.add(h + "post_attention_layernorm.weight", {{t("post_attention_norm"), 0}}, true);
            f.add(h + "pre_feedforward_layernorm.weight", {{t("ffn_norm"), 0}}, true);
            f.add(h + "post_feedforward_layernorm.weight", {{t("post_ffn_norm"), 0}}, true);
        } else {
            f.add(h + "post_attention_layernorm.weight", {{t("ffn_norm"), 0}}, true);
        }
        if (c.arch.qk_norm) {
            f.add(h + "self_attn.q_norm.weight", {{t("q_norm"), 1}}, true);
            f.add(h + "self_attn.k_norm.weight", {{t("k_norm"), 1}}, true);
        }
        if (phi) {
            f.add(h + "self_attn.qkv_proj.weight", {{t("wq"), c.n_heads}, {t("wk"), c.n_kv_heads}, {t("wv"), 0}});
            f.add(h + "mlp.gate_up_proj.weight", {{t("w1"), 0}, {t("w3"), 0}});
        } else {
            f.add(h + "self_attn.q_proj.weight", {{t("wq"), c.n_heads}});
            f.add(h + "self_attn.k_proj.weight", {{t("wk"), c.n_kv_heads}});
            f.add(h + "self_attn.v_proj.weight", {{t("wv"), 0}});
            f.add(h + "mlp.gate_proj.weight", {{t("w1"), 0}});
            f.add(h + "mlp.up_proj.weight", {{t("w3"), 0}});
        }
        f.add(h + "self_attn.o_proj.weight", {{t("wo"), 0}});
        f.add(h + "mlp.down_proj.weight", {{t("w2"), 0}});
    }
    if (!c.tied_classifier) f.add(head, {{&g.get("output"), 0}});
    f.write(dir, config);
}

}  // namespace
TEST_CASE("Hugging Face folders of Qwen3, Gemma 3 (both layouts) and Phi-3 run as their GGUF files do", "[families]") {
    struct Case {
        const char* gguf;
        const char* layout;
    };
    for (const Case& k : {Case{"qwen3-f32.gguf", "causal"}, {"gemma3-f32.gguf", "causal"},
                          {"gemma3-f32.gguf", "conditional"}, {"phi3-f32.gguf", "causal"}}) {
        CAPTURE(k.gguf, k.layout);
        const ModelFile g = load_model(arch_path(k.gguf));
        const LlamaConfig& c = g.config;
        json config = {{"hidden_size", c.dim}, {"intermediate_size", c.hidden_dim}, {"num_hidden_layers", c.n_layers},
                       {"num_attention_heads", c.n_heads}, {"num_key_value_heads", c.n_kv_heads},
                       {"vocab_size", c.vocab_size}, {"max_position_embeddings", c.seq_len},
                       {"rms_norm_eps", c.rms_eps}, {"rope_theta", c.rope_theta},
                       {"tie_word_embeddings", c.tied_classifier}};
        const ArchitectureFeatures& a = c.arch;
        std::string model = "model.", head = "lm_head.weight";
        if (a.family == ModelFamily::Qwen3) {
            config.update({{"model_type", "qwen3"}, {"head_dim", c.head_dim()}, {"hidden_act", "silu"}});
        } else if (a.family == ModelFamily::Gemma3) {
            json types = json::array();
            for (uint8_t local : a.local_layers) types.push_back(local ? "sliding_attention" : "full_attention");
            config.update({{"model_type", "gemma3_text"}, {"head_dim", c.head_dim()},
                           {"query_pre_attn_scalar", c.head_dim()}, {"sliding_window", a.sliding_window},
                           {"layer_types", types}, {"rope_local_base_freq", a.local_rope_theta},
                           {"rope_scaling", {{"rope_type", "linear"}, {"factor", c.rope_position_scale}}},
                           {"hidden_activation", "gelu_pytorch_tanh"}});
            if (std::string(k.layout) == "conditional") {
                config = {{"model_type", "gemma3"}, {"text_config", config}};
                model = "language_model.model.", head = "language_model.lm_head.weight";
            }
        } else {
            config.update({{"model_type", "phi3"},
                           {"partial_rotary_factor", double(rotated_dims(c) * c.n_heads) / c.dim},
                           {"original_max_position_embeddings", a.rope_original_context},
                           {"rope_scaling", {{"type", "longrope"},
                                             {"short_factor", dequantize(g.get("rope_factors_short"))},
                                             {"long_factor", dequantize(g.get("rope_factors_long"))}}}});
        }
        const fs::path dir = fs::temp_directory_path() / ("medusa_families_" + std::to_string(getpid()));
        fs::remove_all(dir);
        write_family_folder(g, dir, config, model, head);
        const ModelFile hf = load_model(dir.string());
        CHECK(hf.config.head_dim() == c.head_dim());
        CHECK(hf.config.arch.qk_norm == a.qk_norm);
        CHECK(hf.config.arch.post_norms == a.post_norms);
        CHECK(hf.config.arch.activation == a.activation);
        CHECK(hf.config.arch.embedding_scale == a.embedding_scale);
        CHECK(hf.config.arch.rope_dims == a.rope_dims);
        CHECK(hf.config.arch.sliding_window == a.sliding_window);
        CHECK(hf.config.arch.local_layers == a.local_layers);
        CHECK(hf.config.arch.rope_attn_factor == Approx(a.rope_attn_factor).epsilon(1e-6));
        CHECK(hf.config.arch.rope_original_context == a.rope_original_context);
        const std::vector<int> prompt = {1, 400, 200, 300, 5, 77, 123, 9, 10, 11, 12, 13, 14};
        CpuReferenceModel from_gguf(g), from_hf(hf);
        from_gguf.forward(TokenBlock::causal(0, prompt));
        from_hf.forward(TokenBlock::causal(0, prompt));
        for (int t = 0; t < int(prompt.size()); ++t)
            CHECK(max_abs(from_hf.logits(t), {from_gguf.logits(t).begin(), from_gguf.logits(t).end()}) < 1e-4);
        fs::remove_all(dir);
    }
}

TEST_CASE("the families' GGUF files are written back as llama.cpp reads them and load to the same logits", "[families]") {
    const Tokenizer tok = Tokenizer::from_file(test::model_path("tok512.model"));
    for (const char* name : {"qwen3-q8_0.gguf", "gemma3-f32.gguf", "phi3-f32.gguf"}) {
        CAPTURE(name);
        const ModelFile g = load_model(arch_path(name));
        const fs::path out = fs::temp_directory_path() / ("medusa_families_" + std::to_string(getpid()) + ".gguf");
        write_gguf(g, tok, out.string());
        const ModelFile back = load_model(out.string());
        CHECK(back.config.arch.family == g.config.arch.family);
        CHECK(describe_features(back.config) == describe_features(g.config));
        const std::vector<int> prompt = {1, 400, 200, 300, 5, 77, 123, 9, 10, 11, 12, 13, 14};
        CpuReferenceModel a(g), b(back);
        a.forward(TokenBlock::causal(0, prompt));
        b.forward(TokenBlock::causal(0, prompt));
        CHECK(max_abs(b.logits(12), {a.logits(12).begin(), a.logits(12).end()}) == 0.0);
        fs::remove(out);
    }
}

namespace {

// A GGUF file of metadata alone (no tensors): enough for the loader to refuse an architecture.
std::vector<uint8_t> metadata_only_gguf(const std::vector<std::pair<std::string, std::string>>& texts,
                                        const std::vector<std::pair<std::string, uint32_t>>& counts,
                                        const std::vector<std::pair<std::string, float>>& reals) {
    std::vector<uint8_t> b;
    auto raw = [&](const void* p, size_t n) { b.insert(b.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    auto u32 = [&](uint32_t v) { raw(&v, 4); };
    auto u64 = [&](uint64_t v) { raw(&v, 8); };
    auto str = [&](const std::string& s) { u64(s.size()), raw(s.data(), s.size()); };
    u32(0x46554747), u32(3), u64(0), u64(texts.size() + counts.size() + reals.size());
    for (const auto& [k, v] : texts) str(k), u32(8), str(v);
    for (const auto& [k, v] : counts) str(k), u32(4), u32(v);
    for (const auto& [k, v] : reals) str(k), u32(6), raw(&v, 4);
    while (b.size() % 32) b.push_back(0);
    return b;
}

std::string load_error(const std::vector<uint8_t>& bytes, const std::string& name) {
    try {
        load_gguf(std::make_shared<const std::vector<uint8_t>>(bytes), name);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "(loaded)";
}

std::string load_error_of(const ModelFile& m) {
    const Tokenizer tok = Tokenizer::from_file(test::model_path("tok512.model"));
    const fs::path out = fs::temp_directory_path() / ("medusa_families_bad_" + std::to_string(getpid()) + ".gguf");
    write_gguf(m, tok, out.string());
    std::string what = "(loaded)";
    try {
        load_model(out.string());
    } catch (const FormatError& e) {
        what = e.what();
    }
    fs::remove(out);
    return what;
}

}  // namespace

TEST_CASE("variants of the families that are not supported are refused by name, in one line", "[families]") {
    const std::vector<std::pair<std::string, uint32_t>> shape = {
        {"embedding_length", 64}, {"feed_forward_length", 128}, {"block_count", 2}, {"attention.head_count", 4}};
    auto file = [&](const std::string& arch, std::vector<std::pair<std::string, float>> reals = {}) {
        std::vector<std::pair<std::string, uint32_t>> counts;
        for (const auto& [k, v] : shape) counts.push_back({arch + "." + k, v});
        for (auto& [k, v] : reals) k = arch + "." + k;
        return metadata_only_gguf({{"general.architecture", arch}}, counts, reals);
    };
    CHECK_THAT(load_error(file("qwen3moe"), "m.gguf"),
               Catch::Equals("m.gguf: architecture 'qwen3moe' (a mixture of experts) is not supported (llama, qwen2, "
                             "qwen3, gemma3 and phi3 are)"));
    CHECK_THAT(load_error(file("gemma3n"), "m.gguf"),
               Catch::Contains("m.gguf: architecture 'gemma3n' (Gemma 3n: per-layer embeddings and AltUp) is not supported"));
    CHECK_THAT(load_error(file("clip"), "mmproj.gguf"),
               Catch::Contains("mmproj.gguf: architecture 'clip' (a vision tower, not a language model) is not supported"));
    CHECK_THAT(load_error(file("gemma2"), "m.gguf"), Catch::Contains("architecture 'gemma2' (Gemma 2: logit soft-capping) is not supported"));
    CHECK_THAT(load_error(file("gemma3", {{"final_logit_softcapping", 30.0f}}), "m.gguf"),
               Catch::Equals("m.gguf: gemma3.final_logit_softcapping is set: logit soft-capping (Gemma 2's) is not supported"));
    for (const std::string& s : {load_error(file("qwen3moe"), "m.gguf"), load_error(file("clip"), "m.gguf")})
        CHECK(s.find('\n') == std::string::npos);
}

TEST_CASE("metadata that contradicts the tensors is refused naming the file and the value", "[families]") {
    // Heads x head size against q's rows.
    ModelFile qwen = load_model(arch_path("qwen3-f32.gguf"));
    qwen.config.head_size = 16;
    CHECK_THAT(load_error_of(qwen), Catch::Contains("tensor 'layers.0.wq' has shape [128, 64], expected [64, 64]"));
    // A window larger than the context.
    ModelFile gemma = load_model(arch_path("gemma3-f32.gguf"));
    gemma.config.arch.sliding_window = gemma.config.seq_len + 1;
    CHECK_THAT(load_error_of(gemma), Catch::Contains("invalid model configuration: sliding window " +
                                                     std::to_string(gemma.config.seq_len + 1) +
                                                     " is larger than the context length"));
    // A wrong count of LongRoPE factors.
    ModelFile phi = load_model(arch_path("phi3-f32.gguf"));
    const std::vector<float> ten(10, 1.0f);
    for (Tensor& t : phi.tensors)
        if (t.name == "rope_factors_long") t = f32_tensor("rope_factors_long", ten);
    CHECK_THAT(load_error_of(phi), Catch::Contains("tensor 'rope_factors_long' has shape [10], expected [12]"));
}

TEST_CASE("medusa serve chats with each family through its template as generate --chat does", "[families]") {
    struct Chat {
        const char* file;
        const char* chat_template;
        const char* reply_starts;  // the generation prompt's end, after which generate prints the reply
    };
    for (const Chat& c : {Chat{"qwen3-f32.gguf", "qwen3", "<|im_start|>assistant\n"},
                          Chat{"gemma3-f32.gguf", "gemma", "<start_of_turn>model\n"},
                          Chat{"phi3-f32.gguf", "phi4", "<|assistant|>"}}) {
        CAPTURE(c.file);
        const std::string model = arch_path(c.file);
        test::ServeProcess serve({"-m", model, "--temp", "0", "--ngram", "4", "--chat-template", c.chat_template});
        httplib::Headers h;
        const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}}, {"max_tokens", 24}};
        const auto r = serve.client().Post("/v1/chat/completions", h, body.dump(), "application/json");
        REQUIRE(r);
        REQUIRE(r->status == 200);
        const std::string reply = nlohmann::json::parse(r->body)["choices"][0]["message"]["content"];
        const auto g = test::run_medusa("generate -m " + model + " --chat-template " + c.chat_template +
                                        " --temp 0 --ngram 4 -p 'Tell me a story' -n 24 2>/dev/null");
        REQUIRE(g.exit_code == 0);
        const size_t at = g.out.rfind(c.reply_starts);
        REQUIRE(at != std::string::npos);
        // The server's JSON carries text that is not UTF-8 (a random model's byte tokens) as U+FFFD.
        const std::string printed = g.out.substr(at + std::string(c.reply_starts).size());
        const nlohmann::json as_json = printed;
        CHECK(nlohmann::json::parse(as_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                  .get<std::string>() == reply + "\n");
        CHECK(serve.stop(SIGINT) == 0);
    }
}
