#include "setup/drafting.h"

#include <algorithm>
#include <filesystem>

#include "decode/controlled_drafter.h"
#include "decode/draft_model_drafter.h"
#include "decode/eagle_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "setup/cost_measurement.h"
#include "setup/overloaded.h"
#include "setup/trained_files.h"
#include "llm/eagle_layer_io.h"
#include "llm/kernel_tuning.h"
#include "llm/medusa_heads_io.h"

namespace medusa {

namespace {

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The spec's tree, cut to its depth limit.
TreeBuffers medusa_tree(const MedusaSpec& m) {
    MedusaTree t = m.choices ? make_tree(*m.choices) : load_tree(m.tree);
    if (m.max_depth <= 0) return build_tree_buffers(t);
    std::vector<std::vector<int>> kept;
    for (const auto& c : t.choices)
        if (int(c.size()) <= m.max_depth) kept.push_back(c);
    return build_tree_buffers(make_tree(kept, t.name));
}

std::unique_ptr<Drafter> build_medusa(const MedusaSpec& m, const DraftingTarget& target, const Drafting* reuse,
                                      Drafting& d) {
    d.tree = medusa_tree(m);
    const MedusaSpec* old = reuse ? std::get_if<MedusaSpec>(&reuse->spec) : nullptr;
    if (const auto* a = reuse ? std::get_if<AutoSpec>(&reuse->spec) : nullptr; a && a->medusa) old = &*a->medusa;
    if (old && reuse->heads && old->heads == m.heads && old->num_heads == m.num_heads) {
        d.heads = reuse->heads;
    } else if (!m.heads) {
        const int count = m.num_heads > 0 ? m.num_heads : std::max(1, d.tree.max_depth);
        d.heads = std::make_shared<const MedusaHeads>(MedusaHeads::init_from_model(target.file, count));
    } else {
        d.heads = std::make_shared<const MedusaHeads>(load_medusa_heads(*m.heads, target.file.config));
    }
    // Heads from a file may hold NaN; initialised heads are the model's own classifier, whose NaN
    // is the model's error, reported as such when decoding starts.
    if (const std::string note = d.heads->non_finite_note(); m.heads && !note.empty())
        d.warnings.push_back(note);
    d.summary = "medusa (" + (!m.heads ? std::string("untrained heads") : "heads " + d.heads->source) + ", " +
                std::to_string(d.heads->count()) + " heads, " + std::to_string(d.tree.num_nodes) + "-node tree" +
                (m.choices ? "" : " " + m.tree) + ")";
    return std::make_unique<MedusaDrafter>(target.runner, target.file, *d.heads, d.tree);
}

std::unique_ptr<Drafter> build_draft_model(const DraftModelSpec& s, const DraftingTarget& target,
                                           const Drafting* reuse, Drafting& d,
                                           const std::function<void(const std::string&)>& progress) {
    if (reuse && reuse->draft && reuse->draft->path == s.model) {  // the same model, in any mode
        d.draft = reuse->draft;
    } else {
        if (progress) progress("loading the draft model " + s.model);
        auto m = std::make_shared<DraftModel>();
        m->path = s.model;
        m->file = load_draft_model(s.model, target.file);
        const int context = std::min(target.context, m->file.config.seq_len);
        if (target.gpu) m->gpu = std::make_unique<GpuModel>(*target.gpu, m->file, GpuModelOptions{.context = context});
        else m->cpu = std::make_unique<CpuReferenceModel>(m->file, context);
        d.draft = std::move(m);
    }
    DraftModelOptions o;
    o.gamma = s.gamma;
    o.adaptive_gamma = s.adaptive_gamma;
    o.max_gamma = std::max(o.gamma, 16);
    o.branches = s.branches;
    const LlamaConfig& c = d.draft->file.config;
    d.summary = "draft " + file_name(s.model) + " (" + format_name(d.draft->file.format) + ", " + std::to_string(c.n_layers) +
                " layers, dim " + std::to_string(c.dim) + "; gamma " + std::to_string(o.gamma) +
                (o.adaptive_gamma ? " adaptive" : "") +
                (o.branches > 1 ? ", tree of " + std::to_string(o.branches) + " branches" : "") + ")";
    return std::make_unique<DraftModelDrafter>(d.draft->model(), o);
}

// A layer whose drafts would be NaN gives plain decoding, with a warning naming its file: NaN
// drafts would read as the target's NaN logits.
std::unique_ptr<Drafter> build_eagle(const EagleSpec& s, const DraftingTarget& target, Drafting& d) {
    const EagleLayer layer = load_eagle_layer(s.layer, target.file.config);
    if (const std::string note = layer.non_finite_note(); !note.empty()) {
        d.warnings.push_back(note + ": decoding goes on without it");
        d.summary = "plain decoding (the EAGLE layer " + layer.source + " is unusable)";
        return std::make_unique<NoDrafter>();
    }
    EagleOptions o;
    o.top_k = s.top_k;
    o.depth = s.depth;
    o.nodes = s.nodes;
    if (s.tree.fixed) o.choices = load_tree(*s.tree.fixed, {.topk = 32, .max_depth = 16}).choices;
    if (o.choices.empty() && o.depth > eagle_deepest_level(o.top_k)) {
        o.depth = eagle_deepest_level(o.top_k);
        d.warnings.push_back("EAGLE drafts " + std::to_string(o.depth) + " levels, not " + std::to_string(s.depth) +
                             ": with top-k " + std::to_string(s.top_k) + ", a deeper level would look back on more than " +
                             std::to_string(TokenBlock::kMaxTokens) + " drafted tokens");
    }
    d.eagle = target.runner.eagle_runner(target.file, layer);
    d.eagle_reads = EagleReads{layer.version, layer.target_layers, layer.fuses(), layer.draft_vocab(),
                               target.file.config.vocab_size};
    std::string version;  // EAGLE-3 names its target layers and draft vocabulary; EAGLE-1/2 by tree
    if (layer.eagle3()) {
        std::string layers;
        for (int l : layer.target_layers) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
        version = "EAGLE-3 from target layer" + std::string(layer.target_layers.size() > 1 ? "s " : " ") + layers +
                  (layer.fuses() ? " fused by fc" : "") + ", draft vocabulary " + std::to_string(layer.draft_vocab()) +
                  "; ";
    }
    const std::string tree = o.choices.empty() ? "dynamic tree: top-" + std::to_string(o.top_k) + ", depth " +
                                                     std::to_string(o.depth) + ", " + std::to_string(o.nodes) + " nodes"
                                               : "tree " + *s.tree.fixed;
    d.summary = "eagle (" + layer.source + ", " +
                (layer.eagle3() ? version + tree : (o.choices.empty() ? "EAGLE-2 " : "EAGLE-1 ") + tree) + ")";
    return std::make_unique<EagleDrafter>(*d.eagle, o);
}

std::unique_ptr<Drafter> build_ngram(const NgramSpec& s, Drafting& d) {
    d.summary = "n-gram lookup (up to " + std::to_string(s.max_tokens) + " tokens, matches of up to " +
                std::to_string(s.max_match) + ")";
    return std::make_unique<NgramDrafter>(
        NgramOptions{.max_tokens = s.max_tokens, .max_match = s.max_match, .branches = s.branches});
}

// How many tokens a level of EAGLE's tree runs: the top-k frontier of its dynamic tree.
int eagle_width(const DrafterSpec& spec) {
    if (const auto* e = std::get_if<EagleSpec>(&spec)) return e->top_k;
    if (const auto* a = std::get_if<AutoSpec>(&spec); a && a->eagle) return a->eagle->top_k;
    return 1;
}

// Auto's drafters: n-gram lookup, then each one the spec names, loaded as its own mode loads it.
void build_auto(const AutoSpec& a, const DraftingTarget& target, const Drafting* reuse, Drafting& d,
                const std::function<void(const std::string&)>& progress) {
    std::vector<std::string> parts;
    d.members.push_back(build_ngram(a.ngram, d));
    parts.push_back(d.summary);
    if (a.medusa) d.members.push_back(build_medusa(*a.medusa, target, reuse, d)), parts.push_back(d.summary);
    if (a.eagle)
        if (auto eagle = build_eagle(*a.eagle, target, d); eagle->kind() == DrafterKind::Eagle)
            d.members.push_back(std::move(eagle)), parts.push_back(d.summary);
    if (a.draft) d.members.push_back(build_draft_model(*a.draft, target, reuse, d, progress)), parts.push_back(d.summary);
    d.summary = "auto: ";
    for (size_t i = 0; i < parts.size(); ++i) d.summary += (i ? " + " : "") + parts[i];
}

// Medusa's heads and tree, where the spec leaves them to the cache: what was trained for the target.
void settle_medusa(MedusaSpec& m, const ModelFile& model) {
    if (!m.trained_cache.empty() && (m.cached_heads || m.cached_tree)) {
        const TrainedFiles t = find_trained_files(m.trained_cache, model);
        if (m.cached_heads && !t.heads_path.empty()) m.heads = t.heads_path;
        if (m.cached_tree && !t.tree_path.empty()) m.tree = t.tree_path, m.choices.reset();
    }
    m.trained_cache.clear(), m.cached_heads = m.cached_tree = false;
}

// The spec with the cache's files for the target in the places it leaves to them: what is
// loaded, compared with what a previous Drafting loaded, and described.
DrafterSpec with_trained_files(DrafterSpec spec, const ModelFile& model) {
    if (auto* m = std::get_if<MedusaSpec>(&spec)) settle_medusa(*m, model);
    if (auto* a = std::get_if<AutoSpec>(&spec)) {
        if (!a->trained_cache.empty()) {
            const TrainedFiles t = find_trained_files(a->trained_cache, model);
            if (!a->medusa && !t.heads_path.empty()) {
                a->medusa = MedusaSpec{.heads = t.heads_path};
                if (!t.tree_path.empty()) a->medusa->tree = t.tree_path;
            }
            if (!a->eagle && !t.eagle_path.empty()) a->eagle = EagleSpec{.layer = t.eagle_path};
            a->trained_cache.clear();
        }
        if (a->medusa) settle_medusa(*a->medusa, model);
    }
    return spec;
}

}  // namespace

Drafting build_drafting(const DrafterSpec& spec, const DraftingTarget& target, const Drafting* reuse,
                        const std::function<void(const std::string&)>& progress, StepShaping shaping) {
    Drafting d;
    d.spec = with_trained_files(spec, target.file);
    std::unique_ptr<Drafter> one;
    std::visit(Overloaded{[&](const PlainSpec&) {
                              d.drafter = std::make_unique<NoDrafter>();
                              d.summary = "plain decoding";
                          },
                          [&](const MedusaSpec& m) { one = build_medusa(m, target, reuse, d); },
                          [&](const DraftModelSpec& s) { one = build_draft_model(s, target, reuse, d, progress); },
                          [&](const NgramSpec& s) { one = build_ngram(s, d); },
                          [&](const EagleSpec& s) { one = build_eagle(s, target, d); },
                          [&](const AutoSpec& a) { build_auto(a, target, reuse, d, progress); }},
               d.spec);
    if (one && (shaping == StepShaping::Fixed || one->kind() == DrafterKind::Plain)) d.drafter = std::move(one);
    else if (one) d.members.push_back(std::move(one));
    if (!d.members.empty()) {
        std::vector<Drafter*> members;
        for (const auto& m : d.members) members.push_back(m.get());
        auto controlled = std::make_unique<ControlledDrafter>(
            std::move(members), target_costs(target, CostRefresh::UseCache, progress),
            ControlOptions{.always_draft = shaping == StepShaping::AlwaysDraft});
        // The model drafters' own cost per level, measured now rather than found out in a step.
        for (size_t i = 0; i < d.members.size(); ++i) {
            if (d.members[i]->kind() == DrafterKind::DraftModel)
                controlled->set_level_ms(i, drafter_cost_ms(target, "draft " + tuning_model_key(d.draft->file),
                                                             [&] { return draft_level_ms(d.draft->model()); }));
            if (d.members[i]->kind() == DrafterKind::Eagle) {
                const int width = eagle_width(d.spec);
                controlled->set_level_ms(
                    i, drafter_cost_ms(target, "eagle " + tuning_model_key(target.file) + " top-" + std::to_string(width),
                                       [&] { return eagle_level_ms(*d.eagle, width); }));
            }
            // (the C++ reference's stage runs apart from its pass: its steps show what it costs)
            if (const DraftStage* stage = d.members[i]->device_stage(); stage && target.gpu)
                controlled->set_stage_ms(
                    i, drafter_cost_ms(target,
                                       "medusa " + tuning_model_key(target.file) + " heads " +
                                           std::to_string(d.heads->count()) + " nodes " + std::to_string(stage->nodes()),
                                       [&] { return stage_ms(target.runner, *stage, 2); }));
        }
        d.drafter = std::move(controlled);
    }
    return d;
}

}  // namespace medusa
