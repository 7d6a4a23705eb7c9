#!/usr/bin/env bash
# Configures build-asan/ and builds the targets named: one clang build (-O1, line tables) with
# AddressSanitizer, UBSan (any report is fatal) and libFuzzer's coverage instrumentation serves
# the loader and tokenizer tests, the app's smoke run under LeakSanitizer and every fuzz target,
# so the test suite compiles the runtime once for all three instead of once each.
#   usage: scripts/sanitizer_build.sh TARGET...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined" \
    -DMEDUSA_SANITIZE=ON -DMEDUSA_FUZZ=ON >/dev/null
cmake --build "$root/build-asan" -j"$(nproc)" --target "$@"
