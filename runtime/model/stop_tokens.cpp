#include "model/stop_tokens.h"

namespace medusa {

std::vector<int> model_stop_tokens(const ModelFile& file, const Tokenizer& tokenizer) {
    std::vector<int> stop = {tokenizer.eos_id()};
    if (file.format.rfind("llama2c", 0) == 0 && tokenizer.bos_id() != tokenizer.eos_id())
        stop.push_back(tokenizer.bos_id());
    return stop;
}

}  // namespace medusa
