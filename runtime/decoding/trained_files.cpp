#include "decoding/trained_files.h"

#include <cstdlib>
#include <filesystem>

namespace medusa {

std::string default_cache_dir() {
    if (const char* c = std::getenv("MEDUSA_CACHE"); c && *c) return c;
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/medusa-vk";
    return "";
}

TrainedDefaults find_trained_defaults(const std::string& cache_dir, const std::string& model_name) {
    namespace fs = std::filesystem;
    TrainedDefaults d;
    if (cache_dir.empty()) return d;
    d.cache_dir = cache_dir + "/" + model_name;
    std::error_code ec;
    if (fs::is_regular_file(d.cache_dir + "/heads/medusa_lm_head.safetensors", ec)) d.heads_path = d.cache_dir + "/heads";
    if (fs::is_regular_file(d.cache_dir + "/tree.json", ec)) d.tree_path = d.cache_dir + "/tree.json";
    // EAGLE-3 where one was trained (it drafts deeper chains), else EAGLE-2's layer.
    for (const char* folder : {"/eagle3", "/eagle"})
        if (d.eagle_path.empty() && fs::is_regular_file(d.cache_dir + folder + "/model.safetensors", ec))
            d.eagle_path = d.cache_dir + folder;
    return d;
}

}  // namespace medusa
