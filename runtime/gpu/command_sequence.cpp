#include "gpu/command_sequence.h"

#include <map>

#include "gpu/buffer.h"
#include "gpu/context.h"
#include "gpu/fence_wait.h"
#include "gpu/kernel.h"
#include "gpu/vk_check.h"

namespace medusa::gpu {

namespace {
constexpr uint32_t kMaxQueries = 8192;
}  // namespace

BufferRef texel(const Buffer& b, TexelFormat f) {
    BufferRef r(b);
    r.view = b.texel_view(f);
    if (!r.view)
        throw DeviceLimitError("a texel view of " + format_bytes(b.size()) + " exceeds the device's maxTexelBufferElements");
    return r;
}

CommandSequence::CommandSequence(Context& ctx, bool timestamps)
    : ctx_(ctx), timestamps_(timestamps && ctx.timestamps_supported()) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = ctx.queue_family();
    vk_check(vkCreateCommandPool(ctx.device(), &pci, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(ctx.device(), &ai, &cb_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vkCreateFence(ctx.device(), &fci, nullptr, &fence_), "vkCreateFence");
    if (timestamps_) {
        VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = kMaxQueries;
        vk_check(vkCreateQueryPool(ctx.device(), &qi, nullptr, &queries_), "vkCreateQueryPool");
        query_capacity_ = kMaxQueries;
    }
}

CommandSequence::~CommandSequence() {
    if (pending_) vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, UINT64_MAX);
    for (auto p : descriptor_pools_) vkDestroyDescriptorPool(ctx_.device(), p, nullptr);
    if (queries_) vkDestroyQueryPool(ctx_.device(), queries_, nullptr);
    vkDestroyFence(ctx_.device(), fence_, nullptr);
    vkDestroyCommandPool(ctx_.device(), pool_, nullptr);
}

void CommandSequence::new_descriptor_pool() {
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kDescriptorsPerPool}};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = kSetsPerPool;
    pi.poolSizeCount = 2;
    pi.pPoolSizes = sizes;
    VkDescriptorPool pool;
    vk_check(vkCreateDescriptorPool(ctx_.device(), &pi, nullptr, &pool), "vkCreateDescriptorPool");
    descriptor_pools_.push_back(pool);
    sets_left_ = kSetsPerPool;
    storage_left_ = texels_left_ = kDescriptorsPerPool;
}

void CommandSequence::begin() {
    wait();
    for (auto p : descriptor_pools_) vkDestroyDescriptorPool(ctx_.device(), p, nullptr);
    descriptor_pools_.clear();
    new_descriptor_pool();
    vk_check(vkResetCommandBuffer(cb_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk_check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer");
    dispatches_ = barriers_ = 0;
    unordered_.clear();
    queries_used_ = 0;
    query_stage_.clear();
    current_stage_ = "other";
    recording_ = true;
    if (timestamps_) {
        vkCmdResetQueryPool(cb_, queries_, 0, query_capacity_);
        vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, queries_used_++);
    }
}

void CommandSequence::stage(const std::string& name) { current_stage_ = name; }

void CommandSequence::order_after_conflicts(const std::vector<Access>& accesses) {
    for (const Access& a : accesses)
        for (const Access& u : unordered_)
            if (a.buffer == u.buffer && a.begin < u.end && u.begin < a.end && (a.write || u.write)) {
                barrier();
                unordered_ = accesses;
                return;
            }
    unordered_.insert(unordered_.end(), accesses.begin(), accesses.end());
}

void CommandSequence::barrier() {
    ++barriers_;
    unordered_.clear();
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr,
                         0, nullptr);
}

