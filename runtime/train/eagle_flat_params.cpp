#include "train/eagle_flat_params.h"

#include <array>
#include <stdexcept>

namespace medusa::train {

namespace {
// The layer's tensors in flat order.
template <class Layer>
auto tensors(Layer& e) {
    return std::array{&e.fc_w, &e.fc_b, &e.wq, &e.wk, &e.wv, &e.wo, &e.post_norm, &e.w_gate, &e.w_up, &e.w_down};
}
}  // namespace

EagleFlatLayout::EagleFlatLayout(const EagleLayer& e) {
    const size_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim;
    fc_w = 0;
    fc_b = fc_w + d * 2 * d;
    qkv = fc_b + d;
    wo = qkv + (d + 2 * kv) * d;
    post_norm = wo + d * d;
    gate_up = post_norm + d;
    w_down = gate_up + 2 * h * d;
    total = w_down + d * h;
}

std::vector<float> pack_eagle_layer(const EagleLayer& layer) {
    std::vector<float> flat;
    flat.reserve(EagleFlatLayout(layer).total);
    for (const auto* t : tensors(layer)) flat.insert(flat.end(), t->begin(), t->end());
    if (flat.size() != EagleFlatLayout(layer).total) throw std::invalid_argument("EAGLE layer tensors of the wrong size");
    return flat;
}

EagleLayer unpack_eagle_layer(const std::vector<float>& flat, const EagleLayer& shape) {
    EagleLayer e = shape;
    const size_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim;
    const size_t sizes[] = {d * 2 * d, d, d * d, kv * d, kv * d, d * d, d, h * d, h * d, d * h};
    if (flat.size() != EagleFlatLayout(shape).total) throw std::invalid_argument("flat EAGLE parameters of the wrong size");
    size_t at = 0, i = 0;
    for (auto* t : tensors(e)) {
        t->assign(flat.begin() + at, flat.begin() + at + sizes[i]);
        at += sizes[i++];
    }
    return e;
}

}  // namespace medusa::train
