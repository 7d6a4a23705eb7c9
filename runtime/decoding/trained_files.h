// Where the files trained for a model live: scripts/train_default_heads.sh (and anyone following
// it) leaves them in the cache, ${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}/<model>/{heads,tree.json,
// eagle, eagle3}, beside the kernel tuning and the cost model of each device.
#pragma once
#include <string>

namespace medusa {

// $MEDUSA_CACHE, else $HOME/.cache/medusa-vk ("" with neither).
std::string default_cache_dir();

struct TrainedDefaults {
    std::string cache_dir;   // <cache>/<model>
    std::string heads_path;  // empty when missing
    std::string tree_path;   // empty when missing
    // eagle3 (EAGLE-3) or eagle (EAGLE-2): with both, the one whose held-out greedy chains (their
    // accuracy.json) were accepted deeper; empty when neither exists.
    std::string eagle_path;
    bool found() const { return !heads_path.empty() && !tree_path.empty(); }
};
TrainedDefaults find_trained_defaults(const std::string& cache_dir, const std::string& model_name);

}  // namespace medusa
