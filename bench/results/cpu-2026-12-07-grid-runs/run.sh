# From the repo root after `cmake --build build` (a host-only probe of the core library; no GPU).
set -e
D=bench/results/cpu-2026-12-07-grid-runs
F=bench/suites/families
g++ -std=c++20 -O1 -Iinclude -Isrc $D/grid_runs.cpp build/libtnrt_core.a -o /tmp/grid_runs
for n in reference rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4 mpo-heis-L40-D64-f64 lm-sliding-d3-h4-o16-b128 lm-first-last-d2-h8-o64; do
  f=$F/$n.json; [[ $n == reference ]] && f=data/tensornetwork_permutation_optimized.json
  /tmp/grid_runs $f
done > $D/grid-runs.txt
