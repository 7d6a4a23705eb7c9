// libFuzzer target: safetensors files from arbitrary bytes, opened alone and as a tiny
// Hugging Face Llama (config below) so the name mapping and q/k re-ordering run too.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/dequantize.h"
#include "model/hf_loader.h"
#include "model/safetensors_file.h"

namespace {
// dim 8, 2 heads of 4, 1 KV head, hidden 16, 1 layer, vocab 4: scripts/run_fuzzers.sh seeds a
// model.safetensors of exactly these shapes.
const char* kConfig = R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
    "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 4})";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    try {
        medusa::SafetensorsFile f = medusa::SafetensorsFile::from_memory(bytes, "fuzz.safetensors");
        for (const auto& t : f.tensors()) (void)medusa::dequantize(t);
        for (const char* index : {"d2t", "t2d"})  // integer tensors (EAGLE-3's maps), read whole
            if (const auto* t = f.find_index(index)) (void)t->values();
        const medusa::ModelFile m = medusa::load_hf_from_parts({std::move(f)}, kConfig, "fuzz");
        for (const auto& t : m.tensors) (void)medusa::dequantize(t);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
