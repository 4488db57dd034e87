# From the repo root after `cmake --build build` (host only, no GPU): the chains of every network of
# the suite's memory-bound set and of the reference, under the column layout, with each chain's shape.
set -e
D=bench/results/cpu-2026-12-07-chains
g++ -std=c++20 -O1 -Iinclude -Isrc $D/chain_counts.cpp build/libtnrt_core.a -o /tmp/chain_counts
{ /tmp/chain_counts data/tensornetwork_permutation_optimized.json column x
  for n in rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4 mpo-heis-L40-D64-f64; do
    /tmp/chain_counts bench/suites/families/$n.json column x
  done; } > $D/chains.txt
