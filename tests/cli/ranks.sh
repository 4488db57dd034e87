#!/usr/bin/env bash
# `tnrt contract --ranks N` (issue 18, the CPU part): slices shared among N ranks (threads), then
# combined. The result equals the one-rank sliced run and the unsliced run (.npy compared with
# numpy) under both schedules; a sliced output label's blocks are gathered; idle ranks say so; the
# options' misuse is one typed error line.
source "$(dirname "$0")/common.bash"

net="$root/bench/suites/sliced/tiny-regular3-n90.json"
tnrt contract "$net" --device cpu --no-slice --out "$tmp/whole.npy"
check "unsliced run exits 0" test "$rc" == 0
for sched in contiguous round-robin; do
  for n in 1 3 8; do
    tnrt contract "$net" --device cpu --ranks "$n" --schedule "$sched" --out "$tmp/r$n-$sched.npy" --json "$tmp/r$n-$sched.json"
    check "--ranks $n --schedule $sched exits 0 ($(head -c 200 "$tmp/err"))" test "$rc" == 0
    check "--ranks $n $sched: the ranks line" grep -q "^ranks: $n ($sched, threads of this process)" "$tmp/out"
    if have_numpy; then
      check "--ranks $n $sched equals the unsliced result" python3 -c "
import numpy as np, sys
a, b = np.load('$tmp/whole.npy'), np.load('$tmp/r$n-$sched.npy')
sys.exit(not (a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=0)))"
    else
      skip_check "numpy missing: --ranks $n $sched result not compared"
    fi
  done
done
check "8 ranks over 8 slices: none idle" python3 -c "import json,sys; d=json.load(open('$tmp/r8-contiguous.json')); sys.exit(not (d['ranks']['notes'] == [] and len(d['ranks']['per_rank']) == 8))" 

# an output label sliced: ab,bc->ac over a (output) with 3 ranks on 6 slices: every block gathered
tnrt contract "ab,bc->ac" --shapes 6x8,8x5 --fill 1 --device cpu --slice a --ranks 3 --out "$tmp/blocks.npy"
check "sliced output label: 6 blocks gathered, 0 summed" grep -q "(6 blocks gathered, 0 summed)" "$tmp/out"
if have_numpy; then
  check "sliced output label: every element is 8" python3 -c "import numpy as np,sys; a=np.load('$tmp/blocks.npy'); sys.exit(not (a.shape == (6, 5) and (a == 8).all()))"
fi
# fewer slices than ranks: idle ranks say so on stderr, the result is still right
tnrt contract "ab,bc->ac" --shapes 2x8,8x5 --fill 1 --device cpu --slice a --ranks 4 --out "$tmp/idle.npy"
check "idle ranks: exit 0" test "$rc" == 0
check "idle ranks: a note names rank 2" grep -q "^tnrt: note: rank 2 of 4: no slices (2 slices for 4 ranks): idle$" "$tmp/err"
check "idle ranks: a note names rank 3" grep -q "^tnrt: note: rank 3 of 4: no slices" "$tmp/err"

expect_error 2 contract "$net" --device cpu --ranks 0
expect_error 2 contract "$net" --device cpu --ranks two
expect_error 2 contract "$net" --device cpu --schedule round-robin
expect_error 2 contract "$net" --device cpu --ranks 2 --schedule diagonal
expect_error 2 contract "$net" --device cpu --ranks 2 --slice-range 0:2
check "no result file from a refused run" test ! -e "$tmp/refused.npy"
finish
