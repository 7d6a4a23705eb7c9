// libFuzzer target: PyTorch checkpoints (torch.save's ZIP archives) from arbitrary bytes, read as
// Medusa head files are: every tensor found is expanded to f32 within its storage's bounds, every
// integer tensor (EAGLE-3's d2t, t2d) widened, and the whole read again as a safetensors file (as
// an EAGLE layer's pytorch_model.bin is).
#include <cstdint>
#include <memory>
#include <vector>

#include "model/dequantize.h"
#include "model/torch_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(data, data + size);
    try {
        const medusa::TorchCheckpoint c = medusa::read_torch_checkpoint(bytes, "fuzz.pt");
        for (const auto& [name, t] : c.tensors) (void)medusa::dequantize(t);
        for (const auto& [name, t] : c.indices) (void)t.values();
        const medusa::SafetensorsFile f = c.as_safetensors();
        for (const medusa::Tensor& t : f.tensors()) (void)medusa::dequantize(t);
    } catch (const medusa::FormatError&) {
    }
    return 0;
}
