// libFuzzer target: llama.cpp's EAGLE-3 GGUF (llm/eagle3_gguf.h) from arbitrary bytes, for a target
// of stories260K's shape (hidden size 64, 5 layers, 8 heads, 4 KV heads, vocabulary 512), seeded
// with tests/data/eagle3/gguf and the file llama.cpp's converter wrote (shared/testdata/eagle3). A
// file is refused with a FormatError, or gives a layer that fits the target: layers inside it,
// each once, a norm before fc as wide as the feature or none, and a draft vocabulary mapped
// inside the target's.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "llm/eagle3_gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using medusa::fuzz::check;
    const medusa::LlamaConfig target = medusa::fuzz::target_shape(64, 172, 5, 8, 4, 512);  // stories260K
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    try {
        const medusa::EagleLayer e = medusa::load_eagle3_gguf(bytes, "fuzz.gguf", target);
        check(e.eagle3() && e.dim == 64 && !e.target_layers.empty() && e.target_layers.size() <= 3 && e.fuses());
        for (int l : e.target_layers) check(l >= 0 && l < 5);
        check(e.fc_w.size() == size_t(64) * size_t(e.feature_dim()));
        check(e.feature_norm.empty() || e.feature_norm.size() == size_t(e.feature_dim()));
        check(std::isfinite(e.rms_eps) && e.rms_eps > 0 && std::isfinite(e.rope_theta) && e.rope_theta > 1);
        for (int to : e.draft_to_target) check(to >= 0 && to < 512);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
