// SPIR-V compiled from shaders/*.comp at build time (see cmake/shaders.cmake).
#pragma once
#include <cstdint>
#include <span>

namespace medusa::gpu {
// Empty span when no shader of that name was built.
std::span<const uint32_t> embedded_shader(const char* name);
}  // namespace medusa::gpu
