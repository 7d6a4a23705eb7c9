// A compute pipeline built from one embedded SPIR-V module: N storage-buffer bindings
// (set 0, bindings 0..N-1) and a push-constant block.
#pragma once
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace medusa::gpu {

class Context;

class Kernel {
public:
    // spec_constants are bound to constant_id 0, 1, ... in order.
    Kernel(Context& ctx, const std::string& shader, uint32_t num_buffers, uint32_t push_bytes,
           const std::vector<uint32_t>& spec_constants = {});
    ~Kernel();
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    VkPipeline pipeline() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    uint32_t num_buffers() const { return num_buffers_; }
    uint32_t push_bytes() const { return push_bytes_; }
    const std::string& name() const { return name_; }

private:
    Context& ctx_;
    std::string name_;
    uint32_t num_buffers_;
    uint32_t push_bytes_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace medusa::gpu
