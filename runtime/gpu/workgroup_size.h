// A compute shader's workgroup size, read from its SPIR-V: what `local_size_x/y/z` (or
// `local_size_x_id`, a specialization constant) declares, so that a dispatch can be given the
// elements it covers instead of a copy of the shader's numbers.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "gpu/embedded_shaders.h"

namespace medusa::gpu {

using WorkgroupSize = std::array<uint32_t, 3>;

// The module's workgroup size with `spec_constants` bound to constant_id 0, 1, ... (a size that is
// a specialization constant not among them takes its default). Throws VulkanError when the module
// declares none.
WorkgroupSize spirv_workgroup_size(std::span<const uint32_t> words, const std::vector<uint32_t>& spec_constants = {});
inline WorkgroupSize workgroup_size(Shader shader, const std::vector<uint32_t>& spec_constants = {}) {
    return spirv_workgroup_size(embedded_shader(shader).words, spec_constants);
}

}  // namespace medusa::gpu
