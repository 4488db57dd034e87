#!/usr/bin/env bash
# `tnrt inspect` on the reference network: the TensorNetworkBenchmarks figures (tc 33.18, sc 28.00,
# rwc 32.09), bytes that scale with the dtype, and the bandwidth floor.
source "$(dirname "$0")/common.bash"

field() { awk -v k="$1:" '$1 == k { print $2; exit }' "$tmp/out"; }

tnrt inspect "$reference"
check "inspect exits 0" test "$rc" == 0
check "inputs 550 ($(field inputs))" test "$(field inputs)" == 550
check "steps 549 ($(field steps))" test "$(field steps)" == 549
check "tc 33.18 ($(field tc))" test "$(field tc)" == 33.18
check "sc 28.00 ($(field sc))" test "$(field sc)" == 28.00
check "rwc 32.09 ($(field rwc))" test "$(field rwc)" == 32.09
check "dtype f32" test "$(field dtype)" == f32
bytes32=$(awk '$1 == "bytes" { print $3; exit }' "$tmp/out")
floor32=$(awk '$1 == "floor:" { print $2; exit }' "$tmp/out")
# rwc 32.09 -> 2^32.09 elements * 4 bytes
check "bytes read+written ~ 2^32.09 * 4 ($bytes32)" awk -v b="$bytes32" 'BEGIN { e = 2^32.09 * 4; exit !(b > 0.99 * e && b < 1.01 * e) }'
check "floor = bytes / 4250 GB/s ($floor32 ms)" awk -v b="$bytes32" -v f="$floor32" 'BEGIN { e = b / 4.25e12 * 1e3; exit !(f > 0.999 * e - 0.001 && f < 1.001 * e + 0.001) }'
check "the default floor names its divisor the H200's" grep -q "^floor: .* at 4250 GB/s, the H200's copy bandwidth: --bandwidth sets another$" "$tmp/out"

tnrt inspect "$reference" --dtype f64 --bandwidth 1000
bytes64=$(awk '$1 == "bytes" { print $3; exit }' "$tmp/out")
floor64=$(awk '$1 == "floor:" { print $2; exit }' "$tmp/out")
check "f64 doubles the bytes ($bytes64)" awk -v a="$bytes32" -v b="$bytes64" 'BEGIN { exit !(b > 1.999 * a && b < 2.001 * a) }'
check "a floor of a given bandwidth has no note" grep -q "^floor: .* at 1000 GB/s$" "$tmp/out"
check "--bandwidth 1000 sets the floor ($floor64 ms)" awk -v b="$bytes64" -v f="$floor64" 'BEGIN { e = b / 1e12 * 1e3; exit !(f > 0.999 * e - 0.001 && f < 1.001 * e + 0.001) }'
check "tc does not depend on the dtype" test "$(field tc)" == 33.18

# bond dimension 4 on the same tree: every label's extent doubles, so sc grows by its rank (28).
tnrt inspect "$reference" --bond-dim 4
check "--bond-dim 4: sc 56.00 ($(field sc))" test "$(field sc)" == 56.00

# expression: ab,bc->ac with 2x3,3x4: 24 multiply-adds, largest tensor 12 elements.
tnrt inspect "ab,bc->ac" --shapes 2x3,3x4
check "expression: steps 1" test "$(field steps)" == 1
check "expression: tc log2(24) = 4.58 ($(field tc))" test "$(field tc)" == 4.58
check "expression: sc log2(12) = 3.58 ($(field sc))" test "$(field sc)" == 3.58
finish
