#include "model/stop_tokens.h"

#include "model/model_file.h"

#include <algorithm>

namespace medusa {

std::vector<int> model_stop_tokens(const ModelFile& file, const Tokenizer& tokenizer, std::span<const int> more) {
    std::vector<int> stop = {tokenizer.eos_id()};
    auto add = [&](int id) {
        if (std::find(stop.begin(), stop.end(), id) == stop.end()) stop.push_back(id);
    };
    if (is_llama2c(file.format)) add(tokenizer.bos_id());
    for (int id : more) add(id);
    return stop;
}

}  // namespace medusa
