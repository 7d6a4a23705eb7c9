// The decoding spec every front end goes through: what it refuses (naming the flag or the file),
// the line describe() gives for each drafter, and that every drafter it builds decodes greedy text
// identical to plain decoding's.
#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "decode_support.h"
#include "setup/drafting.h"
#include "llm/medusa_heads_io.h"
#include "temp_dir.h"
#include "test_paths.h"

using namespace medusa;
using namespace medusa::test;
using Catch::Matchers::Contains;

namespace {

std::string refusal(const DecodingSpec& spec) {
    try {
        validate(spec);
    } catch (const SpecError& e) {
        return e.what();
    }
    return "";
}

DecodingSpec with(DrafterSpec drafter) {
    DecodingSpec s;
    s.drafter = std::move(drafter);
    return s;
}

std::string generate(const std::string& flags) {
    return "generate -m " + model_path("stories260K.bin") + " -p 'Once upon a time' -n 4 --temp 0 " + flags;
}

}  // namespace

TEST_CASE("a spec out of range is refused, naming the flag", "[spec]") {
    const int most = TokenBlock::kMaxTokens - 1;  // drafted tokens a verify block holds beside the root
    const std::string range = " must be in 1.." + std::to_string(most);
    CHECK(refusal(with(PlainSpec{})).empty());
    CHECK(refusal(with(DraftModelSpec{.model = "d.bin", .gamma = most})).empty());
    CHECK(refusal(with(DraftModelSpec{.model = "d.bin", .gamma = most + 1})) == "--gamma" + range);
    CHECK(refusal(with(DraftModelSpec{.model = "d.bin", .gamma = 0})) == "--gamma" + range);
    CHECK(refusal(with(DraftModelSpec{.model = "d.bin", .branches = 9})) == "--draft-tree must be in 1..8");
    CHECK_THAT(refusal(with(DraftModelSpec{})), Contains("--draft-model"));
    CHECK(refusal(with(NgramSpec{.max_tokens = 0})) == "--ngram" + range);
    CHECK(refusal(with(NgramSpec{.max_match = 0})) == "--ngram-match must be >= 1");
    CHECK(refusal(with(NgramSpec{.branches = 17})) == "--ngram-branches must be in 1..16");
    CHECK_THAT(refusal(with(EagleSpec{})), Contains("--eagle needs the draft layer's folder"));
    CHECK(refusal(with(EagleSpec{.layer = "l", .nodes = most + 1})) == "--eagle-nodes" + range);
    CHECK(refusal(with(EagleSpec{.layer = "l", .top_k = 33})) == "--eagle-topk must be in 1..32");
    CHECK(refusal(with(MedusaSpec{.num_heads = -1})) == "--num-heads must be >= 1");
    DecodingSpec s;
    s.sampling.top_p = 0;
    CHECK(refusal(s) == "--top-p must be in (0, 1]");
    s = {};
    s.sampling.temperature = -1;
    CHECK(refusal(s) == "--temp must be >= 0");
    s = {};
    s.max_new_tokens = -1;
    CHECK(refusal(s) == "-n must be >= 0");
    s = {};
    s.typical.delta = -0.1f;
    CHECK_THAT(refusal(s), Contains("--typical-delta"));
}

TEST_CASE("untrained heads are no path: the word init, and an empty path refused", "[spec]") {
    CHECK_FALSE(parse_heads_word("init"));
    CHECK(parse_heads_word("/h/heads") == "/h/heads");
    CHECK(heads_word(std::nullopt) == "init");
    CHECK(heads_word(parse_heads_word("/h/heads")) == "/h/heads");
    CHECK_THAT(refusal(with(MedusaSpec{.heads = ""})), Contains("--heads needs a heads file or folder"));
    CHECK(refusal(with(MedusaSpec{.heads = std::nullopt})).empty());
}

TEST_CASE("EAGLE's tree is dynamic or a fixed tree: the word dynamic, and an empty spec refused", "[spec]") {
    CHECK(parse_eagle_tree("dynamic").dynamic());
    CHECK(parse_eagle_tree("chain:3").fixed == "chain:3");
    CHECK(eagle_tree_word(EagleTree{}) == "dynamic");
    CHECK(eagle_tree_word(parse_eagle_tree("chain:3")) == "chain:3");
    CHECK(refusal(with(EagleSpec{.layer = "l", .tree = {.fixed = ""}})) == "--eagle-tree needs 'dynamic' or a tree spec");
}

TEST_CASE("describe() names each drafter and the rule that applies", "[spec]") {
    DecodingSpec s;
    CHECK(describe(s) == "plain decoding");
    s.sampling.temperature = 0.7f;
    s.rule = AcceptRule::Sample;
    CHECK(describe(s) == "plain decoding (sample T=0.70)");
    s.drafter = MedusaSpec{.num_heads = 4, .tree = "mc_sim_7b_63"};
    s.rule = AcceptRule::Typical;
    CHECK(describe(s) == "medusa (mc_sim_7b_63, 4 heads, typical T=0.70)");
    s.sampling.temperature = 0;  // every rule is greedy at temperature 0
    CHECK(describe(s) == "medusa (mc_sim_7b_63, 4 heads, greedy)");
    s.drafter = MedusaSpec{.heads = "/cache/heads", .tree = "/cache/tree.json"};
    CHECK(describe(s) == "medusa (tree.json, heads, greedy)");
    s.drafter = MedusaSpec{.choices = std::vector<std::vector<int>>{{0}, {1}}};
    CHECK(describe(s) == "medusa (3-node tree, init heads, greedy)");
    s.drafter = DraftModelSpec{.model = "/m/stories260K_q80.bin", .gamma = 5, .adaptive_gamma = true, .branches = 2};
    CHECK(describe(s) == "draft (stories260K_q80, gamma 5 adaptive, 2 branches, greedy)");
    s.drafter = NgramSpec{.max_tokens = 6};
    CHECK(describe(s) == "n-gram (6 tokens, greedy)");
    s.drafter = EagleSpec{.layer = "e", .nodes = 10};
    CHECK(describe(s) == "eagle (dynamic tree, 10 nodes, greedy)");
    s.drafter = EagleSpec{.layer = "e", .tree = {.fixed = "chain:3"}};
    CHECK(describe(s) == "eagle (chain:3, greedy)");
    CHECK(drafter_kind(s.drafter) == DrafterKind::Eagle);
}

