#include "training_setup.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "interrupt.h"
#include "llm/context_length.h"
#include "llm/cpu_reference.h"
#include "llm/cpu_tree_runner.h"
#include "llm/gpu_tree_runner.h"
#include "model/output_path.h"
#include "session.h"
#include "train/seed_prompts.h"

namespace medusa::cli {

TrainingStart open_training(const Args& args) {
    if (!args.has("--out")) throw UsageError("--out DIR is required");
    const std::string out = args.str("--out");
    check_output_folder(out);  // before minutes of work, not after them
    ModelFile file = open_model(args);
    Tokenizer tok = open_tokenizer(args, file);
    return {out, std::move(file), std::move(tok)};
}

int heads_to_train(const Args& args) {
    const int k = args.integer("--heads", 4);
    if (k < 1 || k > 8) throw UsageError("--heads must be 1 to 8");
    return k;
}

namespace fs = std::filesystem;
using namespace medusa::train;

namespace {

// Generates (or reloads from `cache`) the model's own text and hidden states.
DistillData distill(TreeRunner& model, const HiddenFn& hidden, const ModelFile& file,
                    const std::vector<std::vector<int>>& prompts, int bos, const DistillOptions& o,
                    const std::string& cache, const char* what) {
    std::string tag = fs::absolute(file.path).string() + " seed=" + std::to_string(o.seed) +
                      " sequences=" + std::to_string(o.sequences) + " len=" + std::to_string(o.max_len);
    if (o.temp_max == 0) tag += " greedy";
    if (!o.feature_layers.empty()) {
        tag += " layers=";
        for (size_t i = 0; i < o.feature_layers.size(); ++i) {
            if (i) tag += ',';
            tag += std::to_string(o.feature_layers[i]);
        }
    }
    DistillData d;
    if (load_distill_data(d, cache, tag)) {
        std::fprintf(stderr, "%s: reusing %s (%zu tokens)\n", what, cache.c_str(), d.num_tokens());
        return d;
    }
    const auto t0 = std::chrono::steady_clock::now();
    d = generate_distill_data(model, hidden, prompts, bos, o, [&](int done, int total) {
        if (interrupt_requested()) throw Interrupted();  // nothing half-written is kept
        if (done % 16 == 0 || done == total)
            std::fprintf(stderr, "\r%s: %d/%d sequences written by the model", what, done, total);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\n%s: %zu tokens in %.1f s (%.0f tokens/s)\n", what, d.num_tokens(), s, d.num_tokens() / s);
    save_distill_data(d, cache, tag);
    return d;
}

}  // namespace

void apply_training_flags(const Args& args, const std::string& out_dir, int steps, TrainOptions& o) {
    o.steps = args.integer("--steps", steps);
    o.batch = args.integer("--batch", o.batch);
    o.lr = args.number("--lr", o.lr);
    o.seed = uint64_t(args.integer("--seed", 0));
    o.resume = args.has("--resume");
    o.checkpoint_dir = (fs::path(out_dir) / "checkpoint").string();
    o.checkpoint_every = args.integer("--checkpoint-every", std::max(50, o.steps / 10));
    o.interrupted = interrupt_requested;
    o.log_every = std::max(10, o.steps / 40);
    if (o.steps < 1 || o.batch < 1 || o.checkpoint_every < 1)
        throw UsageError("--steps, --batch and --checkpoint-every must be positive");
}

DistilledText distill_text(const Args& args, GpuModel& model, const ModelFile& file, const Tokenizer& tok,
                           const std::string& out_dir, uint64_t seed, bool greedy_heldout,
                           const std::vector<int>& feature_layers) {
    std::vector<std::vector<int>> prompts;
    for (const auto& p : seed_prompts()) prompts.push_back(tok.encode(p, true));
    DistillOptions d;
    d.seed = seed;
    d.feature_layers = feature_layers;
    d.sequences = args.integer("--sequences", 256);
    d.max_len = args.integer("--max-len", 256);
    if (d.sequences < 1 || d.max_len < 2) throw UsageError("--sequences must be positive and --max-len at least 2");
    // The text can come from the CPU reference (same math, checked against the GPU by the tests):
    // on a CPU Vulkan driver it writes text ten times faster than one-token GPU passes.
    const std::string engine = args.str("--data-engine", "auto");
    if (engine != "auto" && engine != "cpu" && engine != "gpu") throw UsageError("--data-engine must be auto, cpu or gpu");
    const bool use_cpu = engine == "cpu" || (engine == "auto" && model.context().info().kind == gpu::DeviceKind::Cpu);
    std::unique_ptr<CpuReferenceModel> cpu;
    std::unique_ptr<TreeRunner> writer;
    if (use_cpu) {
        cpu = std::make_unique<CpuReferenceModel>(file, model.config().seq_len);
        writer = std::make_unique<CpuTreeRunner>(*cpu);
    } else {
        writer = std::make_unique<GpuTreeRunner>(model);
    }
    const HiddenFn hidden = use_cpu ? cpu_hidden_states(*cpu, feature_layers) : gpu_hidden_states(model, feature_layers);
    DistilledText t;
    t.train = distill(*writer, hidden, file, prompts, tok.bos_id(), d, (fs::path(out_dir) / "train_data.safetensors").string(),
                      "training text");
    DistillOptions h = d;
    h.seed = d.seed + 7777;  // held-out text: other samples, same recipe
    h.sequences = std::max(8, d.sequences / 8);
    t.held = distill(*writer, hidden, file, prompts, tok.bos_id(), h,
                     (fs::path(out_dir) / "heldout_data.safetensors").string(), "held-out text");
    if (greedy_heldout) {
        DistillOptions g = h;
        g.seed = d.seed + 9999;
        g.sequences = std::max(8, d.sequences / 16);
        g.temp_min = g.temp_max = 0.0f;
        t.held_greedy = distill(*writer, hidden, file, prompts, tok.bos_id(), g,
                                (fs::path(out_dir) / "heldout_greedy_data.safetensors").string(), "held-out greedy text");
    }
    return t;
}

TrainingDevice::TrainingDevice(const Args& args, const TrainingStart& start)
    : gpu(open_gpu(args)),
      lock(start.out),
      // Training text is short (--max-len): a file's huge claimed context needs no cache that long.
      model(*gpu, start.file, {.context = choose_context(0, start.file.config.seq_len)}) {
    std::fprintf(stderr, "model %s on %s\n", start.file.path.c_str(), gpu->info().name.c_str());
    opened = std::chrono::steady_clock::now();
}

double TrainingDevice::seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
}

void log_to_stderr(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

int report_training_interrupted(const std::string& checkpoint_dir) {
    std::fprintf(stderr, "interrupted: %s holds the last finished step; run the same command with --resume to go on\n",
                 checkpoint_dir.c_str());
    return kInterruptedExit;
}

}  // namespace medusa::cli
