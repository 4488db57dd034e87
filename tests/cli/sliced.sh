#!/usr/bin/env bash
# Sliced contractions through the CLI on the CPU engine (the GPU runs them in tests/gpu and in the
# H200 session): the file's "slices", --slice, --memory-limit, --slice-range and `tnrt inspect`
# agree with the unsliced result; bad slicing options are one-line errors with their exit codes.
source "$(dirname "$0")/common.bash"

tiny="$root/bench/suites/sliced/tiny-regular3-n90.json"
fill=0.35355339059327373  # 2^-1.5: the exact result is 1

value() { awk '/^result: /{print $2}' "$tmp/out"; }

expect_rc 0 contract "$tiny" --device cpu --fill "$fill"
check "the file's slices give the exact result 1" near "$(value)" 1 1e-5
check "the file's 8 slices are reported" grep -q "^slicing: 8 slices" "$tmp/out"

expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --slice A
check "--slice A: 2 slices" grep -q "^slicing: 2 slices" "$tmp/out"
check "--slice A gives 1" near "$(value)" 1 1e-5

expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --memory-limit 30KB --json "$tmp/r.json"
check "--memory-limit 30KB gives 1" near "$(value)" 1 1e-5
check "the prediction is within the limit" python3 -c "
import json, sys
s = json.load(open('$tmp/r.json'))['slicing']
sys.exit(0 if s['predicted_bytes'] <= s['limit_bytes'] == 30000 and s['slices'] > 8 else 1)"

expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --slice-range 0:4 --quiet
lo=$(cat "$tmp/out")
expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --slice-range 4: --quiet
hi=$(cat "$tmp/out")
check "two slice ranges add up to 1 ($lo + $hi)" near "$(awk -v a="$lo" -v b="$hi" 'BEGIN{print a+b}')" 1 1e-5

expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --slice auto --memory-limit 60KB
check "--slice auto finds its own labels under 60KB, not the file's" test -z "$(grep '^slicing: 8 slices over hAG' "$tmp/out")"
check "--slice auto gives 1" near "$(value)" 1 1e-5

expect_rc 0 inspect "$tiny" --memory-limit 30KB
check "inspect prints the slicing" grep -q "^slicing: [0-9]* slices over" "$tmp/out"
check "inspect prints the predicted peak" grep -q "^predicted peak: " "$tmp/out"
check "inspect prints the sliced floor" grep -q "^sliced floor: " "$tmp/out"

expect_error 8 contract "$tiny" --device cpu --memory-limit 1KB
expect_error 8 contract "$tiny" --device cpu --slice A --memory-limit 20KB
expect_error 2 contract "$tiny" --device cpu --memory-limit lots
expect_error 2 contract "$tiny" --device cpu --memory-limit 50%
expect_error 2 contract "$tiny" --device cpu --memory-limit 0
expect_error 2 contract "$tiny" --device cpu --slice-range 9:1
expect_error 2 contract "$tiny" --device cpu --slice-range 3
expect_error 4 contract "$tiny" --device cpu --slice nosuchlabel
expect_error 4 contract "$tiny" --device cpu --slice A,A
expect_error 2 inspect "$tiny" --memory-limit 80%
expect_error 2 contract "$tiny" --device cpu --no-slice --slice A

expect_rc 0 contract "$tiny" --device cpu --fill "$fill" --no-slice
check "--no-slice: an unsliced run" test -z "$(grep '^slicing:' "$tmp/out")"
check "--no-slice gives 1" near "$(value)" 1 1e-5

finish
