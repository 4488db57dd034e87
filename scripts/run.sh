#!/usr/bin/env bash
# Quick start: installs what is missing and builds tnrt (scripts/setup.sh), then contracts the
# reference network (data/tensornetwork_permutation_optimized.json, every element 0.5^0.4, exact
# result 1) on the GPU when one is usable here, else on the CPU engine, and prints the result and
# the time. Extra arguments go to `tnrt contract` (e.g. --device cpu, --dtype f64, --mode compiled).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TNRT_BUILD_DIR:-build}
bash scripts/setup.sh
# Where ../shared/gpu-host/unpack.sh puts cuTENSOR on a GPU host that has no package registry.
if [[ -d /opt/tnrt-deps/lib ]]; then
  export LD_LIBRARY_PATH=/opt/tnrt-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
exec "$build/tnrt" contract data/tensornetwork_permutation_optimized.json "$@"
