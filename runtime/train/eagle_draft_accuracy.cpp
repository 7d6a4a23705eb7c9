#include "train/eagle_draft_accuracy.h"

#include <algorithm>

#include "llm/cpu_reference.h"

namespace medusa::train {

namespace {
int argmax(std::span<const float> v) { return int(std::max_element(v.begin(), v.end()) - v.begin()); }
}  // namespace

EagleDraftAccuracy eagle_draft_accuracy(const EagleLayer& layer, const ModelFile& file, const DistillData& data,
                                        int depth, size_t max_starts) {
    if (depth < 1) throw std::invalid_argument("draft depth must be at least 1");
    const int context = file.config.seq_len, dim = file.config.dim;
    CpuReferenceModel target(file);
    CpuEagleModel eagle(layer, file, context);
    if (layer.eagle3()) target.capture_layer_inputs(layer.target_layers);  // EAGLE-3 reads their inputs
    std::vector<double> agree(depth, 0), cond_hits(depth, 0), cond_total(depth, 0), chain(depth, 0);
    std::vector<int> drafted(depth), greedy(depth);
    std::vector<float> feature(dim);
    size_t starts = 0;
    for (int s = 0; s < data.num_sequences() && (max_starts == 0 || starts < max_starts); ++s) {
        const int begin = data.seq_start[s], n = data.seq_start[s + 1] - begin;
        const int* x = &data.tokens[begin];
        if (n < 2) continue;
        target.forward(TokenBlock::causal(0, {x[0]}));
        for (int i = 0; i + 1 < n && i + depth < context && (max_starts == 0 || starts < max_starts); ++i) {
            // The target reads t_{i+1} (its cache then holds the text up to it): greedy token at depth 1.
            target.forward(TokenBlock::causal(i + 1, {x[i + 1]}));
            greedy[0] = target.argmax(0);
            // Depth 1 reads the target's f_i and t_{i+1}; its cache slot i keeps that true pair.
            // EAGLE-3's f_i: the fused inputs of its layers at position i.
            if (layer.eagle3()) eagle.fuse(target.feature(i), feature.data());
            else std::copy_n(&data.hidden[size_t(begin + i) * dim], dim, feature.begin());
            for (int k = 0; k < depth; ++k) {
                eagle.forward(TokenBlock::causal(i + k, {k == 0 ? x[i + 1] : drafted[k - 1]}), feature);
                const auto out = eagle.output(0);
                feature.assign(out.begin(), out.end());
                drafted[k] = argmax(eagle.logits(0));
            }
            // The target on the drafted chain: greedy tokens at depths 2..m (slots past i+1 are rewritten later).
            if (depth > 1) {
                target.forward(TokenBlock::causal(i + 2, std::vector<int>(drafted.begin(), drafted.end() - 1)));
                for (int k = 1; k < depth; ++k) greedy[k] = target.argmax(k - 1);
            }
            bool all = true;
            for (int k = 0; k < depth; ++k) {
                const bool hit = drafted[k] == greedy[k];
                agree[k] += hit;
                if (all) cond_total[k] += 1, cond_hits[k] += hit;
                all = all && hit;
                chain[k] += all;
            }
            ++starts;
        }
    }
    EagleDraftAccuracy a;
    a.starts = starts;
    const double n = double(std::max<size_t>(starts, 1));
    for (int k = 0; k < depth; ++k) {
        a.top1.push_back(agree[k] / n);
        a.conditional.push_back(cond_hits[k] / std::max(1.0, cond_total[k]));
        a.accepted.push_back(chain[k] / n);
        a.mean_accepted += chain[k] / n;
    }
    return a;
}

}  // namespace medusa::train
