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
    ref) for m in eager compiled; do timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --json $out/ref-$m.json 2>&1 | tail -30; done ;;
    refverify) for m in eager compiled; do timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --random 7 --verify 2>&1 | tail -8; done ;;
    torch) timeout 300 python3 bench/peers/torch_tree.py $ref --json $out/torch.json 2>&1 | tail -5
           timeout 300 python3 bench/peers/torch_tree.py $ref --graph --json $out/torch-graph.json 2>&1 | tail -5
           python3 -c "import json;[print(f, json.load(open('$out/'+f)).get('median_ms')) for f in ['torch.json','torch-graph.json']]" ;;
    bw) timeout 120 python3 bench/bandwidth.py 2>&1 | tail -3 ;;
    micro) timeout 120 $bin/tnrt_retire_bench 2>&1 | tail -20 ;;
    *) echo "unknown step $s" ;;
  esac
done
