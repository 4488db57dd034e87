# From the repo root after `cmake --build build` (host only, no GPU).
set -e
D=bench/results/cpu-2026-12-07-fused-levels
F=bench/suites/families
g++ -std=c++20 -O1 -Iinclude -Isrc $D/fused_levels.cpp build/libtnrt_core.a -o /tmp/fused_levels
/tmp/fused_levels data/tensornetwork_permutation_optimized.json $F/rqc-4x5-c14-amp.json $F/rqc-5x6-c12-amp.json \
  $F/qaoa-maxcut-n24-p4.json $F/qaoa-zz-n60-p4.json $F/regular3-n130.json $F/regular4-n70.json $F/hyper-n90-r3-e3.json \
  $F/lattice-10x10-d4.json $F/peps-norm-5x5-D4.json > $D/fused-levels.txt
