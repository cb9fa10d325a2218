#!/usr/bin/env bash
# Installs what is missing (Debian packages; the CUDA toolkit is expected at /usr/local/cuda) and
# configures + builds flexjit in BUILD_DIR (default: build). Extra arguments go to cmake.
#   scripts/setup.sh [BUILD_DIR] [cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))

packages=(cmake ninja-build g++ nlohmann-json3-dev libfmt-dev libcli11-dev libxxhash-dev libgtest-dev clang libclang-rt-dev
          libdlpack-dev python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pytest)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "error: the CUDA toolkit (NVRTC and headers) was not found at /usr/local/cuda;" >&2
  echo "       install CUDA 12.x/13.x there or pass -DCUDAToolkit_ROOT=... to cmake" >&2
  exit 1
fi
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${FLEXJIT_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
