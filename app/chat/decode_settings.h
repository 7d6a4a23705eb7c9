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
    DrafterKind mode = DrafterKind::Medusa;  // which drafter proposes each step's candidates
    // Every mode's drafter as the spec takes it; spec() gives the chosen one. Medusa: cached_heads and
    // cached_tree leave the heads and the tree to what the cache (cache_dir, trained_files.h) holds for
    // the model (heads_field() and tree_field() are the words the fields and the saved settings show);
    // num_heads levels of the tree are kept. The draft model has the target's tokenizer.
    MedusaSpec medusa{.num_heads = 4, .cached_heads = true, .cached_tree = true};
    DraftModelSpec draft{.model = MEDUSA_SHARED_DIR "/models/stories260K_q80.bin"};
    NgramSpec ngram;
    EagleSpec eagle;  // no layer named: none
    // The drafter's own shape every step; off, the step controller shapes it (and in auto chooses
    // the drafter, or plain decoding).
    bool fixed_shape = false;
    AcceptRule rule = AcceptRule::Greedy;  // every mode's (greedy: temperature 0, whatever `sampling` says)
    // top_k 0, top_p 1, min_p 0 and repeat_penalty 1 are off; the penalty looks back 64 tokens, as
    // llama.cpp's default.
    SamplingParams sampling{.temperature = 0.7f, .top_p = 1.0f, .seed = 1};
    TypicalParams typical;
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

    // The mode's settings as the decoding spec (a Medusa tree cut to `num_heads` levels), values as
    // set: validate() names what is out of range.
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
    DecoderKey decoder_key(const DecodingSpec& spec) const;  // `spec`: spec()
    DecoderKey decoder_key() const { return decoder_key(spec()); }
    // describe(spec()): "medusa (mc_sim_7b_63, 4 heads, greedy)", "plain decoding", ...
    std::string mode_name() const;
};

// The heads as one word: "" for the cache's, "init" for untrained, else the path; and back.
std::string heads_field(const DecodeSettings& s);
void set_heads_field(DecodeSettings& s, const std::string& word);
// Medusa's tree as one word: "" for the one tuned with the cached heads (else MedusaSpec's
// default), else the tree's spec; and back.
std::string tree_field(const DecodeSettings& s);
void set_tree_field(DecodeSettings& s, const std::string& word);

// The drafters mode auto would choose among with these settings' files: n-gram lookup always,
// Medusa with a trained heads file, EAGLE with a layer, the draft model with a model file.
std::vector<DrafterKind> auto_drafters(const DecodeSettings& s);

}  // namespace medusa::chat
