// libFuzzer target: the config.json beside Medusa head files, from arbitrary bytes, read with
// three tiny head files of hidden size 8 over a vocabulary of 4: Medusa's layout (3 heads of 2
// blocks, each with its own projection), Medusa's legacy layout (2 heads of 1 block, the model's
// classifier, keys prefixed "medusa_head.") and vLLM's (2 heads, no biases, one shared lm_head).
// A config is refused with a FormatError, or gives heads of the shapes it promised.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "llm/medusa_heads_io.h"
#include "model/json_file.h"
#include "model/model_file.h"
#include "model/safetensors_file.h"

namespace {

using medusa::fuzz::check;

constexpr int kDim = 8, kVocab = 4;

using medusa::fuzz::Shapes;

std::shared_ptr<const std::vector<uint8_t>> head_file(const Shapes& shapes) {
    return medusa::fuzz::pattern_safetensors(shapes, 29, 13, 16.0f);
}

const std::vector<std::shared_ptr<const std::vector<uint8_t>>>& head_files() {
    static const auto files = [] {
        Shapes medusa, legacy, vllm;
        for (int k = 0; k < 3; ++k) {
            for (int l = 0; l < 2; ++l) {
                const std::string block = std::to_string(k) + "." + std::to_string(l) + ".linear.";
                medusa.push_back({block + "weight", {kDim, kDim}});
                medusa.push_back({block + "bias", {kDim}});
            }
            medusa.push_back({std::to_string(k) + ".2.weight", {kVocab, kDim}});
        }
        for (int k = 0; k < 2; ++k) {
            legacy.push_back({"medusa_head." + std::to_string(k) + ".0.linear.weight", {kDim, kDim}});
            legacy.push_back({"medusa_head." + std::to_string(k) + ".0.linear.bias", {kDim}});
            vllm.push_back({"blocks." + std::to_string(k) + ".layers.0.weight", {kDim, kDim}});
        }
        vllm.push_back({"lm_heads.0.weight", {kVocab, kDim}});
        return std::vector{head_file(medusa), head_file(legacy), head_file(vllm)};
    }();
    return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    medusa::LlamaConfig model;
    model.dim = kDim;
    model.vocab_size = kVocab;
    for (size_t f = 0; f < head_files().size(); ++f) {
        const bool vllm = f == 2;
        try {
            const medusa::MedusaHeads h = medusa::load_medusa_heads_from_parts(
                head_files()[f], "medusa_lm_head.safetensors", text, "config.json", model);
            check(h.dim == kDim && h.vocab == kVocab && h.count() >= 1 && h.count() <= 8);
            check(h.layers >= 1 && h.layers <= 16);
            for (const medusa::MedusaHead& head : h.heads) {
                check(int(head.w1.size()) == h.layers && int(head.b1.size()) == h.layers);
                for (int l = 0; l < h.layers; ++l)
                    check(head.w1[l].size() == size_t(kDim * kDim) && head.b1[l].size() == size_t(kDim));
                check(head.w2.empty() || head.w2.size() == size_t(kVocab * kDim));
            }
            // A count the config states is the count loaded.
            const nlohmann::json j = medusa::parse_json_text(text, "config.json");
            const char* key = vllm ? "num_heads" : "medusa_num_heads";
            if (j.contains(key)) check(j[key].get<int64_t>() == h.count());
        } catch (const medusa::FormatError&) {
        }
    }
    return 0;
}
