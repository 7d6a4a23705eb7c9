// What a GpuModel will allocate on the device, worked out from the file before anything is
// uploaded, and the check that it fits: the whole against the device's largest heap, each buffer
// a kernel binds at once against maxStorageBufferRange and maxMemoryAllocationSize.
//
// Too big is refused, not split: matmuls could take a matrix in row segments (GpuMatrix already
// runs one dispatch per segment), but the embedding lookup, the fused w1|w3 SwiGLU and the
// Medusa/EAGLE row blocks bind one segment, and attention and the KV compaction bind every
// layer's cache at once; splitting those means new shader bindings throughout.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "model/model_file.h"

namespace medusa {

struct PlannedBuffer {
    std::string name;           // "layers.0.w1|w3", "the KV cache's keys (32 layers x 1024 positions)"
    uint64_t bytes = 0;
    uint64_t per_position = 0;  // of `bytes`, what each position of context adds (0: fixed)
};

struct ModelMemory {
    int context = 0;
    std::string weight_type;  // "q4_0": layer 0's w1, for messages
    uint64_t weights = 0;
    uint64_t cache = 0;        // keys, values and features of every position
    uint64_t kv_cache = 0;     // of it, the keys and values (local layers' rings included)
    uint64_t activations = 0;  // one block's, attention scores included
    uint64_t per_position = 0;  // of the total, what each position of context adds
    std::vector<PlannedBuffer> buffers;
    uint64_t total() const { return weights + cache + activations; }
};

// device_copies: the block's parameters and logits also in device memory (HostBufferAccess).
ModelMemory plan_model_memory(const ModelFile& file, int context, bool device_copies = false);

// Throws gpu::DeviceLimitError, one line naming the model, what does not fit and the numbers,
// and the --ctx-size that would fit when the context is what is too big.
void check_fits_device(const ModelMemory& plan, const gpu::Context& ctx, const std::string& model);

}  // namespace medusa
