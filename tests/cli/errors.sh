#!/usr/bin/env bash
# Command-line errors: each is one line "tnrt: <kind>: <message>" on stderr with its exit code
# (apps/tnrt/exit_codes.hpp), and no output file is left behind.
source "$(dirname "$0")/common.bash"

# usage (2)
expect_error 2
expect_error 2 frobnicate
expect_error 2 contract
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --no-such-option
expect_error 2 contract "ab,bc->ac" --shapes
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --device tpu
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --mode fast
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --repeat 0
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --repeat ten
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --fill abc
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --workspace-cap 12Q
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --random 1 --inputs a.npy,b.npy
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --quiet=yes
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --gemm sometimes
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --layout diagonal
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --algo-timing maybe
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --step-timing host
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --kernel-ranks 65
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --gemm-algos 65
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --gemm-algo-min-ms -1
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --gemm-algo-min-ms fast
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --precision half
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --branches sometimes
expect_error 2 contract "ab,bc->ac" --shapes 2x3,3x4 --static-inputs
expect_error 2 contract "$reference" --path opt_size --optimizer greedy
expect_error 2 inspect
expect_error 2 inspect "$reference" --bond-dim 0
expect_error 2 inspect "$reference" --label-size 100
expect_error 2 bench

# parse (3), shape (4), dtype (6), i/o (7)
printf '{"tree": [1, 2' >"$tmp/broken.json"
expect_error 3 contract "$tmp/broken.json"
expect_error 4 contract "ab,bc->ac" --shapes 2x3,4x4
expect_error 4 contract "ab,bc->ac" --shapes 2x3
expect_error 6 contract "ab,bc->ac" --shapes 2x3,3x4 --dtype f16
expect_error 7 contract "$tmp/no-such-file.json"
expect_error 7 inspect "$tmp"

# device (9): no GPU on a CI machine, or a build without the CUDA backend.
if "$tnrt" --version 2>/dev/null | grep -q "cuda (usable here)"; then
  skip_check "--device cuda is usable here, so it cannot fail"
else
  expect_error 9 contract "ab,bc->ac" --shapes 2x3,3x4 --device cuda --out "$tmp/never.npy"
  check "--out not written after a device error" test ! -e "$tmp/never.npy"
  expect_error 9 contract "$reference" --device cuda --verify
fi
# not supported (10): the CPU engine has no compiled mode.
expect_error 10 contract "ab,bc->ac" --shapes 2x3,3x4 --device cpu --mode compiled
expect_error 10 contract "ab,bc->ac" --shapes 2x3,3x4 --device cpu --mode compiled --static-inputs

# --help and --version succeed on stdout.
for args in "--help" "contract --help" "inspect --help" "bench --help" "--version"; do
  # shellcheck disable=SC2086
  tnrt $args
  check "tnrt $args exits 0 with text on stdout" test "$rc" == 0 -a -s "$tmp/out"
done
check "no temporary files left beside outputs" test -z "$(find "$tmp" -name '*.tmp.*')"
finish
