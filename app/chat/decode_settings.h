// What the controls panel edits and saves: every mode's own settings at once (switching modes
// keeps the others'), of which spec() is what the worker decodes with.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decode/decoding_kinds.h"
#include "setup/decoding_spec.h"
#include "setup/trained_files.h"
#include "model/chat_template.h"

namespace medusa::chat {

struct DecodeSettings {
    std::string model_path = MEDUSA_SHARED_DIR "/models/stories260K.bin";
    std::string tokenizer_path = MEDUSA_SHARED_DIR "/models/tok512.model";
    // Medusa's heads: with heads_from_cache, those trained for the model in the cache
    // (trained_files.h), else untrained; otherwise heads_path (nullopt: untrained, whatever the
    // cache holds). heads_field() is the word the heads field and the saved settings show.
    bool heads_from_cache = true;
    HeadsPath heads_path;
    DrafterKind mode = DrafterKind::Medusa;  // which drafter proposes each step's candidates
    // A preset, "dense:W1,W2,..", "chain:N" or a JSON file; empty: the tree tuned with the cached
    // heads, else MedusaSpec's default.
    std::string tree;
    int num_heads = 4;                  // deeper tree levels are cut off
    AcceptRule rule = AcceptRule::Greedy;  // every mode's (greedy: temperature 0)
    // Draft mode: the draft model (same tokenizer as the target), levels drafted per step, and
    // children per drafted node (1: a chain).
    std::string draft_path = MEDUSA_SHARED_DIR "/models/stories260K_q80.bin";
    int gamma = 4;
    bool adaptive_gamma = false;
    int draft_branches = 1;
    int ngram_tokens = 8;      // n-gram mode: the longest continuation proposed
    // EAGLE mode: the draft layer's folder (EAGLE's layout), and EAGLE-2's dynamic tree (expand the
    // top-k of each level, keep the likeliest `eagle_nodes`) or an EAGLE-1 tree spec.
    std::string eagle_path;
    // The drafter's own shape every step; off, the step controller shapes it (and in auto chooses
    // the drafter, or plain decoding).
    bool fixed_shape = false;
    EagleTree eagle_tree;
    int eagle_top_k = 8, eagle_depth = 6, eagle_nodes = 59;
    float temperature = 0.7f;  // typical and sample
    int top_k = 0;             // 0: off
    float top_p = 1.0f;        // 1: off
    float min_p = 0.0f;        // 0: off
    float repeat_penalty = 1.0f;
    float typical_eps = 0.09f;
    float typical_delta = 0.3f;
    uint64_t seed = 1;
    int max_new_tokens = 200;
    int ctx_size = 0;  // positions of the KV cache; 0: the model's context up to kDefaultContext (--ctx-size)
    std::string system_prompt;  // chat models: empty means the family's default
    // Chat templates chosen in the app for models with none or the wrong one, by model path (a name
    // chat_template_names() lists, "none" included); a model not listed is spoken to in its own.
    std::map<std::string, std::string> chat_templates;
    // The one chosen for model_path (nullopt: the model's own); throws std::invalid_argument
    // naming a name no template has.
    std::optional<ChatTemplate> chosen_chat_template() const;
    int max_steps = 0;  // 0: no limit (the screenshot mode stops after N steps)
    std::string cache_dir = default_cache_dir();  // where files trained for a model are looked up (not saved)

    // The mode's settings as the decoding spec (a Medusa tree cut to `num_heads` levels).
    DecodingSpec spec() const;
    // Everything the loaded decoder depends on; a change means rebuilding it. The seed is not part
    // of it: each generation reseeds.
    struct DecoderKey {
        std::string model_path, tokenizer_path;
        int ctx_size = 0;
        std::string chat_template;  // chosen for the model ("": its own)
        DecodingSpec spec;
        bool operator==(const DecoderKey&) const = default;
    };
    DecoderKey decoder_key() const;
    // describe(spec()): "medusa (mc_sim_7b_63, 4 heads, greedy)", "plain decoding", ...
    std::string mode_name() const;
};

// The heads as one word: "" for the cache's, "init" for untrained, else the path; and back.
std::string heads_field(const DecodeSettings& s);
void set_heads_field(DecodeSettings& s, const std::string& word);

// The drafters mode auto would choose among with these settings' files: n-gram lookup always,
// Medusa with a trained heads file, EAGLE with a layer, the draft model with a model file.
std::vector<DrafterKind> auto_drafters(const DecodeSettings& s);

}  // namespace medusa::chat
