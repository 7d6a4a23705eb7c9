#include "train/eagle_flat_params.h"

#include <array>
#include <stdexcept>

namespace medusa::train {

namespace {
// The layer's tensors in flat order.
template <class Layer>
auto tensors(Layer& e) {
    return std::array{&e.fc_w,  &e.fc_b,   &e.wq,     &e.wk,         &e.wv,          &e.wo,         &e.post_norm,
                      &e.w_gate, &e.w_up, &e.w_down, &e.input_norm, &e.hidden_norm, &e.final_norm, &e.draft_head};
}

// Each tensor's size, in the order of tensors().
std::array<size_t, 14> sizes(const EagleLayer& e) {
    const size_t d = e.dim, kv = e.kv_dim(), h = e.hidden_dim, in = e.attention_input();
    const bool v3 = e.eagle3();
    const size_t fc = v3 ? (e.fuses() ? d * size_t(e.feature_dim()) : 0) : d * 2 * d;
    const size_t norm3 = v3 ? d : 0;
    return {fc, v3 ? 0 : d, d * in, kv * in, kv * in, d * d, d, h * d, h * d, d * h, norm3, norm3, norm3,
            v3 ? size_t(e.draft_vocab()) * d : 0};
}
}  // namespace

EagleFlatLayout::EagleFlatLayout(const EagleLayer& e) {
    if (e.head_size != 0)  // the trainers' kernels take heads of hidden size / heads
        throw std::invalid_argument(e.source + ": training an EAGLE layer whose head size " + std::to_string(e.head_size) +
                                    " is not its hidden size over its heads is not supported");
    const auto n = sizes(e);
    std::array<size_t, 15> at{};
    for (size_t i = 0; i < n.size(); ++i) at[i + 1] = at[i] + n[i];
    fc_w = at[0], fc_b = at[1], qkv = at[2], wo = at[5], post_norm = at[6], gate_up = at[7], w_down = at[9];
    input_norm = at[10], hidden_norm = at[11], final_norm = at[12], draft_head = at[13], total = at[14];
}

std::vector<float> pack_eagle_layer(const EagleLayer& layer) {
    std::vector<float> flat;
    flat.reserve(EagleFlatLayout(layer).total);
    const auto n = sizes(layer);
    size_t i = 0;
    for (const auto* t : tensors(layer)) {
        if (t->size() != n[i++]) throw std::invalid_argument("EAGLE layer tensors of the wrong size");
        flat.insert(flat.end(), t->begin(), t->end());
    }
    return flat;
}

EagleLayer unpack_eagle_layer(const std::vector<float>& flat, const EagleLayer& shape) {
    EagleLayer e = shape;
    const auto n = sizes(e);
    if (flat.size() != EagleFlatLayout(shape).total) throw std::invalid_argument("flat EAGLE parameters of the wrong size");
    size_t at = 0, i = 0;
    for (auto* t : tensors(e)) {
        t->assign(flat.begin() + at, flat.begin() + at + n[i]);
        at += n[i++];
    }
    return e;
}

}  // namespace medusa::train
