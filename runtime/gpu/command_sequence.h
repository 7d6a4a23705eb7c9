// A command buffer of compute dispatches that is recorded once and submitted many times:
// per-step values live in buffers, so replaying costs one submit and no re-recording.
// Barriers go only where data needs them: before a dispatch or copy that reads a range written
// since the last barrier, or writes a range read or written since then (a GPU runs independent
// dispatches side by side; a barrier after each would drain it every time). Bindings a shader
// declares readonly, and texel views, are reads; its other storage buffers are writes.
#pragma once
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/fence_wait.h"
#include "gpu/kernel.h"

namespace medusa::gpu {

class Context;

// A buffer bound to one binding: a storage buffer (a range of it), or for a texel binding the
// whole buffer through a texel view (texel()).
struct BufferRef {
    const Buffer* buffer;
    size_t offset = 0;
    size_t size = VK_WHOLE_SIZE;
    VkBufferView view = VK_NULL_HANDLE;
    BufferRef(const Buffer& b) : buffer(&b) {}  // NOLINT: implicit on purpose, the common case
    BufferRef(const Buffer& b, size_t off, size_t sz) : buffer(&b), offset(off), size(sz) {}
};
// `b` read as texels of `f` (Buffer::texel_view); throws when the buffer has too many texels.
BufferRef texel(const Buffer& b, TexelFormat f);

struct StageTime {
    std::string stage;
    double ms = 0;
    int dispatches = 0;
};

class CommandSequence {
public:
    explicit CommandSequence(Context& ctx, bool timestamps = false);
    ~CommandSequence();
    CommandSequence(const CommandSequence&) = delete;
    CommandSequence& operator=(const CommandSequence&) = delete;

    void begin();  // discards anything recorded before
    // Labels the dispatches that follow, for per-stage GPU time.
    void stage(const std::string& name);
    void dispatch_raw(const Kernel& k, std::span<const BufferRef> buffers, const void* push, uint32_t push_size,
                      uint32_t gx, uint32_t gy = 1, uint32_t gz = 1);
    void dispatch_raw(const Kernel& k, std::initializer_list<BufferRef> buffers, const void* push, uint32_t push_size,
                      uint32_t gx, uint32_t gy = 1, uint32_t gz = 1) {
        dispatch_raw(k, std::span<const BufferRef>(buffers.begin(), buffers.size()), push, push_size, gx, gy, gz);
    }
    template <class P>
    void dispatch(const Kernel& k, std::span<const BufferRef> buffers, const P& push, uint32_t gx, uint32_t gy = 1,
                  uint32_t gz = 1) {
        dispatch_raw(k, buffers, &push, sizeof(P), gx, gy, gz);
    }
    template <class P>
    void dispatch(const Kernel& k, std::initializer_list<BufferRef> buffers, const P& push, uint32_t gx,
                  uint32_t gy = 1, uint32_t gz = 1) {
        dispatch_raw(k, buffers, &push, sizeof(P), gx, gy, gz);
    }
    // One invocation per element of an nx by ny by nz grid: as many workgroups as cover it at the
    // kernel's workgroup size.
    template <class P>
    void dispatch_over(const Kernel& k, std::initializer_list<BufferRef> buffers, const P& push, uint32_t nx,
                       uint32_t ny = 1, uint32_t nz = 1) {
        const WorkgroupSize& w = k.workgroup_size();
        dispatch_raw(k, buffers, &push, sizeof(P), (nx + w[0] - 1) / w[0], (ny + w[1] - 1) / w[1],
                     (nz + w[2] - 1) / w[2]);
    }
    void copy(const Buffer& src, size_t src_offset, const Buffer& dst, size_t dst_offset, size_t bytes);
    void end();

    void submit();  // one vkQueueSubmit
    // Polls the fence for up to `spin`, then blocks (fence_wait.h says why).
    void wait(std::chrono::microseconds spin = kFenceSpinBudget);
    void run() { submit(), wait(); }

    // Each descriptor pool holds kSetsPerPool sets and kDescriptorsPerPool storage buffers and as
    // many texel views; recording moves on to a new pool when any of the three runs out (a texel
    // matmul's set holds 10 storage buffers, more than a pool's average per set).
    static constexpr uint32_t kSetsPerPool = 256, kDescriptorsPerPool = 256 * 8;
    size_t descriptor_pool_count() const { return descriptor_pools_.size(); }
    Context& context() const { return ctx_; }
    uint32_t dispatch_count() const { return dispatches_; }
    // Barriers recorded since begin(), the one that closes the sequence included.
    uint32_t barrier_count() const { return barriers_; }
    uint64_t submit_count() const { return submits_; }
    // GPU time of the last finished submit, summed per stage label (empty without timestamps).
    std::vector<StageTime> stage_times() const;

private:
    // A byte range of a buffer that a recorded command reads or writes.
    struct Access {
        VkBuffer buffer;
        VkDeviceSize begin, end;
        bool write;
    };
    // Records a barrier first if `accesses` conflict with what was recorded since the last one.
    void order_after_conflicts(const std::vector<Access>& accesses);
    void barrier();
    void new_descriptor_pool();
    Context& ctx_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> descriptor_pools_;
    uint32_t sets_left_ = 0, storage_left_ = 0, texels_left_ = 0;  // in the newest pool
    bool timestamps_ = false;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    uint32_t query_capacity_ = 0;
    uint32_t queries_used_ = 0;
    std::vector<std::string> query_stage_;  // stage label of each timed dispatch
    std::string current_stage_ = "other";
    uint32_t dispatches_ = 0, barriers_ = 0;
    std::vector<Access> unordered_;  // accesses since the last barrier
    uint64_t submits_ = 0;
    bool pending_ = false;
    bool recording_ = false;
};

}  // namespace medusa::gpu
