#include "gpu/kernel.h"

#include "gpu/context.h"
#include "gpu/embedded_shaders.h"
#include "gpu/vk_check.h"

namespace medusa::gpu {

std::string binding_mismatch(Shader shader, const std::vector<BindingKind>& bindings) {
    const EmbeddedShader& s = embedded_shader(shader);
    const std::string name = s.name;
    if (bindings.size() != s.bindings)
        return name + " declares " + std::to_string(s.bindings) + " bindings, its kernel binds " +
               std::to_string(bindings.size());
    for (uint32_t i = 0; i < s.bindings; ++i) {
        const bool texel = (s.texel_bindings >> i) & 1;
        if (texel != (bindings[i] == BindingKind::Texel))
            return name + " declares binding " + std::to_string(i) + " a " +
                   (texel ? "uniform texel buffer" : "storage buffer") + ", its kernel binds a " +
                   (texel ? "storage buffer" : "uniform texel buffer");
    }
    return {};
}

Kernel::Kernel(Context& ctx, Shader shader, uint32_t num_buffers, uint32_t push_bytes,
               const std::vector<uint32_t>& spec_constants)
    : Kernel(ctx, shader, std::vector<BindingKind>(num_buffers, BindingKind::Storage), push_bytes, spec_constants) {}

Kernel::Kernel(Context& ctx, Shader shader, std::vector<BindingKind> kinds, uint32_t push_bytes,
               const std::vector<uint32_t>& spec_constants)
    : ctx_(ctx),
      shader_(shader),
      bindings_(std::move(kinds)),
      push_bytes_(push_bytes),
      workgroup_size_(gpu::workgroup_size(shader, spec_constants)) {
    const uint32_t num_buffers = uint32_t(bindings_.size());
    if (std::string why = binding_mismatch(shader, bindings_); !why.empty()) throw VulkanError(why);
    const std::span<const uint32_t> code = embedded_shader(shader).words;

    std::vector<VkDescriptorSetLayoutBinding> bindings(num_buffers);
    for (uint32_t i = 0; i < num_buffers; ++i)
        bindings[i] = {i,
                       bindings_[i] == BindingKind::Texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                          : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                       1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dli.bindingCount = num_buffers;
    dli.pBindings = bindings.data();
    vk_check(vkCreateDescriptorSetLayout(ctx.device(), &dli, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    pli.pushConstantRangeCount = push_bytes ? 1 : 0;
    pli.pPushConstantRanges = &range;
    vk_check(vkCreatePipelineLayout(ctx.device(), &pli, nullptr, &layout_), "vkCreatePipelineLayout");

    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = code.size() * sizeof(uint32_t);
    smi.pCode = code.data();
    VkShaderModule module;
    vk_check(vkCreateShaderModule(ctx.device(), &smi, nullptr, &module), "vkCreateShaderModule");

    std::vector<VkSpecializationMapEntry> entries(spec_constants.size());
    for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), spec_constants.size() * 4,
                              spec_constants.data()};
    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "main";
    cpi.stage.pSpecializationInfo = spec_constants.empty() ? nullptr : &spec;
    cpi.layout = layout_;
    VkResult r = vkCreateComputePipelines(ctx.device(), VK_NULL_HANDLE, 1, &cpi, nullptr, &pipeline_);
    vkDestroyShaderModule(ctx.device(), module, nullptr);
    vk_check(r, ("creating pipeline " + name()).c_str());
    ctx.count_pipeline();
}

Kernel::~Kernel() {
    vkDestroyPipeline(ctx_.device(), pipeline_, nullptr);
    vkDestroyPipelineLayout(ctx_.device(), layout_, nullptr);
    vkDestroyDescriptorSetLayout(ctx_.device(), set_layout_, nullptr);
}

}  // namespace medusa::gpu
