#include "gpu/workgroup_size.h"

#include <map>
#include <optional>
#include <string>

#include "gpu/vk_check.h"

namespace medusa::gpu {

namespace {

// The SPIR-V opcodes, execution modes and decorations this reads (SPIR-V 1.6 specification).
enum : uint32_t {
    OpExecutionMode = 16,
    OpConstant = 43,
    OpSpecConstant = 50,
    OpSpecConstantComposite = 51,
    OpConstantComposite = 44,
    OpDecorate = 71,
    OpExecutionModeId = 331,
    ModeLocalSize = 17,
    ModeLocalSizeId = 38,
    DecorationSpecId = 1,
    DecorationBuiltIn = 11,
    BuiltInWorkgroupSize = 25,
};

}  // namespace

WorkgroupSize spirv_workgroup_size(std::span<const uint32_t> words, const std::vector<uint32_t>& spec_constants) {
    std::optional<WorkgroupSize> literal;            // OpExecutionMode LocalSize
    std::optional<std::array<uint32_t, 3>> by_ids;   // OpExecutionModeId LocalSizeId, or the WorkgroupSize built-in's parts
    std::optional<uint32_t> builtin;                  // the id decorated BuiltIn WorkgroupSize
    std::map<uint32_t, uint32_t> values, spec_ids;   // scalar constants' values; spec constants' constant_id
    std::map<uint32_t, std::array<uint32_t, 3>> composites;
    for (size_t i = 5; i < words.size();) {
        const uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
        if (count == 0 || i + count > words.size()) throw VulkanError("a shader's SPIR-V ends inside an instruction");
        const uint32_t* w = &words[i];
        if (op == OpExecutionMode && count >= 6 && w[2] == ModeLocalSize) literal = WorkgroupSize{w[3], w[4], w[5]};
        if (op == OpExecutionModeId && count >= 6 && w[2] == ModeLocalSizeId) by_ids = {w[3], w[4], w[5]};
        if (op == OpDecorate && count >= 4 && w[2] == DecorationSpecId) spec_ids[w[1]] = w[3];
        if (op == OpDecorate && count >= 4 && w[2] == DecorationBuiltIn && w[3] == BuiltInWorkgroupSize) builtin = w[1];
        if ((op == OpConstant || op == OpSpecConstant) && count >= 4) values[w[2]] = w[3];
        if ((op == OpConstantComposite || op == OpSpecConstantComposite) && count >= 6)
            composites[w[2]] = {w[3], w[4], w[5]};
        i += count;
    }
    // The built-in overrides the execution mode (what glslang writes for local_size_x_id).
    if (builtin && composites.count(*builtin)) by_ids = composites[*builtin];
    if (by_ids) {
        WorkgroupSize size;
        for (int d = 0; d < 3; ++d) {
            const uint32_t id = (*by_ids)[d];
            const auto spec = spec_ids.find(id);
            if (spec != spec_ids.end() && spec->second < spec_constants.size()) size[d] = spec_constants[spec->second];
            else if (values.count(id)) size[d] = values[id];
            else throw VulkanError("a shader's workgroup size names a constant its SPIR-V does not define");
        }
        return size;
    }
    if (literal) return *literal;
    throw VulkanError("a shader's SPIR-V declares no workgroup size");
}

}  // namespace medusa::gpu
