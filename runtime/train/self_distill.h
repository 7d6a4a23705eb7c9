// Self-distillation data: the frozen model writes its own training text (continuations of seed
// prompts and of sampled starts, at a moderate temperature, deterministic for a seed), and its
// final-norm hidden states over that text are what the heads learn from.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llm/tree_runner.h"

namespace medusa {
class GpuModel;
class CpuReferenceModel;
}  // namespace medusa

namespace medusa::train {

struct DistillOptions {
    int sequences = 64;
    int max_len = 256;          // tokens per sequence, prompt included (capped by the context)
    float temp_min = 0.3f, temp_max = 0.8f;
    float top_p = 0.95f;
    int greedy_every = 2;       // every n-th sequence from a sampled start is greedy (what greedy decoding meets); 0: never
    uint64_t seed = 0;
    std::vector<int> feature_layers;  // EAGLE-3: also keep the inputs of these target layers
};

struct DistillData {
    int dim = 0;
    std::vector<int> tokens;
    std::vector<int> seq_start;  // sequence s is tokens [seq_start[s], seq_start[s+1])
    std::vector<float> hidden;   // [tokens][dim]: state after reading token t (predicts t+1)
    int feature_dim = 0;           // with DistillOptions::feature_layers: their count times dim
    std::vector<float> features;   // [tokens][feature_dim]: the residual stream entering those layers
    int num_sequences() const { return int(seq_start.size()) - 1; }
    size_t num_tokens() const { return tokens.size(); }
};

// Writes the final-norm hidden states of the whole sequence `seq` into hidden[seq.size()][dim]
// and, when `features` is not null, the inputs of the `layers` the function was made for into
// features[seq.size()][layers.size() dim].
using HiddenFn = std::function<void(const std::vector<int>& seq, float* hidden, float* features)>;
HiddenFn gpu_hidden_states(GpuModel& model, std::vector<int> layers = {});
HiddenFn cpu_hidden_states(CpuReferenceModel& model, std::vector<int> layers = {});

// `prompts` are tokenized seed prompts (BOS included); sequences alternate between them and
// sampled starts (BOS + a few tokens drawn at temperature 1). on_sequence(done, total) reports progress.
DistillData generate_distill_data(TreeRunner& model, const HiddenFn& hidden,
                                  const std::vector<std::vector<int>>& prompts, int bos, const DistillOptions& o,
                                  const std::function<void(int, int)>& on_sequence = {});

// Cache of generated data (so --resume does not regenerate it): a safetensors file.
void save_distill_data(const DistillData& d, const std::string& path, const std::string& tag);
// Returns false when the file is absent or was written for another `tag` (model, seed, sizes).
bool load_distill_data(DistillData& d, const std::string& path, const std::string& tag);

}  // namespace medusa::train
