// K Medusa heads on the model's last hidden state h: head k applies `layers` residual blocks
// h <- h + SiLU(W1 h + b1) and then a vocabulary projection W2 (no bias); it guesses the token
// k+1 places beyond the model's own next token.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa {

struct MedusaHead {
    std::vector<std::vector<float>> w1;  // per residual block: [dim][dim]
    std::vector<std::vector<float>> b1;  // per residual block: [dim]
    std::vector<float> w2;               // [vocab][dim]; empty: the model's own classifier (shared)
};

struct MedusaHeads {
    int dim = 0;
    int vocab = 0;
    int layers = 1;
    std::vector<MedusaHead> heads;
    std::string source;  // file it came from, or kUntrainedSource

    // What `source` says of heads made by init_from_model, untrained.
    static constexpr const char* kUntrainedSource = "init";
    bool untrained() const { return source == kUntrainedSource; }
    int count() const { return int(heads.size()); }
    // Medusa's own initialisation: W1 = 0, b1 = 0 (each block is the identity), W2 = the model's
    // classifier, so every head starts by repeating the model's next-token guess.
    static MedusaHeads init_from_model(const ModelFile& model, int num_heads, int num_layers = 1);
    // Head k's logits for hidden state h (CPU reference); a shared classifier must be filled in first.
    std::vector<float> logits(int k, std::span<const float> h) const;
    // Fills the vocabulary projection of heads that share the model's classifier with a copy of it
    // (for the CPU reference and training, which update it per head).
    void copy_shared_classifier(const ModelFile& model);
    // Throws FormatError naming `source` when the heads do not fit the model.
    void check_fits(const LlamaConfig& cfg) const;
    // True when head k's W2 is the model classifier, shared or equal (the GPU then shares its buffer).
    bool w2_is_classifier(int k, const ModelFile& model) const;
    // "SOURCE: heads 1 and 3 hold NaN or infinite weights: they never guess a token that is
    // accepted" when some do (a head of NaN drafts nothing, silently), else "".
    std::string non_finite_note() const;
};

}  // namespace medusa
