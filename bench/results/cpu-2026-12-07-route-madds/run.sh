# From the repo root after `cmake --build build` (host only): the multiply-adds gemm_route.cpp counted
# from a lowered step's modes before be826e5 against step_multiply_adds (path.hpp), on every
# contraction step of five networks' step plans under each of the four layouts.
set -e
D=bench/results/cpu-2026-12-07-route-madds
g++ -std=c++20 -O1 -Iinclude -Isrc $D/madds_check.cpp build/libtnrt_core.a -o /tmp/madds_check
/tmp/madds_check bench/suites/families/lm-sliding-d2-h8-o64-b256.json bench/suites/families/rqc-4x5-c14-amp.json \
  bench/suites/families/regular4-n70.json bench/suites/families/hyper-n90-r3-e3.json data/tensornetwork_permutation_optimized.json > $D/madds-check.txt
