#!/usr/bin/env bash
# GPU host, repo root: the kernel-rank A/B, eager's interleaved layout learning, and lm-sliding-d2's
# kernels in eager (tnrt --profile, torch eager), after the differential GPU tests.
out=${OUT:-/tmp/out}
bash scripts/gpu-host/session.sh env > $out/env.log 2>&1
bin=/tmp/tnrt-bin
echo "--- test_cuda_differential"; timeout 300 $bin/test_cuda_differential 2>&1 | grep -E "^\[kernel-ranks\]|OK|FAILED|Failure|Expected|Which is|PASSED" | grep -v "^\[       OK" | head -30
GEMM_VARIANTS="--kernel-ranks 0;--kernel-ranks 3;--kernel-ranks 8" GEMM_PROBLEMS='hyper-n100* regular3-n160 chain-n8* chain-n12* lattice-5x5* lattice-7x7* mps-overlap-n40* lm-sliding-d2-h8-o64-b256 peps* rqc-5x5-c16* qaoa-maxcut-n24-p4 reference*' \
  bash scripts/gpu-host/session.sh gemm 2>&1 | grep -v "^ready\|^cuBLAS"
EAGER_VARIANTS="--mode eager --warmup 6;--mode eager --layout column;--mode eager --layout row;--mode eager --layout follow" EAGER_PROBLEMS='hyper-n100* lattice-10x10* regular3-n160 reference* lm-sliding-d2* qaoa-zz*' \
  bash scripts/gpu-host/session.sh eagerdiag 2>&1 | grep -v "^ready\|^cuBLAS"
f=bench/suites/families/lm-sliding-d2-h8-o64-b256.json
echo "--- lm-sliding-d2 eager, tnrt --profile"
timeout 120 $bin/tnrt contract $f --device cuda --mode eager --warmup 6 --repeat 10 --profile 2>&1 | grep -E "^time|^layout|profile|^  " | head -60
echo "--- lm-sliding-d2 torch eager kernels"
timeout 120 python3 bench/peers/torch_tree.py $f --warmups 3 --runs 10 --kernels $out/lm-d2-torch-eager.csv --json $out/lm-d2-torch-eager.json 2>&1 | tail -2
python3 -c "import json; print('torch eager median ms', json.load(open('$out/lm-d2-torch-eager.json'))['median_ms'])"
