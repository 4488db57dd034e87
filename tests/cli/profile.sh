#!/usr/bin/env bash
# `tnrt contract --profile` (CUPTI, loaded at run time): where it cannot run it fails before any
# work with one line "tnrt: <kind>: <message>" and a non-zero exit code, never a crash; where a GPU
# and CUPTI are usable, the profile block and counters.profile are there.
source "$(dirname "$0")/common.bash"
expr=(contract "ab,bc->ac" --shapes 2x3,3x4)

check "--help lists --profile" bash -c "'$tnrt' contract --help | grep -q -- '--profile'"

# The CPU engine has no kernels to profile (10 not supported), whatever CUPTI and the GPU say.
expect_error 10 "${expr[@]}" --device cpu --profile

# CUPTI missing: one line naming what was tried, exit 9 (device), before anything is loaded: the
# input file does not exist, yet the error is about CUPTI (an i/o error would be exit 7).
export TNRT_CUPTI_PATH=$tmp/no-such-dir/libcupti.so.13
expect_error 9 contract "$tmp/no-such-input.json" --device cuda --profile --json "$tmp/never.json" --out "$tmp/never.npy"
if "$tnrt" --version 2>/dev/null | grep -q "built without the CUDA backend"; then
  check "the error says the CUDA backend is missing" grep -q "needs the CUDA backend" "$tmp/err"
else
  check "the CUPTI error names the file tried ($(head -c 200 "$tmp/err"))" grep -q "no-such-dir/libcupti.so.13" "$tmp/err"
  check "the CUPTI error says how to point at CUPTI" grep -q "TNRT_CUPTI_DIR" "$tmp/err"
fi
check "no --json report after the CUPTI error" test ! -e "$tmp/never.json"
check "no --out file after the CUPTI error" test ! -e "$tmp/never.npy"
unset TNRT_CUPTI_PATH

if ! "$tnrt" --version 2>/dev/null | grep -q "cuda (usable here)"; then
  # No GPU here (or no CUDA backend): --profile fails with one line and exit 9, no crash, no files,
  # with --device cuda and with --device auto (which would otherwise fall back to the CPU).
  for dev in cuda auto; do
    expect_error 9 "${expr[@]}" --device "$dev" --profile --json "$tmp/never.json" --out "$tmp/never.npy"
    check "exit code $rc is not a signal (--device $dev)" test "$rc" -lt 128
    check "no --json report or --out file (--device $dev)" test ! -e "$tmp/never.json" -a ! -e "$tmp/never.npy"
  done
  expect_error 9 contract "$reference" --profile --mode compiled
  finish
  exit $?
fi

if ! "$tnrt" --version 2>/dev/null | grep -q "^profiler (--profile): .*CUPTI"; then
  skip_check "a GPU but no CUPTI here ($("$tnrt" --version | grep '^profiler'))"
  finish
  exit $?
fi

# A GPU and CUPTI: both modes, a tree with many steps and fusion off (one library call per step).
for mode in eager compiled; do
  tnrt contract "$reference" --device cuda --mode "$mode" --no-fuse --warmup 1 --repeat 3 --profile --json "$tmp/p-$mode.json"
  check "$mode --profile exits 0 (stderr: $(head -c 300 "$tmp/err"))" test "$rc" == 0
  check "$mode: a profile block" grep -q '^profile: 3 timed runs through CUPTI' "$tmp/out"
  check "$mode: the time line says profiled" grep -q '^time: .*(profiled' "$tmp/out"
  check "$mode: gaps line" grep -q '^  gaps between kernels: median .* us, p90 .* us, max .* us' "$tmp/out"
  python3 - "$tmp/p-$mode.json" >"$tmp/py" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["profiled"] is True
p = r["counters"]["profile"]
assert p["runs"] == 3 and len(p["kernels_per_run"]) == 3, p
assert p["kernels"] >= 3 * 36 and p["kernels"] == sum(p["kernels_per_run"]), p["kernels"]
assert len(set(p["kernels_per_run"])) == 1, p["kernels_per_run"]  # the same program three times
assert 0 < p["busy_ms"] <= p["span_ms"] + 1e-9, (p["busy_ms"], p["span_ms"])
assert len(p["gaps_us"]) == p["gap_count"] == p["kernels"] - 3, (len(p["gaps_us"]), p["gap_count"])
assert p["gap_median_us"] <= p["gap_p90_us"] <= p["gap_max_us"]
names = ["cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize",
         "cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize"]
for key in ("syncs", "syncs_by_runner", "syncs_inside_calls"):
    assert sorted(p[key]) == sorted(names), p[key]
# the runner waits once per timed run; CUPTI sees it as runtime, driver or both
assert p["syncs_by_runner"]["cudaStreamSynchronize"] in (0, 3), p["syncs_by_runner"]
assert max(p["syncs_by_runner"]["cudaStreamSynchronize"], p["syncs_by_runner"]["cuStreamSynchronize"]) == 3, p
assert p["records_dropped"] == 0 and p["kernels_untimed"] == 0, p
print("profile ok", p["kernels"], p["busy_ms"], p["span_ms"], p["gap_median_us"], p["syncs_inside_calls"])
PY
  check "$mode: counters.profile ($(tail -1 "$tmp/py"))" grep -q "profile ok" "$tmp/py"
done
finish
