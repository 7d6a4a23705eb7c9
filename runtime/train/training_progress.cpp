#include "train/training_progress.h"

#include <cstdio>
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

void save_optimizer_checkpoint(const std::string& dir, const OptimizerCheckpoint& c, uint64_t seed) {
    write_safetensors(optimizer_file(dir), {f32_tensor("adam.m", c.m), f32_tensor("adam.v", c.v)},
                      {{"step", std::to_string(c.step)}, {"seed", std::to_string(seed)}});
}

std::optional<OptimizerCheckpoint> find_resume_point(const std::string& dir, bool resume,
                                                     const std::function<void(const std::string&)>& log) {
    if (!resume || !committed_checkpoint(dir)) return std::nullopt;
    const std::string path = optimizer_file(dir);
    if (!std::filesystem::exists(path)) return std::nullopt;
    const SafetensorsFile f = SafetensorsFile::open(path);
    OptimizerCheckpoint c;
    c.m = dequantize(f.get("adam.m"));
    c.v = dequantize(f.get("adam.v"));
    const auto it = f.metadata().find("step");
    if (it == f.metadata().end()) throw FormatError(path + ": no 'step' in the checkpoint's metadata");
    c.step = std::stoi(it->second);
    if (log) log("resuming from " + dir + " at step " + std::to_string(c.step + 1));
    return c;
}

}  // namespace medusa::train
