// libFuzzer target: llama2.c checkpoints (v0 fp32 and v2 int8) from arbitrary bytes.
// Any outcome but a model or a FormatError is a bug.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/dequantize.h"
#include "model/llama2c_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    try {
        const medusa::ModelFile m = medusa::load_llama2c(bytes, "fuzz.bin");
        // Read every byte the loader vouched for: ASan catches a tensor that overhangs the input.
        for (const auto& t : m.tensors) (void)medusa::dequantize(t);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
