#include "decode_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>


namespace medusa::chat {

DecodingSpec DecodeSettings::spec() const {
    DecodingSpec d;
    // "init", as the command line takes it: heads initialised from the model, as an empty path.
    const std::string heads = heads_path == "init" ? "" : heads_path;
    const MedusaSpec medusa{.heads = heads, .num_heads = std::max(1, num_heads), .tree = tree,
                            .max_depth = std::max(1, num_heads)};
    const DraftModelSpec draft{.model = draft_path,
                               .gamma = std::clamp(gamma, 1, kMaxDraftedTokens),
                               .adaptive_gamma = adaptive_gamma,
                               .branches = std::clamp(draft_branches, 1, 8)};
    const NgramSpec ngram{.max_tokens = std::clamp(ngram_tokens, 1, kMaxDraftedTokens)};
    const EagleSpec eagle{.layer = eagle_path,
                          .tree = eagle_tree,
                          .top_k = std::clamp(eagle_top_k, 1, 32),
                          .depth = std::clamp(eagle_depth, 1, 16),
                          .nodes = std::clamp(eagle_nodes, 1, kMaxDraftedTokens)};
    switch (mode) {
        case DrafterKind::Plain: d.drafter = PlainSpec{}; break;
        case DrafterKind::Medusa: d.drafter = medusa; break;
        case DrafterKind::DraftModel: d.drafter = draft; break;
        case DrafterKind::Ngram: d.drafter = ngram; break;
        case DrafterKind::Eagle: d.drafter = eagle; break;
        case DrafterKind::Auto:
            // Every drafter the settings have files for: trained heads, an EAGLE layer, a draft model.
            d.drafter = AutoSpec{.medusa = heads.empty() ? std::nullopt : std::optional(medusa),
                                 .eagle = eagle_path.empty() ? std::nullopt : std::optional(eagle),
                                 .draft = draft_path.empty() ? std::nullopt : std::optional(draft),
                                 .ngram = ngram};
            break;
    }
    d.shaping = fixed_shape && mode != DrafterKind::Auto ? StepShaping::Fixed : StepShaping::Controlled;
    d.rule = rule;
    // Greedy decoding is temperature 0; the penalty looks back 64 tokens, as llama.cpp's default.
    d.sampling = {rule == AcceptRule::Greedy ? 0.0f : temperature, top_p, seed, top_k, repeat_penalty, 64, min_p};
    d.typical = {typical_eps, typical_delta};
    d.max_new_tokens = max_new_tokens;
    return d;
}

DecodeSettings::DecoderKey DecodeSettings::decoder_key() const {
    DecoderKey k{model_path, tokenizer_path, ctx_size, spec()};
    k.spec.sampling.seed = 0;
    return k;
}

std::string DecodeSettings::mode_name() const { return describe(spec()); }

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

std::string apply_trained_defaults(DecodeSettings& s, const std::string& cache_dir, bool heads_chosen,
                                   bool tree_chosen) {
    const DecodeSettings defaults;
    if (s.model_path != defaults.model_path) return "";
    const TrainedDefaults d = find_trained_defaults(cache_dir, "stories260K");
    if (s.eagle_path.empty()) s.eagle_path = d.eagle_path;
    // The note says what it set, and nothing when it set nothing (chosen or restored files).
    if (!d.found())
        return heads_chosen ? ""
                            : "No trained heads in " + (d.cache_dir.empty() ? std::string("the cache") : d.cache_dir) +
                                  " (scripts/train_default_heads.sh makes them): untrained init heads, tree " + s.tree + ".";
    if (heads_chosen && tree_chosen) return "";
    if (!heads_chosen) s.heads_path = d.heads_path;
    if (!tree_chosen) s.tree = d.tree_path;
    const std::string what = heads_chosen ? "The tree tuned for this device"
                             : tree_chosen ? "Trained heads"
                                           : "Trained heads and the tree tuned for this device";
    return what + ", from " + d.cache_dir + ".";
}

bool defaults_note_applies(const DecodeSettings& now, const DecodeSettings& noted) {
    const bool medusa_in_use = now.mode == DrafterKind::Medusa || now.mode == DrafterKind::Auto;
    return medusa_in_use && now.model_path == noted.model_path && now.heads_path == noted.heads_path &&
           now.tree == noted.tree;
}

}  // namespace medusa::chat