TEST_CASE("the command line refuses two drafters, a drafter's flag without it, and unknown rules", "[spec][cli]") {
    const auto two = run_medusa(generate("--ngram 4 --draft-model " + model_path("stories260K_q80.bin")));
    CHECK(two.exit_code == 2);
    CHECK_THAT(two.err, Contains("choose one drafter"));
    const auto gamma = run_medusa(generate("--gamma 3"));
    CHECK(gamma.exit_code == 2);
    CHECK_THAT(gamma.err, Contains("--gamma, --adaptive-gamma and --draft-tree need --draft-model"));
    const auto match = run_medusa(generate("--ngram-match 3"));
    CHECK(match.exit_code == 2);
    CHECK_THAT(match.err, Contains("--ngram-match needs --ngram N"));
    const auto rule = run_medusa(generate("--accept fastest"));
    CHECK(rule.exit_code == 2);
    CHECK_THAT(rule.err, Contains("unknown acceptance rule 'fastest'"));
    const auto range = run_medusa(generate("--draft-model " + model_path("stories260K_q80.bin") + " --gamma " +
                                           std::to_string(TokenBlock::kMaxTokens)));
    CHECK(range.exit_code == 2);
    CHECK_THAT(range.err, Contains("--gamma must be in 1.." + std::to_string(TokenBlock::kMaxTokens - 1)));
}

TEST_CASE("building a spec refuses heads for another hidden size, naming the file", "[spec]") {
    TempDir dir("medusa-spec");
    GpuTarget target("stories260K.bin");
    // Two heads of hidden size 32 for a model of 64: identity blocks and a projection of their own.
    const int dim = target.file.config.dim / 2, vocab = target.file.config.vocab_size;
    MedusaHeads small{.dim = dim, .vocab = vocab, .layers = 1};
    small.heads.assign(2, MedusaHead{{std::vector<float>(dim * dim)}, {std::vector<float>(dim)},
                                     std::vector<float>(size_t(vocab) * dim, 0.01f)});
    const std::string heads = (dir.path / "heads").string();
    save_medusa_heads(small, heads);
    const DraftingTarget where{.file = target.file, .runner = target.runner, .gpu = &gpu_context(), .context = 64};
    try {
        build_drafting(MedusaSpec{.heads = heads, .tree = "chain:2"}, where);
        FAIL("heads of hidden size " << dim << " accepted for a model of " << target.file.config.dim);
    } catch (const std::exception& e) {
        CHECK_THAT(e.what(), Contains(heads));
        CHECK_THAT(e.what(), Contains("hidden size " + std::to_string(dim)));
    }
    // On the command line the same refusal, as a file that does not fit (not a usage error).
    const auto r = run_medusa(generate("--heads " + heads + " --tree chain:2"));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains(heads));
}

TEST_CASE("every drafter a spec builds decodes plain greedy text, and a rebuild reuses what it loaded", "[spec]") {
    ValidationGuard guard;
    GpuTarget target("stories260K.bin");
    const DraftingTarget where{.file = target.file, .runner = target.runner, .gpu = &gpu_context(),
                               .context = target.model.config().seq_len};
    const std::vector<int>& prompt = kStoryPrompts[0];
    Drafting plain = build_drafting(PlainSpec{}, where);
    const std::vector<int> expected = decode(target.runner, *plain.drafter, greedy_options(40), prompt);
    const std::string draft_model = model_path("stories260K_q80.bin");
    const DrafterSpec specs[] = {MedusaSpec{.num_heads = 3, .tree = "dense:3,2,2"},
                                 DraftModelSpec{.model = draft_model, .gamma = 4},
                                 DraftModelSpec{.model = draft_model, .gamma = 3, .branches = 2},
                                 NgramSpec{.max_tokens = 6, .branches = 2}};
    Drafting previous;
    for (const DrafterSpec& spec : specs) {
        CAPTURE(describe(with(spec)));
        Drafting d = build_drafting(spec, where, &previous);
        CHECK(d.drafter->kind() == drafter_kind(spec));
        CHECK(decode(target.runner, *d.drafter, greedy_options(40), prompt) == expected);
        if (previous.draft && std::holds_alternative<DraftModelSpec>(spec))
            CHECK(d.draft == previous.draft);  // the same draft model file: not loaded again
        previous = std::move(d);
    }
    // The same heads (init, 3 of them) under another tree: reused, not built again.
    Drafting medusa = build_drafting(specs[0], where);
    Drafting cut = build_drafting(MedusaSpec{.num_heads = 3, .tree = "chain:2"}, where, &medusa);
    CHECK(cut.heads == medusa.heads);
    CHECK(cut.tree.num_nodes == 3);
}
