// The forward pass over llama.cpp's tiny oracle models (shared/testdata/ggml/quant), in every
// weight type, on the GPU (both kernel layouts) and on the CPU reference, against the logits
// llama.cpp and an independent float64 pass wrote (README "*.logits.json").
#include <catch2/catch.hpp>

#include <cmath>

#include "gpu_fixture.h"
#include "llm/cpu_reference.h"
#include "llm/gpu_model.h"
#include "model/load_model.h"
#include "model/model_file.h"
#include "oracle_json.h"

using namespace medusa;

namespace {

struct Engine {
    const char* name;
    std::unique_ptr<LanguageModel> model;
};

std::vector<Engine> engines(const ModelFile& file) {
    std::vector<Engine> e;
    e.push_back({"cpu-reference", std::make_unique<CpuReferenceModel>(file)});
    e.push_back({"gpu layouts", std::make_unique<GpuModel>(test::gpu_context(), file, GpuModelOptions{.layouts = KernelLayouts::Gpu})});
    e.push_back({"cpu layouts", std::make_unique<GpuModel>(test::gpu_context(), file, GpuModelOptions{.layouts = KernelLayouts::Cpu})});
    return e;
}

// Largest |got - want| / max(1, |want|).
double max_rel_diff(std::span<const float> got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double m = 0;
    for (size_t i = 0; i < want.size(); ++i)
        m = std::max(m, std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
    return m;
}

int argmax(std::span<const float> l) { return int(std::max_element(l.begin(), l.end()) - l.begin()); }

std::vector<int> ints(const nlohmann::json& a) { return a.get<std::vector<int>>(); }

// An F32 oracle model (`stem` under shared/testdata/ggml) decoded greedily from the oracle's
// prompt by every engine: the logits at each of the 24 steps within 1e-4 (relative above 1) of
// llama.cpp's, and its greedy ids (the smallest top-2 gap on these paths is 0.0073).
void check_llamacpp_greedy_path(const std::string& stem) {
    CAPTURE(stem);
    const auto j = test::read_json(test::ggml_path(stem + ".logits.json"));
    const ModelFile file = load_model(test::ggml_path(stem + ".gguf"));
    const std::vector<int> prompt = ints(j["prompt"]), greedy = ints(j["greedy"]);
    REQUIRE(greedy.size() == 24);
    for (Engine& e : engines(file)) {
        CAPTURE(e.name);
        LanguageModel& m = *e.model;
        m.forward(TokenBlock::causal(0, prompt));
        CHECK(max_rel_diff(m.logits(int(prompt.size()) - 1), test::json_floats(j["first_logits"])) < 1e-4);
        std::vector<int> got = {m.argmax(int(prompt.size()) - 1)};
        for (int k = 0; k < 24; ++k) {
            CHECK(max_rel_diff(m.logits(k == 0 ? int(prompt.size()) - 1 : 0), test::json_floats(j["step_logits"][k])) < 1e-4);
            if (k == 23) break;
            m.forward(TokenBlock::causal(int(prompt.size()) + k, {got.back()}));
            got.push_back(m.argmax(0));
        }
        CHECK(got == greedy);
    }
}

}  // namespace

TEST_CASE("the tiny F32 model's logits and greedy ids equal llama.cpp's", "[gguf-forward]") {
    test::ValidationGuard guard;
    check_llamacpp_greedy_path("quant/oracle-a-f32");
}

TEST_CASE("Llama 3 RoPE scaling and Qwen2: logits at every step and greedy ids equal llama.cpp's", "[gguf-forward]") {
    test::ValidationGuard guard;
    check_llamacpp_greedy_path("arch/oracle-c-llama3-f32");
    check_llamacpp_greedy_path("arch/oracle-c-qwen2-f32");
}

TEST_CASE("every quantized tiny model matches the float64 reference's logits", "[gguf-forward]") {
    test::ValidationGuard guard;
    const auto oracles = test::ggml_oracles(".logits.json", {"quant"});
    REQUIRE(oracles.size() == 11);
    for (const std::string& oracle : oracles) {
        CAPTURE(oracle);
        const auto j = test::read_json(oracle);
        const ModelFile file = load_model(test::gguf_beside(oracle));
        const auto& ref = j["reference_f64"];
        const std::vector<int> prompt = ints(j["prompt"]), path = ints(j["greedy"]);
        const std::vector<int> ref_argmax = ints(ref["argmax_along_llamacpp_path"]);
        const auto ref_gaps = ref["top2_gap_per_step"].get<std::vector<double>>();
        for (Engine& e : engines(file)) {
            CAPTURE(e.name);
            LanguageModel& m = *e.model;
            m.forward(TokenBlock::causal(0, prompt));
            auto first = m.logits(int(prompt.size()) - 1);
            // Weights dequantized as gguf-py does, activations kept in f32 (README: within about 1e-4).
            CHECK(max_rel_diff(first, test::json_floats(ref["first_logits"])) < 1e-4);
            // llama.cpp quantizes the activations too: its logits are within 0.1.
            CHECK(max_rel_diff(first, test::json_floats(j["first_logits"])) < 0.1);
            // Teacher-forced along llama.cpp's path: the argmax agrees wherever the reference's
            // top-2 gap exceeds this engine's error.
            int checked = 0;
            for (size_t k = 0; k < path.size(); ++k) {
                const int got = k == 0 ? argmax(first) : m.argmax(0);
                if (ref_gaps[k] > 1e-3) {
                    CHECK(got == ref_argmax[k]);
                    ++checked;
                }
                m.forward(TokenBlock::causal(int(prompt.size() + k), {path[k]}));
            }
            CHECK(checked >= 20);
        }
    }
}

TEST_CASE("the held-out Q3_K_M and IQ4_XS models run alike on the GPU and the CPU reference", "[gguf-forward]") {
    test::ValidationGuard guard;
    for (const char* name : {"quant/oracle-a-q3_k_m.gguf", "quant/oracle-a-iq4_xs.gguf"}) {
        CAPTURE(name);
        const ModelFile file = load_model(test::ggml_path(name));
        auto all = engines(file);
        const std::vector<int> prompt = {1, 400, 200, 300};
        int token = -1;
        for (int k = 0; k < 12; ++k) {
            TokenBlock block = k == 0 ? TokenBlock::causal(0, prompt) : TokenBlock::causal(3 + k, {token});
            const int last = block.size() - 1;
            std::vector<float> want;
            for (Engine& e : all) {
                CAPTURE(e.name, k);
                e.model->forward(block);
                auto l = e.model->logits(last);
                CHECK(std::all_of(l.begin(), l.end(), [](float x) { return std::isfinite(x); }));
                if (want.empty()) want.assign(l.begin(), l.end());
                else CHECK(max_rel_diff(l, want) < 1e-4);
            }
            token = argmax(std::span<const float>(want));
        }
    }
}

