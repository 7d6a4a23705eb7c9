#include "decoding/drafting.h"

#include <algorithm>
#include <filesystem>

#include "decode/draft_model_drafter.h"
#include "decode/eagle_drafter.h"
#include "decode/medusa_drafter.h"
#include "decode/ngram_drafter.h"
#include "decoding/overloaded.h"
#include "llm/eagle_layer_io.h"
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

void build_medusa(const MedusaSpec& m, const DraftingTarget& target, const Drafting* reuse, Drafting& d) {
    d.tree = medusa_tree(m);
    const auto* old = reuse ? std::get_if<MedusaSpec>(&reuse->spec) : nullptr;
    if (old && reuse->heads && old->heads == m.heads && old->num_heads == m.num_heads) {
        d.heads = reuse->heads;
    } else if (m.heads.empty()) {
        const int count = m.num_heads > 0 ? m.num_heads : std::max(1, d.tree.max_depth);
        d.heads = std::make_shared<const MedusaHeads>(MedusaHeads::init_from_model(target.file, count));
    } else {
        d.heads = std::make_shared<const MedusaHeads>(load_medusa_heads(m.heads, target.file.config));
    }
    // Heads from a file may hold NaN; initialised heads are the model's own classifier, whose NaN
    // is the model's error, reported as such when decoding starts.
    if (const std::string note = d.heads->non_finite_note(); !m.heads.empty() && !note.empty())
        d.warnings.push_back(note);
    d.drafter = std::make_unique<MedusaDrafter>(target.runner, target.file, *d.heads, d.tree);
    d.summary = "medusa (" + d.heads->source + ", " + std::to_string(d.heads->count()) + " heads, " +
                std::to_string(d.tree.num_nodes) + "-node tree" + (m.choices ? "" : " " + m.tree) + ")";
}

void build_draft_model(const DraftModelSpec& s, const DraftingTarget& target, const Drafting* reuse, Drafting& d,
                       const std::function<void(const std::string&)>& progress) {
    if (reuse && reuse->draft && reuse->draft->path == s.model) {
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
    d.drafter = std::make_unique<DraftModelDrafter>(d.draft->model(), o);
    const LlamaConfig& c = d.draft->file.config;
    d.summary = "draft " + file_name(s.model) + " (" + d.draft->file.format + ", " + std::to_string(c.n_layers) +
                " layers, dim " + std::to_string(c.dim) + "; gamma " + std::to_string(o.gamma) +
                (o.adaptive_gamma ? " adaptive" : "") +
                (o.branches > 1 ? ", tree of " + std::to_string(o.branches) + " branches" : "") + ")";
}

void build_eagle(const EagleSpec& s, const DraftingTarget& target, Drafting& d) {
    const EagleLayer layer = load_eagle_layer(s.layer, target.file.config);
    EagleOptions o;
    o.top_k = s.top_k;
    o.depth = s.depth;
    o.nodes = s.nodes;
    if (s.tree != "dynamic") o.choices = load_tree(s.tree, {.topk = 32, .max_depth = 16}).choices;
    d.eagle = target.runner.eagle_runner(target.file, layer);
    d.drafter = std::make_unique<EagleDrafter>(*d.eagle, o);
    d.summary = "eagle (" + layer.source + ", " +
                (o.choices.empty() ? "EAGLE-2 dynamic tree: top-" + std::to_string(o.top_k) + ", depth " +
                                         std::to_string(o.depth) + ", " + std::to_string(o.nodes) + " nodes"
                                   : "EAGLE-1 tree " + s.tree) +
                ")";
}

}  // namespace

Drafting build_drafting(const DrafterSpec& spec, const DraftingTarget& target, const Drafting* reuse,
                        const std::function<void(const std::string&)>& progress) {
    Drafting d;
    d.spec = spec;
    std::visit(Overloaded{[&](const PlainSpec&) {
                              d.drafter = std::make_unique<NoDrafter>();
                              d.summary = "plain decoding";
                          },
                          [&](const MedusaSpec& m) { build_medusa(m, target, reuse, d); },
                          [&](const DraftModelSpec& s) { build_draft_model(s, target, reuse, d, progress); },
                          [&](const NgramSpec& s) {
                              d.drafter = std::make_unique<NgramDrafter>(
                                  NgramOptions{.max_tokens = s.max_tokens, .max_match = s.max_match, .branches = s.branches});
                              d.summary = "n-gram lookup (up to " + std::to_string(s.max_tokens) +
                                          " tokens, matches of up to " + std::to_string(s.max_match) + ")";
                          },
                          [&](const EagleSpec& s) { build_eagle(s, target, d); }},
               spec);
    return d;
}

}  // namespace medusa
