#include "model/rope_scaling.h"

#include <cmath>

#include "model/model_file.h"

namespace medusa {

std::vector<float> llama3_rope_factors(float theta, int head_dim, double factor, double low_freq_factor,
                                       double high_freq_factor, double original_context) {
    const double low_wavelen = original_context / low_freq_factor, high_wavelen = original_context / high_freq_factor;
    std::vector<float> out;
    for (int i = 0; i < head_dim; i += 2) {
        // The frequencies in float32, as the converter computes them with torch.
        const float freq = 1.0f / std::pow(theta, float(i) / float(head_dim));
        const double wavelen = 2 * M_PI / double(freq);
        double f;
        if (wavelen < high_wavelen) {
            f = 1;
        } else if (wavelen > low_wavelen) {
            f = factor;
        } else {
            const double smooth = (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
            f = 1 / ((1 - smooth) / factor + smooth);
        }
        out.push_back(float(f));
    }
    return out;
}

std::vector<float> parse_rope_scaling(const nlohmann::json& j, LlamaConfig& c, const std::string& where) {
    auto it = j.find("rope_scaling");
    if (it == j.end() || it->is_null()) return {};
    auto bad = [&](const std::string& what) { throw FormatError(where + ": rope_scaling " + what); };
    if (!it->is_object()) bad("is not an object");
    const nlohmann::json& r = *it;
    const std::string type = r.contains("rope_type") && r["rope_type"].is_string() ? r["rope_type"].get<std::string>()
                             : r.contains("type") && r["type"].is_string()       ? r["type"].get<std::string>()
                                                                                  : "";
    auto number = [&](const char* key, double fallback) {
        if (!r.contains(key)) return fallback;
        if (!r[key].is_number() || !std::isfinite(r[key].get<double>()) || r[key].get<double>() <= 0)
            bad(std::string("'") + key + "' is not a positive number");
        return r[key].get<double>();
    };
    if (type == "linear") {
        c.rope_position_scale = float(number("factor", 1.0));
        return {};
    }
    if (type == "llama3") {
        const double low = number("low_freq_factor", 1.0), high = number("high_freq_factor", 4.0);
        if (!(high > low)) bad("has high_freq_factor <= low_freq_factor");
        return llama3_rope_factors(c.rope_theta, c.head_dim(), number("factor", 8.0), low, high,
                                   number("original_max_position_embeddings", 8192.0));
    }
    bad("type '" + type + "' is not supported (llama3 and linear are)");
    return {};
}

}  // namespace medusa
