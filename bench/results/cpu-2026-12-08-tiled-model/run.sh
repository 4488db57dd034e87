# From the repo root after `cmake --build build` (host only, no GPU): the tiled kernel's traffic model
# (tiled_model.cpp) on the memory-bound networks' large tiled steps, at the H100's copy bandwidth of
# 2026-12-07h (3036 GB/s), 132 SMs at 1.98 GHz, under each program's compiled layout there; and for
# lattice-10x10-d4's step 41 under all four layouts. Then divisions.sh (needs a build of next/tiled-early).
set -e
D=bench/results/cpu-2026-12-08-tiled-model
F=bench/suites/families
g++ -std=c++20 -O2 -Iinclude -Isrc $D/tiled_model.cpp build/libtnrt_core.a -o /tmp/tiled_model
{
  for l in column row follow planned; do /tmp/tiled_model $F/lattice-10x10-d4.json $l 41 1 3036 132 1.98; echo; done
} > $D/lattice-step41.md
{
  /tmp/tiled_model $F/lattice-10x10-d4.json row - 30 3036 132 1.98; echo
  /tmp/tiled_model $F/qaoa-zz-n60-p4.json row - 30 3036 132 1.98; echo
  /tmp/tiled_model $F/peps-norm-5x5-D4.json planned - 30 3036 132 1.98; echo
  /tmp/tiled_model $F/rqc-5x6-c12-amp.json planned - 30 3036 132 1.98
} > $D/large-steps.md
