// How to decode, whatever front end asks: the drafter and what it drafts with, the sampling and
// the acceptance rule. The CLI's flags and the app's settings map onto one DecodingSpec;
// validate() refuses what cannot run, naming the flag; describe() is the line every front end
// shows for it; build_drafting() (drafting.h) loads what it names.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "decode/decoding_kinds.h"
#include "decode/speculative_decoder.h"
#include "llm/token_block.h"

namespace medusa {

// The most tokens any drafter may propose in one step: a verify block holds the root too.
constexpr int kMaxDraftedTokens = TokenBlock::kMaxTokens - 1;

struct PlainSpec {
    bool operator==(const PlainSpec&) const = default;
};

// Medusa heads to load: a file or folder in any layout read, or nullopt for untrained heads,
// initialised from the target's own classifier.
using HeadsPath = std::optional<std::string>;
// The front ends' word for heads: "init" is untrained heads (`--heads init`), else a path.
HeadsPath parse_heads_word(const std::string& word);
std::string heads_word(const HeadsPath& heads);

// Medusa heads on the target's last hidden state fill a sparse tree (--heads, --num-heads, --tree).
struct MedusaSpec {
    HeadsPath heads;                    // nullopt: untrained
    int num_heads = 0;                  // initialised heads: how many (0: one a tree level)
    std::string tree = "mc_sim_7b_63";  // a preset, dense:W1,W2,.., chain:N or a JSON file
    std::optional<std::vector<std::vector<int>>> choices;  // when set, the tree's rank paths themselves (not `tree`)
    int max_depth = 0;                  // the tree cut to this many levels (0: all of it)
    // A cache folder (trained_files.h) whose heads, and tree tuned with them, trained for the
    // target stand in for `heads` and `tree` where cached_heads and cached_tree leave them to it;
    // empty: nothing is looked up. build_drafting settles it, recognising the target by content.
    std::string trained_cache;
    bool cached_heads = false, cached_tree = false;
    bool operator==(const MedusaSpec&) const = default;
};

// A small model with the target's vocabulary drafts gamma levels (--draft-model, --gamma, ...).
struct DraftModelSpec {
    std::string model;
    int gamma = 4;  // levels drafted per step (the start value when adaptive)
    bool adaptive_gamma = false;
    int branches = 1;  // children per drafted node: 1 is a chain
    bool operator==(const DraftModelSpec&) const = default;
};

// What followed the latest earlier match of the text's last tokens (--ngram, --ngram-match, ...).
struct NgramSpec {
    int max_tokens = 8;  // the longest continuation drafted
    int max_match = 4;   // the longest suffix looked up
    int branches = 1;    // distinct continuations kept
    bool operator==(const NgramSpec&) const = default;
};

// EAGLE's tree: EAGLE-2's dynamic tree, grown each step from the layer's top-k, or an EAGLE-1
// tree of rank paths (a preset, dense:W1,W2,.., chain:N or a JSON file, as --tree takes them).
struct EagleTree {
    std::optional<std::string> fixed;  // nullopt: the dynamic tree
    bool dynamic() const { return !fixed; }
    bool operator==(const EagleTree&) const = default;
};
// The front ends' word for it (--eagle-tree): "dynamic", else the fixed tree's spec.
EagleTree parse_eagle_tree(const std::string& word);
std::string eagle_tree_word(const EagleTree& tree);

// EAGLE's draft layer on the target's features (--eagle, --eagle-tree, --eagle-topk, ...).
struct EagleSpec {
    std::string layer;                // the layer's folder (EAGLE's layout)
    EagleTree tree;
    int top_k = 8, depth = 6, nodes = 59;  // EAGLE-2: expanded per level, deepest level, nodes verified
    bool operator==(const EagleSpec&) const = default;
};

// Every drafter available, the step controller choosing among them step by step (--speculate
// auto): n-gram lookup always, and the Medusa heads, EAGLE layer and draft model it names.
struct AutoSpec {
    std::optional<MedusaSpec> medusa;
    std::optional<EagleSpec> eagle;
    std::optional<DraftModelSpec> draft;
    NgramSpec ngram;
    // A cache folder (trained_files.h) whose heads, tuned tree and EAGLE layer trained for the
    // target join where the spec names no Medusa heads or EAGLE layer; empty: none are looked up.
    std::string trained_cache;
    bool operator==(const AutoSpec&) const = default;
};

using DrafterSpec = std::variant<PlainSpec, MedusaSpec, DraftModelSpec, NgramSpec, EagleSpec, AutoSpec>;

// How each step's proposal is shaped: by the step controller, which weighs what each shape is
// expected to gain on this device and text (controlled_drafter.h), or always as the drafter's
// options say (--fixed-shape: the tree, gamma or n-gram length as given, whatever it costs).
// AlwaysDraft: the controller's shapes, but never plain decoding in place of the drafter (the
// app's picked modes, which show the drafter's work; not with auto).
enum class StepShaping { Controlled, Fixed, AlwaysDraft };

struct DecodingSpec {
    DrafterSpec drafter;
    AcceptRule rule = AcceptRule::Greedy;  // at temperature 0 every rule is greedy
    SamplingParams sampling{0.0f, 1.0f, 0};
    TypicalParams typical;
    int max_new_tokens = 256;
    StepShaping shaping = StepShaping::Controlled;
    bool operator==(const DecodingSpec&) const = default;
};

// A spec the engine cannot run: the message names the flag (or the file) at fault.
struct SpecError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

DrafterKind drafter_kind(const DrafterSpec& spec);
// The rule decoding applies: greedy at temperature 0, else the spec's.
AcceptRule effective_rule(const DecodingSpec& spec);
// Throws SpecError for a value out of range ("--gamma must be in 1..63") or a drafter without its
// file ("--eagle needs the draft layer's folder ...").
void validate(const DecodingSpec& spec);
// "plain decoding", "medusa (mc_sim_7b_63, 4 heads, greedy)", "draft (stories260K_q80, gamma 4
// adaptive, sample T=0.70)", "n-gram (8 tokens, greedy)", "eagle (EAGLE-2, 59 nodes, greedy)".
std::string describe(const DecodingSpec& spec);
// The decoder's options: the spec's sampling and rule, with the tokenizer's stop tokens.
DecodeOptions decode_options(const DecodingSpec& spec, std::vector<int> stop_tokens);

}  // namespace medusa
