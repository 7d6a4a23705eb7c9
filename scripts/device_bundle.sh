#!/usr/bin/env bash
# Takes this checkout's build to a machine that can reach no package registry (a lent GPU machine),
# so that scripts/device_report.sh runs there without building.
#
#   scripts/device_bundle.sh pack [DIR]     (here, after scripts/build.sh) writes DIR (default .dev/):
#       the CLI and test binaries with ctest's files, the shared libraries they load (all but the C and
#       C++ runtimes), Debian's validation layer and GL dispatch libraries, ../shared (models, test
#       data, llama.cpp's llama-bench kit, unpacked to /tmp/llama.cpp there) and the trained files of
#       stories260K from the cache. MEDUSA_BUNDLE_BASELINE=PATH adds another build's medusa (the
#       previous commit's) as build/medusa-baseline, which device_report.sh times beside this one.
#   source scripts/device_bundle.sh unpack [DIR]   (there, in the checkout's root) puts each back where
#       the build and the tests look for it and exports the library and layer paths.
#
# The tests' ctest files name this checkout's absolute path; unpack links that path to the checkout
# there when they differ. The bundled libraries come first on the library path even where the other
# machine has its own: another build of sentencepiece there has another C++ ABI (it crashed).
bundle_pack() {
    local dir=${1:-.dev}
    local shared=${MEDUSA_SHARED_DIR:-$PWD/../shared}
    local cache=${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}
    local work
    work=$(mktemp -d)
    rm -rf "$dir" && mkdir -p "$dir/deb" "$work/build" "$work/lib"
    cp build/medusa build/medusa_tests build/medusa_peak_rss build/libmedusa_fault_shim.so build/*.cmake "$work/build/"
    strip --strip-unneeded "$work"/build/{medusa,medusa_tests,medusa_peak_rss}
    if [[ -n ${MEDUSA_BUNDLE_BASELINE:-} ]]; then
        [[ -x $MEDUSA_BUNDLE_BASELINE ]] || { echo "device_bundle: MEDUSA_BUNDLE_BASELINE '$MEDUSA_BUNDLE_BASELINE' is no executable" >&2; return 1; }
        cp "$MEDUSA_BUNDLE_BASELINE" "$work/build/medusa-baseline" && strip --strip-unneeded "$work/build/medusa-baseline"
    fi
    # The app's tests need a display; the report runs the CLI's.
    grep -v '^subdirs("app/' build/CTestTestfile.cmake >"$work/build/CTestTestfile.cmake"
    ldd build/medusa build/medusa_tests ${MEDUSA_BUNDLE_BASELINE:+"$MEDUSA_BUNDLE_BASELINE"} | awk '/=> \// {print $3}' |
        grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl)\.so' | sort -u | xargs -r cp -L -t "$work/lib"
    tar -C "$work" -czf "$dir/build.tgz" build lib
    rm -rf "$work"
    (cd "$dir/deb" && apt-get download vulkan-validationlayers >/dev/null 2>&1) ||
        echo "device_bundle: could not download vulkan-validationlayers; validation will be unavailable there" >&2
    # The GL dispatch libraries an NVIDIA driver's Vulkan ICD loads (libGLX_nvidia needs them): without
    # them a headless image's loader finds no device and every figure is the CPU's (../shared/peers/README.md).
    mkdir -p "$dir/gl"
    (cd "$dir/gl" && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1) ||
        echo "device_bundle: could not download the GL dispatch libraries; an NVIDIA machine may show no device" >&2
    echo "$PWD" >"$dir/root"
    git rev-parse HEAD >"$dir/commit"
    tar -C "$shared/.." -cJf "$dir/shared.txz" "$(basename "$shared")"  # xz: the limit on what travels is tight
    # The trained files alone: training text and checkpoints stay here.
    if [[ -d $cache/stories260K ]]; then
        tar -C "$cache" --exclude='*_data.safetensors' --exclude=checkpoint --exclude=.lock -czf "$dir/cache.tgz" stories260K
    fi
    du -sh "$dir"
}

bundle_unpack() {
    local dir=${1:-.dev}
    local root=$PWD packed_root
    packed_root=$(cat "$dir/root")
    mkdir -p build /tmp/medusa-bundle/lib
    tar -C /tmp/medusa-bundle -xzf "$dir/build.tgz"
    cp -a /tmp/medusa-bundle/build/. build/
    if [[ $packed_root != "$root" && ! -e $packed_root ]]; then
        mkdir -p "$(dirname "$packed_root")" && ln -s "$root" "$packed_root"
    fi
    tar -C "$root/.." -xJf "$dir/shared.txz" 2>/dev/null ||  # a machine without xz has Python's
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$dir/shared.txz" "$root/.."
    [[ -e $(dirname "$packed_root")/shared ]] || ln -s "$root/../shared" "$(dirname "$packed_root")/shared"
    local cache=${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}
    if [[ -f $dir/cache.tgz ]]; then mkdir -p "$cache" && tar -C "$cache" -xzf "$dir/cache.tgz"; fi
    local deb
    for deb in "$dir"/deb/*.deb; do [[ -f $deb ]] && dpkg -x "$deb" /tmp/medusa-bundle/layer; done
    # Where the system lacks them, the GL dispatch libraries go where the driver's ICD finds them.
    if [[ -w / ]] && ! ldconfig -p | grep -q libGLdispatch.so.0; then
        for deb in "$dir"/gl/*.deb; do [[ -f $deb ]] && dpkg -x "$deb" /; done
        ldconfig
    fi
    # llama.cpp's llama-bench (in ../shared/peers), the yardstick scripts/compare_llama_cpp.sh runs.
    local kit=$root/../shared/peers/llama.cpp-de3ff81-kit.txz
    if [[ -f $kit ]]; then mkdir -p /tmp/llama.cpp && tar -C /tmp/llama.cpp -xJf "$kit"; fi
    export LD_LIBRARY_PATH=/tmp/medusa-bundle/lib:/tmp/medusa-bundle/layer/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    MEDUSA_REPORT_COMMIT=$(cat "$dir/commit")
    export MEDUSA_REPORT_COMMIT
    export VK_LAYER_PATH=/tmp/medusa-bundle/layer/usr/share/vulkan/explicit_layer.d
    echo "device_bundle: unpacked" >&2
}

case "${1:-}" in
    pack) shift && (set -euo pipefail && cd "$(dirname "${BASH_SOURCE[0]}")/.." && bundle_pack "$@") ;;
    unpack) shift && bundle_unpack "$@" ;;
    *) echo "usage: scripts/device_bundle.sh pack [DIR] | source scripts/device_bundle.sh unpack [DIR]" >&2 ;;
esac
