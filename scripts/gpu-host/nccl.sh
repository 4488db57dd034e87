#!/usr/bin/env bash
# On the GPU host, from the repo root, after session.sh unpacked the binaries (/tmp/tnrt-bin, or
# $TNRT_BIN) and cuTENSOR (/opt/tnrt-deps/lib): the NCCL path of `tnrt contract --distributed`
# (issue 18) as far as one GPU allows (NCCL refuses two ranks on one GPU): test_cuda_distributed
# (a world of size 1 through a real communicator and ncclReduce), then the sliced network through
# `--launch 1` with and without NCCL (TNRT_NCCL_ONE_RANK=1 forces it for one rank) against the
# plain sliced and the unsliced runs, as a short table (logs and --json reports under $OUT).
#   usage: bash scripts/gpu-host/nccl.sh [NETWORK.json]
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bin=${TNRT_BIN:-/tmp/tnrt-bin}
export LD_LIBRARY_PATH=/opt/tnrt-deps/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines (tnrt sets it too when unset)
site_find() {  # the first file matching a glob under the Python site-packages
  python3 -c "import site,glob,sys;print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(d+'/'+sys.argv[1], recursive=True))),''))" "$1" 2>/dev/null
}
if [[ -z ${TNRT_NCCL_PATH:-} ]]; then
  TNRT_NCCL_PATH=$(site_find 'nvidia/nccl/lib/libnccl.so.2')
  [[ -n $TNRT_NCCL_PATH ]] || TNRT_NCCL_PATH=$(site_find 'nvidia/**/libnccl.so.2')
  [[ -n $TNRT_NCCL_PATH ]] && export TNRT_NCCL_PATH
fi
if [[ -z ${TNRT_CUBLAS_PATH:-} ]]; then
  TNRT_CUBLAS_PATH=$(site_find 'nvidia/**/libcublas.so.13')
  [[ -n $TNRT_CUBLAS_PATH ]] && export TNRT_CUBLAS_PATH
fi
if [[ ! -e /opt/tnrt-deps/lib/libcutensor.so.2 ]]; then  # a host without session.sh's unpack: the wheel's
  c=$(site_find 'cutensor/lib/libcutensor.so.2'); [[ -n $c ]] && export LD_LIBRARY_PATH=$(dirname "$c"):$LD_LIBRARY_PATH
fi
echo "NCCL: ${TNRT_NCCL_PATH:-none found in the wheels (the default search then)}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -4
echo "--- test_cuda_distributed"
timeout 300 "$bin/test_cuda_distributed" 2>&1 | grep -E "^\[nccl\]|OK \]|FAILED|SKIPPED|Failure|Expected|Which is|error|PASSED" | head -30
net=${1:-bench/suites/sliced/small-regular3-n180.json}
F=0.35355339059327373
common=(--device cuda --fill "$F" --warmup 1 --repeat 5)
echo "--- $net"
printf "%-22s %-4s %-28s %-12s %s\n" run exit result "median ms" "ranks / slicing"
row() {  # row LABEL ENV... -- ARGS...
  local label=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  timeout 300 env "${envs[@]}" "$bin/tnrt" contract "$net" "${common[@]}" "$@" --json "$out/nccl-$label.json" >"$out/nccl-$label.txt" 2>&1
  local rc=$?
  local result median detail
  result=$(grep -m1 '^result: ' "$out/nccl-$label.txt" | cut -c9-)
  median=$(grep -m1 '^time: ' "$out/nccl-$label.txt" | sed -E 's/^time: median ([0-9.]+) ms.*/\1/')
  detail=$(grep -m1 -E '^ranks: ' "$out/nccl-$label.txt" | sed -E 's/^ranks: //' | cut -c1-150)
  [[ -n $detail ]] || detail=$(grep -m1 -E '^slicing: ' "$out/nccl-$label.txt" | cut -c10-90)
  [[ $rc == 0 ]] || detail="$(grep -m1 '^tnrt: ' "$out/nccl-$label.txt")"
  printf "%-22s %-4s %-28s %-12s %s\n" "$label" "$rc" "${result:--}" "${median:--}" "$detail"
}
row unsliced -- --no-slice --mode compiled
row sliced -- 
row launch1 -- --launch 1
row launch1-nccl TNRT_NCCL_ONE_RANK=1 -- --launch 1
row launch1-nccl-rr TNRT_NCCL_ONE_RANK=1 -- --launch 1 --schedule round-robin
