// `medusa bench --synthetic NAME --dtype A,B,...`: decode speed and weight bandwidth per type.
#pragma once
#include "args.h"

namespace medusa::cli {
// True when `bench` was given a synthetic model and a comma-separated --dtype list.
bool wants_dtype_comparison(const Args& args);
int run_bench_dtypes(const Args& args);
}  // namespace medusa::cli
