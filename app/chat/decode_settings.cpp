#include "decode_settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>


namespace medusa::chat {

DecodingSpec DecodeSettings::spec() const {
    DecodingSpec d;
    switch (mode) {
        case DrafterKind::Plain: d.drafter = PlainSpec{}; break;
        case DrafterKind::Medusa:
            d.drafter = MedusaSpec{.heads = heads_path, .num_heads = std::max(1, num_heads), .tree = tree,
                                   .max_depth = std::max(1, num_heads)};
            break;
        case DrafterKind::DraftModel:
            d.drafter = DraftModelSpec{.model = draft_path,
                                       .gamma = std::clamp(gamma, 1, kMaxDraftedTokens),
                                       .adaptive_gamma = adaptive_gamma,
                                       .branches = std::clamp(draft_branches, 1, 8)};
            break;
        case DrafterKind::Ngram: d.drafter = NgramSpec{.max_tokens = std::clamp(ngram_tokens, 1, kMaxDraftedTokens)}; break;
        case DrafterKind::Eagle:
            d.drafter = EagleSpec{.layer = eagle_path,
                                  .tree = eagle_tree,
                                  .top_k = std::clamp(eagle_top_k, 1, 32),
                                  .depth = std::clamp(eagle_depth, 1, 16),
                                  .nodes = std::clamp(eagle_nodes, 1, kMaxDraftedTokens)};
            break;
    }
    d.rule = rule;
    // Greedy decoding is temperature 0; the penalty looks back 64 tokens, as llama.cpp's default.
    d.sampling = {rule == AcceptRule::Greedy ? 0.0f : temperature, top_p, seed, top_k, repeat_penalty, 64};
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

std::string default_cache_dir() {
    if (const char* c = std::getenv("MEDUSA_CACHE"); c && *c) return c;
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/medusa-vk";
    return "";
}

TrainedDefaults find_trained_defaults(const std::string& cache_dir, const std::string& model_name) {
    namespace fs = std::filesystem;
    TrainedDefaults d;
    if (cache_dir.empty()) return d;
    d.cache_dir = cache_dir + "/" + model_name;
    std::error_code ec;
    if (fs::is_regular_file(d.cache_dir + "/heads/medusa_lm_head.safetensors", ec)) d.heads_path = d.cache_dir + "/heads";
    if (fs::is_regular_file(d.cache_dir + "/tree.json", ec)) d.tree_path = d.cache_dir + "/tree.json";
    if (fs::is_regular_file(d.cache_dir + "/eagle/model.safetensors", ec)) d.eagle_path = d.cache_dir + "/eagle";
    return d;
}

std::string apply_trained_defaults(DecodeSettings& s, const std::string& cache_dir, bool heads_chosen,
                                   bool tree_chosen) {
    const DecodeSettings defaults;
    if (s.model_path != defaults.model_path) return "";
    const TrainedDefaults d = find_trained_defaults(cache_dir, "stories260K");
    if (s.eagle_path.empty()) s.eagle_path = d.eagle_path;
    if (!d.found())
        return "No trained heads in " + (d.cache_dir.empty() ? std::string("the cache") : d.cache_dir) +
               " (scripts/train_default_heads.sh makes them): untrained init heads, tree " + s.tree + ".";
    if (!heads_chosen) s.heads_path = d.heads_path;
    if (!tree_chosen) s.tree = d.tree_path;
    return "Trained heads and the tree tuned for this device, from " + d.cache_dir + ".";
}

}  // namespace medusa::chat
