#include "setup/decoding_spec.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "setup/overloaded.h"

namespace medusa {

namespace {

void require(bool ok, const std::string& message) {
    if (!ok) throw SpecError(message);
}

void check_range(int v, int lo, int hi, const char* flag) {
    require(v >= lo && v <= hi, std::string(flag) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi));
}

std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string rule_text(const DecodingSpec& s) {
    const AcceptRule rule = effective_rule(s);
    std::string r = accept_rule_name(rule);
    if (rule != AcceptRule::Greedy) {
        char t[32];
        std::snprintf(t, sizeof t, " T=%.2f", s.sampling.temperature);
        r += t;
    }
    return r;
}

void validate_medusa(const MedusaSpec& m) {
    require(!m.heads || !m.heads->empty(), "--heads needs a heads file or folder, or 'init' for untrained heads");
    require(m.num_heads >= 0, "--num-heads must be >= 1");
    require(m.max_depth >= 0, "the Medusa tree's depth limit must be >= 0");
    require(!m.tree.empty() || m.choices, "--tree needs a preset, a spec or a file");
}

void validate_draft(const DraftModelSpec& d) {
    require(!d.model.empty(), "--draft-model needs the draft model's file");
    check_range(d.gamma, 1, kMaxDraftedTokens, "--gamma");
    check_range(d.branches, 1, 8, "--draft-tree");
}

void validate_ngram(const NgramSpec& n) {
    check_range(n.max_tokens, 1, kMaxDraftedTokens, "--ngram");
    require(n.max_match >= 1, "--ngram-match must be >= 1");
    check_range(n.branches, 1, 16, "--ngram-branches");
}

void validate_eagle(const EagleSpec& e) {
    require(!e.layer.empty(),
            "--eagle needs the draft layer's folder: train one with `medusa train-eagle` (or "
            "scripts/train_default_heads.sh)");
    require(e.tree.dynamic() || !e.tree.fixed->empty(), "--eagle-tree needs 'dynamic' or a tree spec");
    check_range(e.top_k, 1, 32, "--eagle-topk");
    check_range(e.depth, 1, 16, "--eagle-depth");
    check_range(e.nodes, 1, kMaxDraftedTokens, "--eagle-nodes");
}

// The drafter's part of describe(), without the rule.
std::string medusa_text(const MedusaSpec& m) {
    const std::string tree = m.choices ? std::to_string(m.choices->size() + 1) + "-node tree"
                             : m.tree.find('/') != std::string::npos
                                 ? std::filesystem::path(m.tree).filename().string()  // a JSON file
                                 : m.tree;
    const int heads = m.max_depth > 0 ? m.max_depth : m.num_heads;
    const std::string h = heads > 0        ? std::to_string(heads) + " heads"
                          : !m.heads ? std::string("init heads")
                                     : std::filesystem::path(*m.heads).filename().string();
    return tree + ", " + h;
}

std::string draft_text(const DraftModelSpec& d) {
    return file_stem(d.model) + ", gamma " + std::to_string(d.gamma) + (d.adaptive_gamma ? " adaptive" : "") +
           (d.branches > 1 ? ", " + std::to_string(d.branches) + " branches" : "");
}

std::string ngram_text(const NgramSpec& n) {
    return std::to_string(n.max_tokens) + " tokens" +
           (n.branches > 1 ? ", " + std::to_string(n.branches) + " branches" : "");
}

// The tree policy only: EAGLE-2's dynamic tree serves EAGLE-3 layers too, and the layer's own
// version is named where it is loaded.
std::string eagle_text(const EagleSpec& e) {
    return e.tree.dynamic() ? "dynamic tree, " + std::to_string(e.nodes) + " nodes" : *e.tree.fixed;
}

}  // namespace

namespace {

constexpr const char* kUntrainedHeadsWord = "init";
constexpr const char* kDynamicTreeWord = "dynamic";

}  // namespace

HeadsPath parse_heads_word(const std::string& word) {
    if (word == kUntrainedHeadsWord) return std::nullopt;
    return word;
}

std::string heads_word(const HeadsPath& heads) { return heads ? *heads : kUntrainedHeadsWord; }

EagleTree parse_eagle_tree(const std::string& word) {
    return word == kDynamicTreeWord ? EagleTree{} : EagleTree{.fixed = word};
}

std::string eagle_tree_word(const EagleTree& tree) { return tree.fixed ? *tree.fixed : kDynamicTreeWord; }

