// `medusa tune-tree`: measures each head's top-i accuracy on greedy calibration text, builds the
// greedy sparse tree for every budget up to 128 nodes, times each budget's step on this device
// and writes the tree with the most expected tokens per second as a medusa_choices JSON file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "bench_charts.h"
#include "commands.h"
#include "context_size.h"
#include "decode/speculative_decoder.h"
#include "decode/tree_search.h"
#include "setup/cost_measurement.h"
#include "setup/drafting.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_model.h"
#include "llm/gpu_tree_runner.h"
#include "llm/medusa_heads_io.h"
#include "model/atomic_file.h"
#include "session.h"
#include "train/head_training.h"
#include "train/seed_prompts.h"

namespace medusa::cli {

using namespace medusa::train;

namespace {

// Milliseconds per Medusa step (heads, top-k, verify, accept, commit) with a given tree, drafted
// with the heads `loaded` holds.
double time_medusa_step(const DraftingTarget& target, const Drafting& loaded,
                        const std::vector<std::vector<int>>& choices, const std::vector<int>& prompt) {
    MedusaSpec medusa = std::get<MedusaSpec>(loaded.spec);
    medusa.choices = choices;
    const DecodingSpec spec{.drafter = medusa, .max_new_tokens = 48};
    Drafting drafting = build_drafting(spec.drafter, target, &loaded, {}, StepShaping::Fixed);  // this tree, as it is
    SpeculativeDecoder d(target.runner, *drafting.drafter, decode_options(spec, {}));
    // The fastest of three runs: other work on the machine only ever adds time.
    double best = 0;
    for (int run = 0; run < 3; ++run) {
        const GenerationStats s = d.generate(prompt, [](const StepTrace&) { return true; });
        const double ms = s.decode_ms / std::max(1, s.steps);
        if (run == 0 || ms < best) best = ms;
    }
    return best;
}

// Calibration text: greedy continuations, which is what greedy Medusa decoding must match;
// written by the C++ reference on a CPU driver (faster there), else by the GPU.
DistillData calibration_text(const Args& args, const ModelFile& file, const Tokenizer& tok, gpu::Context& gpu,
                             GpuModel& model, GpuTreeRunner& runner, int context) {
    DistillOptions o;
    o.sequences = args.integer("--sequences", 32);
    o.seed = uint64_t(args.integer("--seed", 0)) + 9001;
    o.temp_min = o.temp_max = 0.0f;
    o.greedy_every = 1;
    std::vector<std::vector<int>> prompts;
    for (const auto& p : seed_prompts()) prompts.push_back(tok.encode(p, true));
    if (gpu.info().kind != gpu::DeviceKind::Cpu)
        return generate_distill_data(runner, gpu_hidden_states(model), prompts, tok.bos_id(), o);
    CpuReferenceModel cpu(file, context);
    CpuTreeRunner cpu_runner(cpu);
    return generate_distill_data(cpu_runner, cpu_hidden_states(cpu), prompts, tok.bos_id(), o);
}

void print_rank_shares(const HeadAccuracy& acc) {
    std::fprintf(stderr, "calibration: %zu positions of greedy text\nhead  top-1..top-5 rank shares\n", acc.positions);
    for (size_t k = 0; k < acc.rank_share.size(); ++k) {
        std::fprintf(stderr, "%4zu ", k + 1);
        for (int i = 0; i < 5; ++i) std::fprintf(stderr, " %.3f", acc.rank_share[k][i]);
        std::fprintf(stderr, "\n");
    }
}

// Step time (heads, top-k, verify forward, accept, commit) measured with the real decoder for
// every budget up to 16 and on a grid above; a budget between grid points is charged the next
// measured one, so no tree is made to look cheaper than it was seen to be.
std::vector<BudgetRow> time_budgets(const GreedyTree& tree, const DraftingTarget& target, const Drafting& loaded,
                                    const std::vector<int>& prompt) {
    const int budgets = int(tree.choices.size()) + 1;
    std::vector<BudgetRow> rows(budgets);
    std::vector<int> grid;
    for (int n = 1; n <= budgets; ++n)
        if (n <= 16 || n % (n <= 64 ? 8 : 16) == 0 || n == budgets) grid.push_back(n);
    size_t g = grid.size();
    for (int n = budgets; n >= 1; --n) {
        rows[n - 1].nodes = n;
        rows[n - 1].expected_tokens = 1 + tree.expected_accept(n - 1);
        if (g > 0 && grid[g - 1] == n) {
            const std::vector<std::vector<int>> c(tree.choices.begin(), tree.choices.begin() + (n - 1));
            rows[n - 1].step_ms = time_medusa_step(target, loaded, c, prompt);
            --g;
        } else {
            rows[n - 1].step_ms = rows[n].step_ms;
        }
    }
    monotone_step_times(rows);
    return rows;
}

}  // namespace

int run_tune_tree(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("tune-tree"));
    if (!args.has("--heads") || !args.has("--out")) throw UsageError("--heads DIR and --out FILE.json are required");
    check_output_flags(args, {"--out", "--plot"});
    ModelFile file = open_model(args);
    Tokenizer tok = open_tokenizer(args, file);
    auto gpu = open_gpu(args, &file);
    const int context = context_size(args, file);
    GpuModel model(*gpu, file, {.context = context});
    GpuTreeRunner runner(model);
    // The heads, loaded once: every budget's drafter reuses them.
    Drafting loaded;
    loaded.spec = MedusaSpec{.heads = args.str("--heads")};
    loaded.heads = std::make_shared<const MedusaHeads>(load_medusa_heads(args.str("--heads"), model.config()));
    const MedusaHeads& heads = *loaded.heads;
    const DraftingTarget target{.file = file, .runner = runner, .gpu = gpu.get(), .context = context};
    const int max_nodes = std::clamp(args.integer("--max-nodes", kMaxTreeNodes), 1, kMaxTreeNodes);
    // The step controller's cost model of this device, measured again while we are timing it.
    target_costs(target, CostRefresh::Remeasure, [](const std::string& line) { std::fprintf(stderr, "\r%s   ", line.c_str()); });
    std::fprintf(stderr, "\n");

