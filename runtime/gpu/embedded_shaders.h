// SPIR-V compiled from shaders/*.comp at build time (see cmake/shaders.cmake): one gpu::Shader
// enumerator per module (generated/gpu/shader_list.h), so a shader that was not built is a compile
// error rather than a failed lookup at run time.
#pragma once
#include <cstdint>
#include <span>

#include "gpu/shader_list.h"

namespace medusa::gpu {

struct EmbeddedShader {
    Shader shader;
    const char* name;  // the module's name: the .comp file's, with its variant (matmul_q4_k_texel)
    std::span<const uint32_t> words;
    // What its source declares in set 0: bindings 0..bindings-1 (some may go unused), those in
    // texel_bindings (bit i: binding i) uniform texel buffers, the others storage buffers.
    uint32_t bindings;
    uint32_t texel_bindings;
    // Bit i: binding i is a storage buffer with a declaration not marked readonly (the shader may
    // write it); CommandSequence places barriers by it.
    uint32_t written_bindings;
};

// An array lookup.
const EmbeddedShader& embedded_shader(Shader shader);
inline const char* shader_name(Shader shader) { return embedded_shader(shader).name; }

}  // namespace medusa::gpu
