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
# The sanitizers check this program's memory and threads: the validation layer's synchronization
# checks (on in the suite above) keep records that LeakSanitizer reports from the unloaded layer
# when a run ends on an error, so they stay out of these runs.
export MEDUSA_SYNC_VALIDATION=0
# One sanitizer build (scripts/sanitizer_build.sh) serves these tests, the app's smoke run and the fuzzers below.
scripts/sanitizer_build.sh medusa_sanitizer_tests medusa
# The hostile-file and NaN tests start medusa with a Vulkan instance: lavapipe's process-lifetime
# blocks would be reported as leaks from an unloaded "<unknown module>" and break the one-line
# checks, so the driver is preloaded as in test_app_sanitizers.sh (clang links the ASan runtime in).
preload=""
for lib in /usr/lib/x86_64-linux-gnu/libvulkan_lvp.so /usr/lib/aarch64-linux-gnu/libvulkan_lvp.so; do
    [[ -e $lib ]] && preload="$preload $lib"
done
# An empty cache, as CTest gives its tests: nothing the user trained or tuned leaks in.
rm -rf build-asan/empty-tests-cache && mkdir -p build-asan/empty-tests-cache
MEDUSA_CACHE=$PWD/build-asan/empty-tests-cache ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LD_PRELOAD="$preload" build-asan/medusa_sanitizer_tests \
    "[loader-errors],[cli-errors],[bpe],[tokenizer-oracles],[family-tokenizers],[hostile-files],[robust-json],[tokenizer-errors],[atomic-write],[nan-weights],[spm-charsmap],[pickle-bounds],[regex-budget],[hostile-outputs],[hostile-models],[cli-messages]"

echo "== the desktop app under ThreadSanitizer and AddressSanitizer/LeakSanitizer"
scripts/test_app_sanitizers.sh

echo "== fuzzing the file parsers (${MEDUSA_FUZZ_SECONDS:-5} s each)"
scripts/run_fuzzers.sh "${MEDUSA_FUZZ_SECONDS:-5}"
