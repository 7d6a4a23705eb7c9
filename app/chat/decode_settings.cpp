#include "decode_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace medusa::chat {

DecodingSpec DecodeSettings::spec() const {
    DecodingSpec d;
    const HeadsPath heads = heads_from_cache ? std::nullopt : heads_path;
    const MedusaSpec medusa{.heads = heads,
                            .num_heads = std::max(1, num_heads),
                            .tree = tree.empty() ? MedusaSpec{}.tree : tree,
                            .max_depth = std::max(1, num_heads),
                            .trained_cache = cache_dir,
                            .cached_heads = heads_from_cache,
                            .cached_tree = tree.empty()};
    // Values as set, out of range too: validate() names what is wrong where the app shows it.
    const DraftModelSpec draft{
        .model = draft_path, .gamma = gamma, .adaptive_gamma = adaptive_gamma, .branches = draft_branches};
    const NgramSpec ngram{.max_tokens = ngram_tokens};
    const EagleSpec eagle{
        .layer = eagle_path, .tree = eagle_tree, .top_k = eagle_top_k, .depth = eagle_depth, .nodes = eagle_nodes};
    switch (mode) {
        case DrafterKind::Plain: d.drafter = PlainSpec{}; break;
        case DrafterKind::Medusa: d.drafter = medusa; break;
        case DrafterKind::DraftModel: d.drafter = draft; break;
        case DrafterKind::Ngram: d.drafter = ngram; break;
        case DrafterKind::Eagle: d.drafter = eagle; break;
        case DrafterKind::Auto:
            // Every drafter the settings have files for: trained heads, an EAGLE layer, a draft
            // model; and what the cache holds for the model where they name none.
            d.drafter = AutoSpec{.medusa = heads ? std::optional(medusa) : std::nullopt,
                                 .eagle = eagle_path.empty() ? std::nullopt : std::optional(eagle),
                                 .draft = draft_path.empty() ? std::nullopt : std::optional(draft),
                                 .ngram = ngram,
                                 .trained_cache = heads_from_cache || heads ? cache_dir : std::string()};
            break;
    }
    // A mode the user picked shows its drafter's work every step: the controller shapes the draft
    // but never drops it for plain decoding (auto is the controller's own choice, plain included).
    d.shaping = mode == DrafterKind::Auto ? StepShaping::Controlled
                : fixed_shape             ? StepShaping::Fixed
                                          : StepShaping::AlwaysDraft;
    d.rule = rule;
    // Greedy decoding is temperature 0; the penalty looks back 64 tokens, as llama.cpp's default.
    d.sampling = {rule == AcceptRule::Greedy ? 0.0f : temperature, top_p, seed, top_k, repeat_penalty, 64, min_p};
    d.typical = {typical_eps, typical_delta};
    d.max_new_tokens = max_new_tokens;
    return d;
}

std::optional<ChatTemplate> DecodeSettings::chosen_chat_template() const {
    const auto it = chat_templates.find(model_path);
    if (it == chat_templates.end() || it->second.empty()) return std::nullopt;
    if (const auto t = parse_chat_template(it->second)) return t;
    throw std::invalid_argument("chat template '" + it->second + "' chosen for " + model_path + " is none of " +
                                chat_template_names(", "));
}

DecodeSettings::DecoderKey DecodeSettings::decoder_key() const {
    const auto chosen = chat_templates.find(model_path);
    DecoderKey k{model_path, tokenizer_path, ctx_size, chosen == chat_templates.end() ? "" : chosen->second, spec()};
    k.spec.sampling.seed = 0;
    return k;
}

std::string DecodeSettings::mode_name() const { return describe(spec()); }

std::string heads_field(const DecodeSettings& s) { return s.heads_from_cache ? "" : heads_word(s.heads_path); }

void set_heads_field(DecodeSettings& s, const std::string& word) {
    s.heads_from_cache = word.empty();
    s.heads_path = s.heads_from_cache ? std::nullopt : parse_heads_word(word);
}

std::vector<DrafterKind> auto_drafters(const DecodeSettings& s) {
    DecodeSettings a = s;
    a.mode = DrafterKind::Auto;
    const AutoSpec spec = std::get<AutoSpec>(a.spec().drafter);  // what auto is given, not a second reading
    std::vector<DrafterKind> out = {DrafterKind::Ngram};
    if (spec.medusa) out.push_back(DrafterKind::Medusa);
    if (spec.eagle) out.push_back(DrafterKind::Eagle);
    if (spec.draft) out.push_back(DrafterKind::DraftModel);
    return out;
}

}  // namespace medusa::chat
