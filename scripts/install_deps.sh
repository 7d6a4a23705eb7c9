#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the app need (only those missing).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libvulkan-dev mesa-vulkan-drivers glslc glslang-tools
          spirv-tools vulkan-validationlayers vulkan-tools libsentencepiece-dev catch2 nlohmann-json3-dev
          libglfw3-dev libimgui-dev libstb-dev libcairo2-dev fonts-dejavu-core xvfb xauth clang libclang-rt-14-dev libssl-dev
          libpcre2-dev liblzma-dev libmd4c-dev xdotool jq curl libcpp-httplib-dev nodejs)
command -v npm >/dev/null || packages+=(npm)  # NodeSource's nodejs carries its own npm (and conflicts with Debian's)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}" >&2
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
