#include "model/rope_scaling.h"

#include <cmath>

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

}  // namespace medusa
