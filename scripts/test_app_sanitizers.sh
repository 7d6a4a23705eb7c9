#!/usr/bin/env bash
# The desktop app under sanitizers (issue 5):
#  1. ThreadSanitizer: the StepLog hand-over tests (a writer thread and a polling reader) and a
#     DecodeWorker decoding real Medusa steps on the GPU while this thread polls the log and
#     calls the worker's controls, as the UI does (app/chat/tests/worker_handover_test.cpp).
#  2. AddressSanitizer + LeakSanitizer + UBSan: medusa-chat --smoke under Xvfb (start, load the
#     default model, generate, stop, clear, generate again, quit) with detect_leaks=1.
# Both with the Vulkan validation layer on. Builds only those targets, in build-tsan/ (-O1 -g1) and
# build-asan/ (scripts/sanitizer_build.sh, shared with scripts/test.sh's loader tests and the
# fuzzers). Races reported inside third-party libraries that are not built with ThreadSanitizer
# are suppressed by scripts/tsan.supp (each entry says why); see below for the driver's
# process-lifetime blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
flags=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")  # line tables: enough for file:line stacks
export MEDUSA_VALIDATION=1
export MEDUSA_SYNC_VALIDATION=0  # the layer's own records of accesses are not the app's (scripts/test.sh)
# An empty cache for both runs, as CTest gives its tests: heads trained for the default model
# (scripts/run.sh leaves them in ~/.cache/medusa-vk) would make the worker draft with them while
# the reference decodes with untrained heads, and its steps would differ.
export MEDUSA_CACHE=$root/build-tsan/empty-cache

echo "== ThreadSanitizer: StepLog hand-over, DecodeWorker with a polling UI thread"
cmake -S . -B build-tsan "${flags[@]}" -DMEDUSA_TSAN=ON >/dev/null
rm -rf "$MEDUSA_CACHE" && mkdir -p "$MEDUSA_CACHE"
cmake --build build-tsan -j"$jobs" --target medusa_chat_tsan_tests
# exitcode: any report fails the run, after all of them are printed.
TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp" \
    build-tsan/app/chat/medusa_chat_tsan_tests "[step_log],[worker]" --use-colour no

echo "== AddressSanitizer + LeakSanitizer: medusa-chat --smoke"
scripts/sanitizer_build.sh medusa-chat
rm -rf build-asan/empty-cache && mkdir -p build-asan/empty-cache  # as CTest runs it: the defaults must not depend on ~/.cache
# The Vulkan loader dlclose()s the driver at vkDestroyInstance. Lavapipe keeps a few blocks for
# the whole process in its globals (240 bytes in 3 blocks here, never freed); once the library is
# unloaded they are unreachable and LeakSanitizer reports them from an "<unknown module>", which
# no suppression can name. Preloading the driver keeps it mapped, so those blocks stay reachable
# and every frame of any real leak can be symbolised. (clang links the ASan runtime into the app.)
preload=""
for lib in /usr/lib/x86_64-linux-gnu/libvulkan_lvp.so /usr/lib/aarch64-linux-gnu/libvulkan_lvp.so; do
    [[ -e $lib ]] && preload="$preload $lib"
done
(
    export MEDUSA_CACHE=$root/build-asan/empty-cache
    export ASAN_OPTIONS="detect_leaks=1 halt_on_error=1"
    export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
    # Only the app gets the preload, not Xvfb and xvfb-run's helpers.
    xvfb-run -a env LD_PRELOAD="$preload" build-asan/app/chat/medusa-chat --smoke
)
echo "sanitizers: no races, leaks, memory errors or validation messages"
