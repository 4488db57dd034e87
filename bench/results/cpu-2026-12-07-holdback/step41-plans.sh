# From the repo root after `cmake --build build` (host only, no GPU): eager's rule for lattice-10x10-d4's
# step 41 under each of the four intermediate layouts (its kernel, and its operands' modes [extent stride]),
# with plan_steps_print.cpp of bench/results/cpu-2026-12-07-fusion-counts.
set -e
g++ -std=c++20 -O1 -Iinclude -Isrc bench/results/cpu-2026-12-07-fusion-counts/plan_steps_print.cpp build/libtnrt_core.a -o /tmp/plan_steps_print
for lay in column row follow planned; do
  echo "== $lay"
  /tmp/plan_steps_print bench/suites/families/lattice-10x10-d4.json $lay 41 | grep -A3 "^step 41 "
done > bench/results/cpu-2026-12-07-holdback/step41-plans.txt
