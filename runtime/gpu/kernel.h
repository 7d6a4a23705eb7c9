// A compute pipeline built from one embedded SPIR-V module: its bindings (set 0, bindings 0..N-1,
// storage buffers unless said otherwise) and a push-constant block.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace medusa::gpu {

class Context;

enum class BindingKind { Storage, Texel };  // storage buffer, uniform texel buffer

class Kernel {
public:
    // spec_constants are bound to constant_id 0, 1, ... in order.
    Kernel(Context& ctx, const std::string& shader, uint32_t num_buffers, uint32_t push_bytes,
           const std::vector<uint32_t>& spec_constants = {});
    Kernel(Context& ctx, const std::string& shader, std::vector<BindingKind> bindings, uint32_t push_bytes,
           const std::vector<uint32_t>& spec_constants = {});
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    VkPipeline pipeline() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    uint32_t num_buffers() const { return uint32_t(bindings_.size()); }
    BindingKind binding(uint32_t i) const { return bindings_[i]; }
    uint32_t push_bytes() const { return push_bytes_; }
    const std::string& name() const { return name_; }

private:
    Context& ctx_;
    std::string name_;
    std::vector<BindingKind> bindings_;
    uint32_t push_bytes_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace medusa::gpu
