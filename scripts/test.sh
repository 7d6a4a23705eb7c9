#!/usr/bin/env bash
# Builds and runs the whole test suite with the Vulkan validation layer on, then the loader
# error and tokenizer tests under AddressSanitizer, the desktop app under ThreadSanitizer and
# AddressSanitizer/LeakSanitizer, and each file-format fuzzer for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
export MEDUSA_VALIDATION=1
(cd build && ctest --output-on-failure -j2 --timeout 900)

echo "== loader error and tokenizer tests under AddressSanitizer + UBSan"
# One sanitizer build (-O1, line tables) serves these tests and the app's smoke run below.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DMEDUSA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target medusa_tests medusa
ASAN_OPTIONS=detect_leaks=1 build-asan/medusa_tests "[loader-errors],[cli-errors],[bpe],[tokenizer-oracles]"

echo "== the desktop app under ThreadSanitizer and AddressSanitizer/LeakSanitizer"
scripts/test_app_sanitizers.sh

if command -v clang++ >/dev/null; then
    echo "== fuzzing the file parsers (${MEDUSA_FUZZ_SECONDS:-20} s each)"
    scripts/run_fuzzers.sh "${MEDUSA_FUZZ_SECONDS:-20}"
fi
