#include "decode_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace medusa::chat {

DecodingSpec DecodeSettings::spec() const {
    DecodingSpec d;
    MedusaSpec cut = medusa;
    cut.num_heads = cut.max_depth = std::max(1, medusa.num_heads);
    cut.trained_cache = cache_dir;
    // Values as set, out of range too: validate() names what is wrong where the app shows it.
    switch (mode) {
        case DrafterKind::Plain: d.drafter = PlainSpec{}; break;
        case DrafterKind::Medusa: d.drafter = cut; break;
        case DrafterKind::DraftModel: d.drafter = draft; break;
        case DrafterKind::Ngram: d.drafter = ngram; break;
        case DrafterKind::Eagle: d.drafter = eagle; break;
        case DrafterKind::Auto:
            // Every drafter the settings have files for: trained heads, an EAGLE layer, a draft
            // model; and what the cache holds for the model where they name none.
            d.drafter = AutoSpec{.medusa = medusa.heads ? std::optional(cut) : std::nullopt,
                                 .eagle = eagle.layer.empty() ? std::nullopt : std::optional(eagle),
                                 .draft = draft.model.empty() ? std::nullopt : std::optional(draft),
                                 .ngram = ngram,
                                 .trained_cache = medusa.cached_heads || medusa.heads ? cache_dir : std::string()};
            break;
    }
    // A mode the user picked shows its drafter's work every step: the controller shapes the draft
    // but never drops it for plain decoding (auto is the controller's own choice, plain included).
    d.shaping = mode == DrafterKind::Auto ? StepShaping::Controlled
                : fixed_shape             ? StepShaping::Fixed
                                          : StepShaping::AlwaysDraft;
    d.rule = rule;
    d.sampling = sampling;
    if (rule == AcceptRule::Greedy) d.sampling.temperature = 0.0f;  // greedy decoding is temperature 0
    d.typical = typical;
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

DecodeSettings::DecoderKey DecodeSettings::decoder_key(const DecodingSpec& spec) const {
    const auto chosen = chat_templates.find(model_path);
    DecoderKey k{model_path, tokenizer_path, ctx_size, chosen == chat_templates.end() ? "" : chosen->second, spec};
    k.spec.sampling.seed = 0;
    return k;
}

std::string DecodeSettings::mode_name() const { return describe(spec()); }

std::string heads_field(const DecodeSettings& s) { return s.medusa.cached_heads ? "" : heads_word(s.medusa.heads); }

void set_heads_field(DecodeSettings& s, const std::string& word) {
    s.medusa.cached_heads = word.empty();
    s.medusa.heads = s.medusa.cached_heads ? std::nullopt : parse_heads_word(word);
}

std::string tree_field(const DecodeSettings& s) { return s.medusa.cached_tree ? "" : s.medusa.tree; }

void set_tree_field(DecodeSettings& s, const std::string& word) {
    s.medusa.cached_tree = word.empty();
    s.medusa.tree = s.medusa.cached_tree ? MedusaSpec{}.tree : word;
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