    const DistillData calib = calibration_text(args, file, tok, *gpu, model, runner, context);
    const HeadAccuracy acc = evaluate_heads(*gpu, heads, calib);
    print_rank_shares(acc);
    const GreedyTree tree = greedy_tree_search(acc.rank_share, max_nodes, std::min(heads.count(), kMaxTreeDepth));
    const std::vector<int> prompt(calib.tokens.begin(), calib.tokens.begin() + std::min(32, calib.seq_start[1]));
    const std::vector<BudgetRow> rows = time_budgets(tree, target, loaded, prompt);
    // --min-nodes keeps a tree even where plain decoding is fastest (a CPU driver), for demos.
    const int min_nodes = std::clamp(args.integer("--min-nodes", 1), 1, int(rows.size()));
    const std::vector<BudgetRow> eligible(rows.begin() + (min_nodes - 1), rows.end());
    const int best = best_budget(eligible) + (min_nodes - 1);
    std::printf("%s", tree_search_table(rows, best).c_str());
    const std::string out = args.str("--out");
    const std::string tree_json = tree_search_json(tree, rows, best, acc.rank_share, gpu->info().name);
    write_file_atomically(out, tree_json + "\n");
    std::printf("chose %d nodes: %.2f expected tokens/step, %.3f ms/step -> %s\n", rows[best].nodes,
                rows[best].expected_tokens, rows[best].step_ms, out.c_str());
    if (args.has("--plot"))
        write_plot(charts::tree_budget_charts(nlohmann::json::parse(tree_json)), "tree budgets on " + gpu->info().name,
                   args.str("--plot"));
    return 0;
}

}  // namespace medusa::cli