DrafterKind drafter_kind(const DrafterSpec& spec) {
    return std::visit(Overloaded{[](const PlainSpec&) { return DrafterKind::Plain; },
                                 [](const MedusaSpec&) { return DrafterKind::Medusa; },
                                 [](const DraftModelSpec&) { return DrafterKind::DraftModel; },
                                 [](const NgramSpec&) { return DrafterKind::Ngram; },
                                 [](const EagleSpec&) { return DrafterKind::Eagle; },
                                 [](const AutoSpec&) { return DrafterKind::Auto; }},
                      spec);
}

AcceptRule effective_rule(const DecodingSpec& spec) {
    return spec.sampling.temperature > 0 ? spec.rule : AcceptRule::Greedy;
}

void validate(const DecodingSpec& spec) {
    const SamplingParams& s = spec.sampling;
    require(spec.max_new_tokens >= 0, "-n must be >= 0");
    require(s.temperature >= 0, "--temp must be >= 0");
    require(s.top_p > 0 && s.top_p <= 1, "--top-p must be in (0, 1]");
    require(s.min_p >= 0 && s.min_p < 1, "--min-p must be in [0, 1)");
    require(s.top_k >= 0, "--top-k must be >= 0 (0: off)");
    require(s.repeat_penalty > 0, "--repeat-penalty must be > 0 (1: off)");
    require(s.repeat_last_n >= 0, "--repeat-last-n must be >= 0");
    require(std::isfinite(s.frequency_penalty) && std::fabs(s.frequency_penalty) <= 2, "the frequency penalty must be in -2..2");
    require(std::isfinite(s.presence_penalty) && std::fabs(s.presence_penalty) <= 2, "the presence penalty must be in -2..2");
    for (const auto& [token, bias] : s.logit_bias)
        require(token >= 0 && std::isfinite(bias) && std::fabs(bias) <= 100, "a logit bias must be in -100..100 for a token id");
    require(spec.typical.eps >= 0 && spec.typical.delta >= 0, "--typical-eps and --typical-delta must be >= 0");
    std::visit(Overloaded{[](const PlainSpec&) {}, [](const MedusaSpec& m) { validate_medusa(m); },
                          [](const DraftModelSpec& d) { validate_draft(d); }, [](const NgramSpec& n) { validate_ngram(n); },
                          [](const EagleSpec& e) { validate_eagle(e); },
                          [](const AutoSpec& a) {
                              if (a.medusa) validate_medusa(*a.medusa);
                              if (a.eagle) validate_eagle(*a.eagle);
                              if (a.draft) validate_draft(*a.draft);
                              validate_ngram(a.ngram);
                          }},
               spec.drafter);
    require(spec.shaping == StepShaping::Controlled || !std::holds_alternative<AutoSpec>(spec.drafter),
            "--speculate auto chooses each step's shape and cannot be combined with --fixed-shape");
}

std::string describe(const DecodingSpec& spec) {
    const std::string rule = rule_text(spec);
    const std::string tail = (spec.shaping == StepShaping::Fixed ? ", fixed shape, " : ", ") + rule + ")";
    return std::visit(
        Overloaded{[&](const PlainSpec&) {
                       return effective_rule(spec) == AcceptRule::Greedy ? std::string("plain decoding")
                                                                         : "plain decoding (" + rule + ")";
                   },
                   [&](const MedusaSpec& m) { return "medusa (" + medusa_text(m) + tail; },
                   [&](const DraftModelSpec& d) { return "draft (" + draft_text(d) + tail; },
                   [&](const NgramSpec& n) { return "n-gram (" + ngram_text(n) + tail; },
                   [&](const EagleSpec& e) { return "eagle (" + eagle_text(e) + tail; },
                   [&](const AutoSpec& a) {
                       std::string parts = "n-gram";
                       if (a.medusa) parts += " + medusa";
                       if (a.eagle) parts += " + eagle";
                       if (a.draft) parts += " + draft " + file_stem(a.draft->model);
                       return "auto (" + parts + tail;
                   }},
        spec.drafter);
}

DecodeOptions decode_options(const DecodingSpec& spec, std::vector<int> stop_tokens) {
    DecodeOptions o;
    o.max_new_tokens = spec.max_new_tokens;
    o.sampling = spec.sampling;
    o.rule = spec.rule;
    o.typical = spec.typical;
    o.stop_tokens = std::move(stop_tokens);
    return o;
}

}  // namespace medusa
