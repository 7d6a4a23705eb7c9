// A decoder's weights expanded to f32 on the CPU, by canonical names (model/model_file.h): the
// frozen base of Medusa-2's joint training, and what its merged model is written from. Every
// family's features are kept (q/k/v biases, q/k norm gains, post-norms, RoPE factor tables); the
// configuration's ArchitectureFeatures say how they are used. The merged model is written as
// llama2.c's fp32 checkpoint where that holds it (a plain Llama, as before) and as a GGUF file of
// its family otherwise.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "model/model_file.h"
#include "model/tokenizer.h"

namespace medusa::train {

struct BackboneWeights {
    struct Layer {
        std::vector<float> attention_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3;
        std::vector<float> bq, bk, bv;                          // with config.qkv_bias (Qwen2)
        std::vector<float> q_norm, k_norm;                      // with arch.qk_norm: one head's gains each
        std::vector<float> post_attention_norm, post_ffn_norm;  // with arch.post_norms (Gemma 3)
    };
    LlamaConfig config;
    std::vector<float> tok_embeddings, norm, output;  // output empty when the classifier is tied
    std::vector<Layer> layers;
    // The per-pair divisors of the RoPE frequencies training rotates by (rope_factor_tensor at the
    // training context: Llama 3's rope_freqs, LongRoPE's short or long factors); empty: ones.
    std::vector<float> rope_factors;
    // The file's RoPE tables as they are (rope_freqs, rope_factors_short, rope_factors_long), for
    // the tuned model's file.
    std::vector<std::pair<std::string, std::vector<float>>> rope_tables;

    const std::vector<float>& classifier() const { return output.empty() ? tok_embeddings : output; }
    // Expands every tensor. `context`: the positions the trained model will run at, which pick
    // LongRoPE's factors as the engines pick them (0: the file's context length).
    static BackboneWeights from_model(const ModelFile& m, int context = 0);
};

// Whether llama2.c's fp32 checkpoint holds the model exactly: a Llama with llama2.c's defaults
// (RoPE base 10000, RMS epsilon 1e-5, no scaling or RoPE tables, no biases, head size dim/heads).
bool llama2c_holds(const BackboneWeights& w);

// llama2.c's fp32 "version 0" checkpoint: the 7-int header (a negative vocabulary size when the
// classifier is untied), the tensors in run.c's order, and zeros where the old RoPE tables were.
void write_llama2c(const BackboneWeights& w, const std::string& path);

// The weights as a model file of F32 tensors viewing w's floats (w must outlive it), under their
// canonical names in the order the GGUF writer stores them; `path` names it.
ModelFile backbone_model_file(const BackboneWeights& w, const std::string& path);

// Where the tuned model's GGUF file takes its vocabulary: the tokenizer.* keys of a GGUF file (the
// model's own, or a --tokenizer GGUF), carried through as that file stores them, or else the
// tokenizer the run used (a sentencepiece one; a byte-level BPE vocabulary only comes from GGUF).
struct TunedVocabulary {
    std::string gguf;  // a GGUF file whose tokenizer keys are copied; empty: none
    const Tokenizer* tokenizer = nullptr;
};
// The GGUF file that holds the vocabulary a run on `model` with `tokenizer_flag` (--tokenizer,
// empty when not given) reads: that file or the model itself when it is a GGUF with a vocabulary.
std::string vocabulary_gguf(const ModelFile& model, const std::string& tokenizer_flag);

// Writes the tuned model into `dir`: model.bin (llama2.c) when llama2c_holds, else model.gguf of
// its family named after `source` (the weights through backbone_model_file). Returns the path.
std::string write_tuned_model(const BackboneWeights& merged, const ModelFile& source, const TunedVocabulary& vocab,
                              const std::string& dir);
// Throws std::invalid_argument when write_tuned_model could not write these weights' vocabulary,
// before a run spends its time.
void check_tuned_model_writable(const BackboneWeights& base, const TunedVocabulary& vocab);

}  // namespace medusa::train
