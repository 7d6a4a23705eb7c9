// `medusa train-heads`: self-distillation data from the model itself, Medusa-1 training of K heads
// on the GPU, and a held-out accuracy report; writes Medusa's HF layout into --out.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.h"
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

namespace fs = std::filesystem;
using namespace medusa::train;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Generates (or reloads from `cache`) the model's own text and hidden states.
DistillData distill(TreeRunner& model, const HiddenFn& hidden, const ModelFile& file, const std::vector<std::vector<int>>& prompts, int bos,
                    const DistillOptions& o, const std::string& cache, const char* what) {
    const std::string tag = fs::absolute(file.path).string() + " seed=" + std::to_string(o.seed) +
                            " sequences=" + std::to_string(o.sequences) + " len=" + std::to_string(o.max_len);
    DistillData d;
    if (load_distill_data(d, cache, tag)) {
        std::fprintf(stderr, "%s: reusing %s (%zu tokens)\n", what, cache.c_str(), d.num_tokens());
        return d;
    }
    const auto t0 = std::chrono::steady_clock::now();
    d = generate_distill_data(model, hidden, prompts, bos, o, [&](int done, int total) {
        if (done % 16 == 0 || done == total)
            std::fprintf(stderr, "\r%s: %d/%d sequences written by the model", what, done, total);
    });
    const double s = seconds_since(t0);
    std::fprintf(stderr, "\n%s: %zu tokens in %.1f s (%.0f tokens/s)\n", what, d.num_tokens(), s, d.num_tokens() / s);
    save_distill_data(d, cache, tag);
    return d;
}

nlohmann::json accuracy_json(const HeadAccuracy& a) {
    return {{"loss", a.loss}, {"top1", a.top1}, {"top5", a.top5}, {"rank_share", a.rank_share},
            {"positions", a.positions}};
}

}  // namespace

int run_train_heads(int argc, char** argv) {
    Args args(argc, argv, 2, {"--resume", "--validate"},
              {"--model", "--tokenizer", "--heads", "--out", "--steps", "--seed", "--sequences", "--batch", "--lr",
               "--layers", "--device", "--max-len", "--data-engine"});
    if (!args.has("--out")) throw UsageError("--out DIR is required");
    const std::string out = args.str("--out");
    ModelFile file = open_model(args);
    Tokenizer tok = open_tokenizer(args, file);
    const int K = args.integer("--heads", 4);
    if (K < 1 || K > 8) throw UsageError("--heads must be 1 to 8");
    TrainOptions o;
    o.steps = args.integer("--steps", 2000);
    o.batch = args.integer("--batch", 256);
    o.lr = args.number("--lr", o.lr);
    o.seed = uint64_t(args.integer("--seed", 0));
    o.resume = args.has("--resume");
    o.checkpoint_dir = (fs::path(out) / "checkpoint").string();
    o.checkpoint_every = std::max(50, o.steps / 10);
    o.log_every = std::max(10, o.steps / 40);
    if (o.steps < 1 || o.batch < 1) throw UsageError("--steps and --batch must be positive");
    fs::create_directories(out);

    auto gpu = open_gpu(args);
    GpuModel model(*gpu, file);
    std::fprintf(stderr, "model %s on %s\n", file.path.c_str(), gpu->info().name.c_str());
    std::vector<std::vector<int>> prompts;
    for (const auto& p : seed_prompts()) prompts.push_back(tok.encode(p, true));
    DistillOptions d;
    d.seed = o.seed;
    d.sequences = args.integer("--sequences", 256);
    d.max_len = args.integer("--max-len", 256);
    const auto t0 = std::chrono::steady_clock::now();
    // The text can come from the CPU reference (same math, checked against the GPU by the tests):
    // on a CPU Vulkan driver it writes text ten times faster than one-token GPU passes.
    const std::string engine = args.str("--data-engine", "auto");
    if (engine != "auto" && engine != "cpu" && engine != "gpu") throw UsageError("--data-engine must be auto, cpu or gpu");
    const bool use_cpu = engine == "cpu" || (engine == "auto" && gpu->info().type == "cpu");
    std::unique_ptr<CpuReferenceModel> cpu;
    std::unique_ptr<TreeRunner> writer_runner;
    if (use_cpu) {
        cpu = std::make_unique<CpuReferenceModel>(file);
        writer_runner = std::make_unique<CpuTreeRunner>(*cpu);
    } else {
        writer_runner = std::make_unique<GpuTreeRunner>(model);
    }
    TreeRunner& writer = *writer_runner;
    const HiddenFn hidden = use_cpu ? cpu_hidden_states(*cpu) : gpu_hidden_states(model);
    const DistillData train = distill(writer, hidden, file, prompts, tok.bos_id(), d, (fs::path(out) / "train_data.safetensors").string(),
                                      "training text");
    DistillOptions h = d;
    h.seed = d.seed + 7777;  // held-out text: other samples, same recipe
    h.sequences = std::max(8, d.sequences / 8);
    const DistillData held = distill(writer, hidden, file, prompts, tok.bos_id(), h,
                                     (fs::path(out) / "heldout_data.safetensors").string(), "held-out text");

    MedusaHeads init = MedusaHeads::init_from_model(file, K, args.integer("--layers", 1));
    init.source = file.path;
    const HeadAccuracy before = evaluate_heads(*gpu, init, held);
    const TrainResult r = train_heads(*gpu, init, train, o, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
    });
    const HeadAccuracy after = evaluate_heads(*gpu, r.heads, held);
    save_medusa_heads(r.heads, out);

    std::printf("held-out accuracy (%zu positions)\nhead  top1(init)  top1   top5(init)  top5   loss\n", after.positions);
    for (int k = 0; k < K; ++k)
        std::printf("%4d  %10.3f  %5.3f  %10.3f  %5.3f  %5.3f\n", k + 1, before.top1[k], after.top1[k], before.top5[k],
                    after.top5[k], after.loss[k]);
    const double wall = seconds_since(t0);
    std::printf("training: %d steps, %.0f positions/s, %.1f s training, %.1f s in all; heads in %s\n", r.steps_done,
                r.positions_per_s, r.wall_s, wall, out.c_str());
    nlohmann::json report = {{"model", file.path},      {"device", gpu->info().name}, {"heads", K},
                             {"steps", o.steps},        {"batch", o.batch},          {"train_tokens", train.num_tokens()},
                             {"heldout_tokens", held.num_tokens()}, {"init", accuracy_json(before)},
                             {"trained", accuracy_json(after)},    {"train_positions_per_s", r.positions_per_s},
                             {"train_wall_s", r.wall_s},           {"total_wall_s", wall}};
    write_file_atomically((fs::path(out) / "accuracy.json").string(), report.dump(2) + "\n");
    return 0;
}

}  // namespace medusa::cli