void CommandSequence::dispatch_raw(const Kernel& k, std::span<const BufferRef> buffers, const void* push,
                               uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz) {
    if (!recording_) throw VulkanError("dispatch outside begin()/end()");
    if (buffers.size() != k.num_buffers() || push_size != k.push_bytes())
        throw VulkanError("dispatch of " + k.name() + ": expected " + std::to_string(k.num_buffers()) +
                          " buffers and " + std::to_string(k.push_bytes()) + " push bytes");
    uint32_t index = 0, texels = 0;
    for (const auto& b : buffers) {
        const bool texel = k.binding(index++) == BindingKind::Texel;
        texels += texel ? 1 : 0;
        if (texel != (b.view != VK_NULL_HANDLE))
            throw VulkanError("dispatch of " + k.name() + ": binding " + std::to_string(index - 1) +
                              (texel ? " needs a texel view" : " is a storage buffer, not a texel view"));
        if (texel) continue;  // its view was checked against maxTexelBufferElements when made
        // A binding past maxStorageBufferRange is undefined behaviour (lavapipe reads garbage).
        const uint64_t range = b.size == VK_WHOLE_SIZE ? b.buffer->size() - b.offset : b.size;
        if (range > ctx_.limits().storage_range)
            throw DeviceLimitError(k.name() + " would bind " + format_bytes(range) + " at once, past " +
                                   ctx_.info().name + "'s maxStorageBufferRange of " +
                                   format_bytes(ctx_.limits().storage_range));
    }
    const uint32_t storage = k.num_buffers() - texels;
    if (sets_left_ == 0 || storage > storage_left_ || texels > texels_left_) new_descriptor_pool();
    --sets_left_;
    storage_left_ -= storage;
    texels_left_ -= texels;
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = descriptor_pools_.back();
    ai.descriptorSetCount = 1;
    VkDescriptorSetLayout layout = k.set_layout();
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    vk_check(vkAllocateDescriptorSets(ctx_.device(), &ai, &set), "vkAllocateDescriptorSets");

    std::vector<VkDescriptorBufferInfo> infos;
    infos.reserve(buffers.size());
    std::vector<VkBufferView> views;
    views.reserve(buffers.size());
    for (const auto& b : buffers) {
        infos.push_back({b.buffer->handle(), b.offset, b.size});
        views.push_back(b.view);
    }
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (uint32_t i = 0; i < writes.size(); ++i) {
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        if (views[i]) {
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            writes[i].pTexelBufferView = &views[i];
        } else {
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[i].pBufferInfo = &infos[i];
        }
    }
    vkUpdateDescriptorSets(ctx_.device(), uint32_t(writes.size()), writes.data(), 0, nullptr);

    std::vector<Access> accesses;
    accesses.reserve(buffers.size());
    index = 0;
    for (const auto& b : buffers) {
        // A texel view spans its whole buffer.
        const VkDeviceSize begin = b.view ? 0 : b.offset;
        const VkDeviceSize end = b.view || b.size == VK_WHOLE_SIZE ? b.buffer->size() : b.offset + b.size;
        accesses.push_back({b.buffer->handle(), begin, end, !b.view && k.writes(index)});
        ++index;
    }
    order_after_conflicts(accesses);

    vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline());
    vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout(), 0, 1, &set, 0, nullptr);
    if (push_size) vkCmdPushConstants(cb_, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    vkCmdDispatch(cb_, gx, gy, gz);
    ++dispatches_;
    if (timestamps_ && queries_used_ < query_capacity_) {
        vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, queries_used_++);
        query_stage_.push_back(current_stage_);
    }
}

void CommandSequence::copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset, size_t bytes) {
    order_after_conflicts({{src.handle(), src_offset, src_offset + bytes, false},
                           {dst.handle(), dst_offset, dst_offset + bytes, true}});
    VkBufferCopy c{src_offset, dst_offset, bytes};
    vkCmdCopyBuffer(cb_, src.handle(), dst.handle(), 1, &c);
}

void CommandSequence::end() {
    // The host reads results after the fence, and the next submit (of this sequence or another)
    // may touch anything recorded here: nothing is left unordered past the end.
    if (!unordered_.empty()) barrier();
    vk_check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
    recording_ = false;
}

void CommandSequence::submit() {
    wait();
    vk_check(vkResetFences(ctx_.device(), 1, &fence_), "vkResetFences");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb_;
    {
        auto lock = ctx_.lock_queue();
        vk_check(vkQueueSubmit(ctx_.queue(), 1, &si, fence_), "vkQueueSubmit");
    }
    ++submits_;
    pending_ = true;
}

void CommandSequence::wait(std::chrono::microseconds spin) {
    if (!pending_) return;
    vk_check(wait_for_fence(ctx_.device(), fence_, spin), "waiting for a submit's fence");
    pending_ = false;
}

std::vector<StageTime> CommandSequence::stage_times() const {
    std::vector<StageTime> out;
    if (!timestamps_ || queries_used_ < 2 || pending_ || submits_ == 0) return out;
    std::vector<uint64_t> ts(queries_used_);
    VkResult r = vkGetQueryPoolResults(ctx_.device(), queries_, 0, queries_used_, ts.size() * 8, ts.data(), 8,
                                       VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS) return out;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i + 1 < ts.size(); ++i) {
        const std::string& s = query_stage_[i];
        if (!index.count(s)) index[s] = out.size(), out.push_back({s, 0, 0});
        auto& st = out[index[s]];
        st.ms += double(ts[i + 1] - ts[i]) * ctx_.timestamp_period_ns() * 1e-6;
        st.dispatches++;
    }
    return out;
}

}  // namespace medusa::gpu
