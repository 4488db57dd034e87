#!/usr/bin/env bash
# Installs what tnrt needs on a fresh machine (Debian packages and the cuTENSOR wheel), then
# configures and builds it in build/ (or $TNRT_BUILD_DIR). Safe to run again: it installs only
# what is missing. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TNRT_BUILD_DIR:-build}
sudo_cmd=""; [[ $(id -u) -eq 0 ]] || sudo_cmd="sudo"

need_pkgs=()
for p in cmake ninja-build g++ libopenblas-dev nlohmann-json3-dev libgtest-dev libgmock-dev python3-pip; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  echo "setup: installing ${need_pkgs[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

# cuTENSOR headers for the CUDA backend (the library itself is opened at run time), numpy for the
# .npy round-trip tests and the CPU peer. Pinned: 2.8.1 is the release measured on the H200 (driver 580).
py_need=()
python3 -c "import cutensor" 2>/dev/null || py_need+=("cutensor-cu13==2.8.1")
python3 -c "import numpy" 2>/dev/null || py_need+=("numpy")
if ((${#py_need[@]})); then
  echo "setup: pip installing ${py_need[*]}" >&2
  python3 -m pip install -q "${py_need[@]}" 2>&1 | grep -v -i "warning: running pip as" >&2 || true
fi

cuda_flag=()
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: no nvcc found: building without the CUDA backend" >&2
  cuda_flag=(-DTNRT_CUDA=OFF)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_flag[@]}" ${TNRT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
