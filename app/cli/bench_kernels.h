// `medusa bench --tune-kernels (-m MODEL | --synthetic NAME --dtype T)`: times every matrix-kernel
// configuration (texel views or storage loads, workgroup sizes) on this device with this model's
// shapes, side by side in one run, and keeps the fastest in kernel_tuning_path() for every later
// GpuModel of the same device and shapes.
#pragma once
#include "args.h"

namespace medusa::cli {
int run_kernel_tuning(const Args& args);
}  // namespace medusa::cli
