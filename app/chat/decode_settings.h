// What the controls panel edits and the worker decodes with.
#pragma once
#include <cstdint>
#include <string>

#include "decode/step_trace.h"

namespace medusa::chat {

struct DecodeSettings {
    std::string model_path = MEDUSA_SHARED_DIR "/models/stories260K.bin";
    std::string tokenizer_path = MEDUSA_SHARED_DIR "/models/tok512.model";
    std::string heads_path;  // empty: Medusa's initialisation from the model (no trained heads yet)
    bool medusa = true;      // false: plain decoding (a one-node tree through the same pipeline)
    std::string tree = "mc_sim_7b_63";  // preset, "dense:W1,W2,..", "chain:N" or a JSON file
    int num_heads = 4;                  // deeper tree levels are cut off
    AcceptRule rule = AcceptRule::Greedy;
    float temperature = 0.7f;  // typical and sample
    float typical_eps = 0.09f;
    float typical_delta = 0.3f;
    uint64_t seed = 1;
    int max_new_tokens = 200;
    int max_steps = 0;  // 0: no limit (the screenshot mode stops after N steps)

    // Everything the loaded decoder depends on; a change means rebuilding it.
    std::string decoder_key() const;
    // "medusa (mc_sim_7b_63, 4 heads, greedy)" or "plain"
    std::string mode_name() const;
};

}  // namespace medusa::chat
