// A compute pipeline built from one embedded SPIR-V module: its bindings (set 0, bindings 0..N-1,
// storage buffers unless said otherwise) and a push-constant block.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/embedded_shaders.h"
#include "gpu/workgroup_size.h"

namespace medusa::gpu {

class Context;

enum class BindingKind { Storage, Texel };  // storage buffer, uniform texel buffer

// Empty when `bindings` are the ones `shader`'s source declares (as many, each of its kind), else
// what differs. A Kernel throws with it: a binding a shader reads and the pipeline lacks would
// otherwise surface as a validation error or a wrong read at dispatch.
std::string binding_mismatch(Shader shader, const std::vector<BindingKind>& bindings);

class Kernel {
public:
    // spec_constants are bound to constant_id 0, 1, ... in order. Throws VulkanError when the
    // bindings are not the shader's (binding_mismatch).
    Kernel(Context& ctx, Shader shader, uint32_t num_buffers, uint32_t push_bytes,
           const std::vector<uint32_t>& spec_constants = {});
    Kernel(Context& ctx, Shader shader, std::vector<BindingKind> bindings, uint32_t push_bytes,
           const std::vector<uint32_t>& spec_constants = {});
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    VkPipeline pipeline() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    uint32_t num_buffers() const { return uint32_t(bindings_.size()); }
    BindingKind binding(uint32_t i) const { return bindings_[i]; }
    // Whether the shader may write binding i (a storage buffer not declared readonly).
    bool writes(uint32_t i) const { return (embedded_shader(shader_).written_bindings >> i) & 1; }
    uint32_t push_bytes() const { return push_bytes_; }
    Shader shader() const { return shader_; }
    std::string name() const { return shader_name(shader_); }
    // Its invocations per workgroup in x, y and z, as the shader declares them with the spec
    // constants it was built with.
    const WorkgroupSize& workgroup_size() const { return workgroup_size_; }

private:
    Context& ctx_;
    Shader shader_;
    std::vector<BindingKind> bindings_;
    uint32_t push_bytes_;
    WorkgroupSize workgroup_size_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace medusa::gpu
