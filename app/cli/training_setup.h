// What every training command sets up from its flags: the schedule and checkpoints, the device
// and the output folder, and the self-distilled text they learn from.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "llm/gpu_model.h"
#include "model/folder_lock.h"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "train/head_training.h"
#include "train/self_distill.h"

namespace medusa::cli {

// What every trainer opens first: --out (required, and checked writable before minutes of work),
// the model and its tokenizer.
struct TrainingStart {
    std::string out;
    ModelFile file;
    Tokenizer tok;
};
TrainingStart open_training(const Args& args);
// --heads K (default 4): how many Medusa heads to train, 1 to 8.
int heads_to_train(const Args& args);

// --steps N (default `steps`), --batch N, --lr, --seed, --resume; checkpoints in DIR/checkpoint
// every --checkpoint-every N steps (default about ten times a run), progress about forty times.
// Ctrl-C (within an InterruptScope) stops the run after a step, with a checkpoint.
void apply_training_flags(const Args& args, const std::string& out_dir, int steps, train::TrainOptions& o);
// What every trainer opens once its flags are read: the GPU (before the output folder, so that
// without a device nothing is left behind), the folder's lock (one trainer per folder) and the
// model that writes the training text; the run's clock starts when they are open.
struct TrainingDevice {
    TrainingDevice(const Args& args, const TrainingStart& start);
    std::unique_ptr<gpu::Context> gpu;
    FolderLock lock;
    GpuModel model;
    std::chrono::steady_clock::time_point opened;
    double seconds() const;  // since `opened`
};

// The trainers' progress lines, on stderr.
void log_to_stderr(const std::string& line);

// After a run Ctrl-C stopped: says where the checkpoint is and how to go on; the exit code.
int report_training_interrupted(const std::string& checkpoint_dir);

// The model writes training and held-out text with its final-norm hidden states, cached in the
// output folder so a resumed run does not write it again. --sequences N, --max-len N,
// --data-engine auto|cpu|gpu.
struct DistilledText {
    train::DistillData train, held;  // held out: other samples of the same recipe, an eighth as many sequences
    train::DistillData held_greedy;  // with greedy_heldout: greedy continuations only, a sixteenth as many
};

// `feature_layers` (EAGLE-3): the text keeps the inputs of these target layers too.
DistilledText distill_text(const Args& args, GpuModel& model, const ModelFile& file, const Tokenizer& tok,
                           const std::string& out_dir, uint64_t seed, bool greedy_heldout = false,
                           const std::vector<int>& feature_layers = {});

}  // namespace medusa::cli
