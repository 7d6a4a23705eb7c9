#include "train/training_progress.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "model/dequantize.h"
#include "model/safetensors_file.h"
#include "train/checkpoint_folder.h"

namespace medusa::train {

std::string fmt(const char* format, double v) {
    char b[32];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

namespace {
std::string optimizer_file(const std::string& dir) { return (std::filesystem::path(dir) / "optimizer.safetensors").string(); }
}  // namespace

void save_optimizer_checkpoint(const std::string& dir, const OptimizerCheckpoint& c, uint64_t seed,
                               const CheckpointIdentity& identity) {
    std::map<std::string, std::string> metadata = {{"step", std::to_string(c.step)}, {"seed", std::to_string(seed)}};
    add_identity(identity, metadata);
    write_safetensors(optimizer_file(dir), {f32_tensor("adam.m", c.m), f32_tensor("adam.v", c.v)}, metadata);
}

void check_resumable(const std::string& dir, const CheckpointIdentity& identity) {
    if (!committed_checkpoint(dir) || !std::filesystem::exists(optimizer_file(dir))) return;
    check_identity(read_safetensors_metadata(optimizer_file(dir)), identity, dir);
}

std::optional<OptimizerCheckpoint> find_resume_point(const std::string& dir, bool resume,
                                                     const CheckpointIdentity& identity,
                                                     const std::function<void(const std::string&)>& log) {
    if (!resume || !committed_checkpoint(dir)) return std::nullopt;
    const std::string path = optimizer_file(dir);
    if (!std::filesystem::exists(path)) return std::nullopt;
    const SafetensorsFile f = SafetensorsFile::open(path);
    check_identity(f.metadata(), identity, dir);
    OptimizerCheckpoint c;
    c.m = dequantize(f.get("adam.m"));
    c.v = dequantize(f.get("adam.v"));
    const auto it = f.metadata().find("step");
    if (it == f.metadata().end()) throw FormatError(path + ": no 'step' in the checkpoint's metadata");
    char* end = nullptr;
    const long step = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || step < 0 || step > 100000000)
        throw FormatError(path + ": the checkpoint's 'step' is not a step number");
    c.step = int(step);
    if (log) log("resuming from " + dir + " at step " + std::to_string(c.step + 1));
    return c;
}

}  // namespace medusa::train
