#!/usr/bin/env bash
# On the GPU host, from the repo root: unpack cuTENSOR (all parts must have arrived) and the
# binaries, then run the named steps, logging under $OUT (or /tmp/out).
#   usage: bash scripts/gpu-host/session.sh STEP...   steps: env tests ref bench peers sanitize
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bash .gpu-host/unpack.sh | tail -1
export LD_LIBRARY_PATH=/opt/tnrt-deps/lib:${LD_LIBRARY_PATH:-}
bin=/tmp/tnrt-bin
if [[ -f .gpu-bin/bin.tar.xz ]]; then mkdir -p $bin && tar -xJf .gpu-bin/bin.tar.xz -C $bin; fi
export TNRT_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
ref=data/tensornetwork_permutation_optimized.json
for s in "$@"; do
  echo "=== $s ($(date -u +%H:%M:%S))"
  case $s in
    env) nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; ldd $bin/tnrt; $bin/tnrt --version ;;
    tests) for t in $bin/test_cuda_*; do echo "--- $t"; timeout 300 $t --gtest_brief=1 2>&1 | tail -25; done ;;
    ref) for m in eager compiled; do timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --verify --json $out/ref-$m.json 2>&1 | tail -30; done ;;
    *) echo "unknown step $s" ;;
  esac
done
