# From the repo root after `cmake --build build` (host-only probes of the core library; no GPU):
# each program is built against build/libtnrt_core.a and run on the suite's networks.
set -e
D=bench/results/cpu-2026-12-07-fusion-counts
F=bench/suites/families
for p in plan_steps_print fused_counts first_unfit_step leaf_subtrees; do
  g++ -std=c++20 -O1 -Iinclude -Isrc $D/$p.cpp build/libtnrt_core.a -o /tmp/$p
done
{ /tmp/plan_steps_print $F/lm-sliding-d2-h8-o64-b256.json row
  for k in 6 19 20 21 33; do /tmp/plan_steps_print $F/lm-sliding-d2-h8-o64-b256.json row $k | grep -A3 "^step $k "; done; } > $D/lm-sliding-d2-row-plan.txt
for n in rqc-4x5-c14-amp hyper-n90-r3-e3 regular3-n130 lattice-10x10-d4 qaoa-zz-n60-p4; do echo $n; /tmp/fused_counts $F/$n.json; done > $D/fused-counts.txt
for n in rqc-4x5-c14-amp rqc-5x6-c12-amp regular3-n130 hyper-n90-r3-e3 qaoa-zz-n60-p4 lattice-10x10-d4 peps-norm-5x5-D4; do echo "$n: $(/tmp/first_unfit_step $F/$n.json)"; done > $D/first-unfit-step.txt
for n in rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4 mpo-heis-L40-D64-f64; do /tmp/leaf_subtrees $F/$n.json; done > $D/leaf-subtrees.txt
