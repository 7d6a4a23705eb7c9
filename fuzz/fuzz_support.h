// What the fuzz targets share: a trap when a parsed result breaks the parser's promise (a crash
// libFuzzer keeps), and small weight files for the config-file targets to load beside a config.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/json_file.h"
#include "model/model_file.h"
#include "model/safetensors_file.h"

namespace medusa::fuzz {

// A target model's shape, for the drafters' parsers to be checked against.
inline LlamaConfig target_shape(int dim, int hidden_dim, int n_layers, int n_heads, int n_kv_heads, int vocab) {
    LlamaConfig c;
    c.dim = dim, c.hidden_dim = hidden_dim, c.n_layers = n_layers, c.n_heads = n_heads, c.n_kv_heads = n_kv_heads;
    c.vocab_size = vocab;
    c.seq_len = 512;
    return c;
}

inline void check(bool ok) {
    if (!ok) __builtin_trap();
}

// The input as JSON the way the project's readers parse it (bounded depth and size); nullopt
// when they would refuse it.
inline std::optional<nlohmann::json> json_input(const uint8_t* data, size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    try {
        return parse_json_text(text, text + size, "fuzz.json");
    } catch (const FormatError&) {
        return std::nullopt;
    }
}

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// f32 tensors of these shapes, serialized as safetensors, filled with the repeating pattern
// (i * step mod period - period / 2) / scale: varied weights, the same in every run.
inline std::shared_ptr<const std::vector<uint8_t>> pattern_safetensors(const Shapes& shapes, int step, int period,
                                                                       float scale) {
    std::vector<std::vector<float>> values;
    std::vector<Tensor> tensors;
    for (const auto& [name, shape] : shapes) {
        size_t n = 1;
        for (int64_t d : shape) n *= size_t(d);
        auto& v = values.emplace_back(n);
        for (size_t i = 0; i < n; ++i) v[i] = float(int(i * step % period) - period / 2) / scale;
        tensors.push_back(f32_tensor(name, v, shape));
    }
    return std::make_shared<const std::vector<uint8_t>>(serialize_safetensors(tensors));
}

}  // namespace medusa::fuzz
