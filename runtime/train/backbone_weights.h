// A Llama model's weights expanded to f32 on the CPU, by llama2.c names: the frozen base of
// Medusa-2's joint training, and what its merged model is written from (as llama2.c's fp32
// checkpoint, which every loader here reads).
#pragma once
#include <string>
#include <vector>

#include "model/model_file.h"

namespace medusa::train {

struct BackboneWeights {
    struct Layer {
        std::vector<float> attention_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3;
    };
    LlamaConfig config;
    std::vector<float> tok_embeddings, norm, output;  // output empty when the classifier is tied
    std::vector<Layer> layers;

    const std::vector<float>& classifier() const { return output.empty() ? tok_embeddings : output; }
    // Expands every tensor; refuses what the trainer does not model (q/k/v biases, RoPE scaling).
    static BackboneWeights from_model(const ModelFile& m);
};

// llama2.c's fp32 "version 0" checkpoint: the 7-int header (a negative vocabulary size when the
// classifier is untied), the tensors in run.c's order, and zeros where the old RoPE tables were.
void write_llama2c(const BackboneWeights& w, const std::string& path);

}  // namespace medusa::train
