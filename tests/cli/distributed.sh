#!/usr/bin/env bash
# `tnrt contract --launch N` / `--distributed` (issue 18, ranks as processes on the CPU engine): the
# result equals the unsliced run under both schedules for 1, 2 and 3 processes; rank 0 reports and
# writes --out/--json, the others one line each; a rank that fails or dies gives every rank one
# error line naming it and a non-zero exit within the timeout, and nothing is written; misuse of
# the options is one typed error line.
source "$(dirname "$0")/common.bash"

net="$root/bench/suites/sliced/tiny-regular3-n90.json"
tnrt contract "$net" --device cpu --no-slice --out "$tmp/whole.npy"
check "unsliced run exits 0" test "$rc" == 0
same() {  # same A.npy B.npy
  python3 -c "
import numpy as np, sys
a, b = np.load('$1'), np.load('$2')
sys.exit(not (a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=0)))"
}
for sched in contiguous round-robin; do
  for n in 1 2 3; do
    tnrt contract "$net" --device cpu --launch "$n" --schedule "$sched" --out "$tmp/l$n-$sched.npy" --json "$tmp/l$n-$sched.json"
    check "--launch $n --schedule $sched exits 0 ($(head -c 300 "$tmp/err"))" test "$rc" == 0
    check "--launch $n $sched: rank 0's ranks line" grep -q "^ranks: $n ($sched, processes, collective " "$tmp/out"
    check "--launch $n $sched: one result line" test "$(grep -c '^result: ' "$tmp/out")" == 1
    check "--launch $n $sched: a line from each other rank" test "$(grep -c '^rank [0-9]* of '"$n"': ' "$tmp/out")" == $((n - 1))
    check "--launch $n $sched: the report says processes" python3 -c "import json,sys; d=json.load(open('$tmp/l$n-$sched.json')); sys.exit(not (d['ranks']['processes'] and d['ranks']['ranks'] == $n and len(d['ranks']['per_rank']) == $n))"
    if have_numpy; then
      check "--launch $n $sched equals the unsliced result" same "$tmp/whole.npy" "$tmp/l$n-$sched.npy"
    else
      skip_check "numpy missing: --launch $n $sched result not compared"
    fi
  done
done
# the rendezvous directory of --launch is removed afterwards
check "no rendezvous directory left behind" test -z "$(ls -d "${TMPDIR:-/tmp}"/tnrt-rendezvous-* 2>/dev/null | head -1)"

# an output label sliced, 3 processes on 6 slices: every block gathered; 4 processes on 2: idle ranks
tnrt contract "ab,bc->ac" --shapes 6x8,8x5 --fill 1 --device cpu --slice a --launch 3 --out "$tmp/blocks.npy"
check "sliced output label: 6 blocks gathered, 0 summed" grep -q "(6 blocks gathered, 0 summed)" "$tmp/out"
if have_numpy; then
  check "sliced output label: every element is 8" python3 -c "import numpy as np,sys; a=np.load('$tmp/blocks.npy'); sys.exit(not (a.shape == (6, 5) and (a == 8).all()))"
fi
tnrt contract "ab,bc->ac" --shapes 2x8,8x5 --fill 1 --device cpu --slice a --launch 4 --out "$tmp/idle.npy"
check "idle ranks: exit 0" test "$rc" == 0
check "idle ranks: rank 3 says so" grep -q "^tnrt: note: rank 3 of 4: no slices (2 slices for 4 ranks): idle$" "$tmp/err"
check "idle ranks: its line says idle" grep -q "^rank 3 of 4: no slices (idle)" "$tmp/out"

# --distributed by hand, as mpirun or torchrun would start it: two ranks through a rendezvous dir
mkdir -p "$tmp/rdv"
RANK=1 WORLD_SIZE=2 "$tnrt" contract "$net" --device cpu --distributed --rendezvous "$tmp/rdv" >"$tmp/r1.out" 2>"$tmp/r1.err" &
r1=$!
RANK=0 WORLD_SIZE=2 "$tnrt" contract "$net" --device cpu --distributed --rendezvous "$tmp/rdv" --out "$tmp/d.npy" >"$tmp/r0.out" 2>"$tmp/r0.err"
rc0=$?
wait $r1
rc1=$?
check "RANK/WORLD_SIZE ranks exit 0 ($rc0, $rc1)" test "$rc0$rc1" == 00
check "RANK/WORLD_SIZE: rank 1 prints one line" test "$(wc -l <"$tmp/r1.out")" == 1
if have_numpy; then check "RANK/WORLD_SIZE equals the unsliced result" same "$tmp/whole.npy" "$tmp/d.npy"; fi

