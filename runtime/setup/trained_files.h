// Where the files trained for a model live: scripts/train_default_heads.sh (and anyone following
// it) leaves them in the cache, ${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}/<folder>/{heads,tree.json,
// eagle, eagle3}, beside the kernel tuning and the cost model of each device. A folder belongs to
// the model its pieces were trained on, recognised by content: the SHA-256 their training
// checkpoints record (model_digest.h), not the folder's or the model file's name.
#pragma once
#include <optional>
#include <string>

#include "model/model_file.h"

namespace medusa {

// $MEDUSA_CACHE, else $HOME/.cache/medusa-vk ("" with neither).
std::string default_cache_dir();

struct TrainedFiles {
    std::string folder;      // <cache>/<folder> the files were found in; empty when none were
    std::string heads_path;  // empty when missing
    std::string tree_path;   // the tree tuned with those heads; empty when missing
    // eagle3 (EAGLE-3) or eagle (EAGLE-2): with both, the one whose held-out greedy chains (their
    // accuracy.json) were accepted deeper; empty when neither exists.
    std::string eagle_path;
    bool found() const { return !heads_path.empty() && !tree_path.empty(); }
};

// The files in `cache_dir` trained for `model`. A piece (heads, an EAGLE layer) counts when its
// checkpoint records the model's SHA-256; one recording another model, or none, is passed over.
// Bounded: the first 256 folders, each piece's safetensors header and config.json; the model's
// tensors are hashed (once per loaded model) only when a piece's stated hidden size fits it.
TrainedFiles find_trained_files(const std::string& cache_dir, const ModelFile& model);

// What the piece at `path` (a heads or EAGLE folder, or a file in one) records of the model it
// was trained on, checked against `model`; nullopt when it records nothing.
struct TrainedOn {
    std::string model;  // the recorded model's path, for messages
    bool same = false;  // whether it is `model`, by content
};
std::optional<TrainedOn> trained_on(const std::string& path, const ModelFile& model);

}  // namespace medusa
