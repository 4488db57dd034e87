#!/usr/bin/env bash
# Paths in and out of the CLI (issue 16): `tnrt inspect --write-path` writes a tree's linear path and
# its costs, `--path-file` reads it back (or a bare [[0, 1], ...] list, as json.dump writes cotengra's
# get_path()) with the same costs; the cost model's line; `--optimizer auto` is the model search
# and is deterministic; bad path files and conflicting options are one-line typed errors.
source "$(dirname "$0")/common.bash"

field() { awk -v k="$1:" '$1 == k { print $2; exit }' "$tmp/out"; }

tnrt inspect "$reference" --write-path "$tmp/ref-path.json"
check "write-path exits 0" test "$rc" == 0
model=$(field model)
check "model line: the tree's predicted ms ($model)" near "$model" 6.877 0.01
check "roofline line: the tree's roofline ms ($(field roofline))" near "$(field roofline)" 5.405 0.01
check "the written path has 549 steps" python3 -c "import json,sys; d=json.load(open('$tmp/ref-path.json')); sys.exit(not (len(d['path']) == 549 and abs(d['log2_flops'] - 33.18) < 0.01))"
tnrt inspect "$reference" --path-file "$tmp/ref-path.json"
check "path-file: tc 33.18 again ($(field tc))" test "$(field tc)" == 33.18
check "path-file: sc 28.00 again ($(field sc))" test "$(field sc)" == 28.00
check "path-file: the same model time ($(field model))" test "$(field model)" == "$model"

# a bare list (cotengra's get_path() through json.dump), on an expression
printf '[[1, 2], [0, 1]]\n' >"$tmp/bare.json"
tnrt inspect "ab,bc,cd->ad" --shapes 10x1000,1000x1000,1000x1000 --path-file "$tmp/bare.json"
check "bare list: exits 0" test "$rc" == 0
check "bare list: (bc)(cd) first: X / log(2) }')"
tnrt inspect "ab,bc,cd->ad" --shapes 10x1000,1000x1000,1000x1000 --optimizer auto
check "auto: finds ((ab)(bc))(cd), 10^7 + 10^7 multiply-adds ($(field tc))" test "$(field tc)" == "$(awk 'BEGIN { printf "%.2f", log(2e7) / log(2) }')"

tnrt inspect "$reference" --optimizer auto --write-path "$tmp/auto1.json"
check "auto on the reference network exits 0" test "$rc" == 0
# auto is deterministic while no time bound binds: twice the same path. On a 50-tensor PEPS (0.6 s
# of search under the sanitizers, 5x under the greedy trials' 3 s bound): the reference network reached its 10 s cap there
# in CI, and a bound that binds may stop at another trial.
net="$root/bench/suites/families/peps-norm-5x5-D4.json"
tnrt inspect "$net" --optimizer auto --write-path "$tmp/auto1.json"
tnrt inspect "$net" --optimizer auto --write-path "$tmp/auto2.json"
check "auto: the same path twice" python3 -c "import json,sys; sys.exit(json.load(open('$tmp/auto1.json'))['path'] != json.load(open('$tmp/auto2.json'))['path'])"
# contract takes the written path too (CPU, the expression: a value checked by hand)
tnrt contract "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/bare2.json"
check "contract: a missing path file is an io error (exit 7, got $rc)" test "$rc" == 7
printf '{"path": [[0, 1]]}\n' >"$tmp/one.json"
tnrt contract "ab,bc->ac" --shapes 2x3,3x4 --fill 1 --device cpu --path-file "$tmp/one.json"
check "contract --path-file: exit 0 ($(head -c 200 "$tmp/err"))" test "$rc" == 0

# errors: one line each, typed, nothing written
printf '[[0, 9]]\n' >"$tmp/bad-index.json"
expect_error 5 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/bad-index.json"
printf '{"nopath": 1}\n' >"$tmp/no-path.json"
expect_error 3 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/no-path.json"
printf '[[0, 1]' >"$tmp/truncated.json"
expect_error 3 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/truncated.json"
printf '"abc"\n' >"$tmp/string.json"
expect_error 3 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/string.json"
expect_error 7 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/none.json"
expect_error 2 inspect "ab,bc->ac" --shapes 2x3,3x4 --path-file "$tmp/one.json" --optimizer greedy
expect_error 7 inspect "ab,bc->ac" --shapes 2x3,3x4 --write-path "$tmp/no-such-dir/p.json"
check "no file left behind in a missing directory" test ! -e "$tmp/no-such-dir"
finish