# a rank that fails: three --distributed processes by hand (--launch runs one command line for
# all), rank 1 with an impossible memory limit: every rank says "rank 1 of 3: ..." and exits non-zero
mkdir -p "$tmp/rdv2"
start=$(date +%s)
for r in 0 1 2; do
  extra=(); [[ $r == 1 ]] && extra=(--memory-limit 1)
  TNRT_RANK=$r TNRT_WORLD_SIZE=3 "$tnrt" contract "$net" --device cpu --distributed --rendezvous "$tmp/rdv2" --collective-timeout 60 \
    --out "$tmp/bad.npy" "${extra[@]}" >"$tmp/b$r.out" 2>"$tmp/b$r.err" &
  pids[$r]=$!
done
for r in 0 1 2; do wait ${pids[$r]}; codes[$r]=$?; done
took=$(( $(date +%s) - start ))
check "a failing rank: every rank exits non-zero (${codes[*]})" test "${codes[0]}" != 0 -a "${codes[1]}" != 0 -a "${codes[2]}" != 0
check "a failing rank: the others stop long before the 60 s timeout (${took} s)" test "$took" -lt 30
for r in 0 1 2; do
  check "a failing rank: rank $r says one line naming rank 1 ($(head -c 200 "$tmp/b$r.err"))" \
    bash -c "test \$(wc -l <'$tmp/b$r.err') == 1 && grep -q '^tnrt: out of memory: rank 1 of 3: ' '$tmp/b$r.err'"
done
check "a failing rank: no result written" test ! -e "$tmp/bad.npy"

# a rank that dies: rank 1 killed; rank 0 names it when the timeout ends its wait
mkdir -p "$tmp/rdv3"
start=$(date +%s)
TNRT_RANK=0 TNRT_WORLD_SIZE=2 "$tnrt" contract "$net" --device cpu --distributed --rendezvous "$tmp/rdv3" --collective-timeout 2 \
  --out "$tmp/dead.npy" >"$tmp/k0.out" 2>"$tmp/k0.err"
rc=$?
took=$(( $(date +%s) - start ))
check "a missing rank: rank 0 exits 7 (i/o) within the timeout (rc $rc, ${took} s)" test "$rc" == 7 -a "$took" -lt 10
check "a missing rank: one line naming rank 1 ($(head -c 200 "$tmp/k0.err"))" \
  bash -c "test \$(wc -l <'$tmp/k0.err') == 1 && grep -q '^tnrt: i/o error: rank 1 of 2: nothing from it within 2 s' '$tmp/k0.err'"
check "a missing rank: no result written" test ! -e "$tmp/dead.npy"

expect_error 2 contract "$net" --device cpu --launch 0
expect_error 2 contract "$net" --device cpu --launch 2 --ranks 2
expect_error 2 contract "$net" --device cpu --launch 2 --distributed
expect_error 2 contract "$net" --device cpu --launch 2 --slice-range 0:2
expect_error 2 contract "$net" --device cpu --launch 2 --collective-timeout 0
expect_error 2 contract "$net" --device cpu --rendezvous "$tmp"
env -u TNRT_RANK -u TNRT_WORLD_SIZE -u RANK -u WORLD_SIZE -u PMI_RANK -u PMI_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE \
  "$tnrt" contract "$net" --device cpu --distributed >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--distributed without a rank in the environment: exit 2 ($(head -c 200 "$tmp/err"))" test "$rc" == 2
env -u TNRT_RENDEZVOUS TNRT_RANK=0 TNRT_WORLD_SIZE=2 "$tnrt" contract "$net" --device cpu --distributed >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--distributed of 2 ranks without a rendezvous: exit 2 ($(head -c 200 "$tmp/err"))" test "$rc" == 2
finish
