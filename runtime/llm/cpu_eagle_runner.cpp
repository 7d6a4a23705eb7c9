#include "llm/cpu_eagle_runner.h"

#include <algorithm>
#include <stdexcept>

namespace medusa {

CpuEagleRunner::CpuEagleRunner(CpuReferenceModel& target, const ModelFile& file, const EagleLayer& layer)
    : target_(target), model_(layer, file, target.config().seq_len), dim_(layer.dim) {
    attach();
}

void CpuEagleRunner::attach() {
    // EAGLE-3 reads the inputs of its target layers, EAGLE-1/2 the final-norm hidden state.
    const EagleLayer& layer = model_.layer();
    target_.capture_layer_inputs(layer.eagle3() ? layer.target_layers : std::vector<int>{});
}

void CpuEagleRunner::run(const TokenBlock& block, std::span<const int> source) {
    if (int(source.size()) != block.size()) throw std::invalid_argument("an EAGLE block needs one source per token");
    std::vector<float> features(size_t(block.size()) * dim_);
    for (int t = 0; t < block.size(); ++t) {
        const int s = source[t];
        if (s >= rows()) throw std::out_of_range("an EAGLE feature source past the output rows");
        if (s >= 0) std::copy_n(&store_[size_t(s) * dim_], dim_, &features[size_t(t) * dim_]);
        else model_.fuse(target_.feature(-1 - s), &features[size_t(t) * dim_]);
    }
    model_.forward(block, features);
    ++runs_;
    for (int t = 0; t < block.size(); ++t) {
        const auto out = model_.output(t);
        store_.insert(store_.end(), out.begin(), out.end());
    }
}

}  // namespace medusa
