#!/usr/bin/env bash
# The benchmark harness's profiling switch (bench/harness.py): a variant's "profile": true, the
# suite's "profile": true or --profile add `--profile` to that variant's tnrt command line; its rows
# are marked profiled, README.md gets the profile table and report.py the gap histogram from
# counters.profile.gaps_us. No GPU needed: a stand-in for tnrt writes the report a profiled run
# would (the real one is tested in tests/cli/profile.sh and tests/gpu/test_cuda_profiler.cpp).
source "$(dirname "$0")/common.bash"

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  skip_check "the harness needs Python 3.11+"
  finish
  exit $?
fi

cat >"$tmp/fake-tnrt" <<'PY'
#!/usr/bin/env python3
import json, sys
a = sys.argv[1:]
prof = "--profile" in a
rep = {"tool": "tnrt", "status": "ok", "times_ms": [1.0, 1.1, 1.2], "median_ms": 1.1, "min_ms": 1.0, "max_ms": 1.2,
       "result": {"scalar": 0.25, "shape": []}, "verification": {"status": "not_run"}, "profiled": prof,
       "counters": {}}
if prof:
    inside = dict.fromkeys(["cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize",
                            "cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize"], 0.0)
    rep["counters"]["profile"] = {
        "runs": 3, "kernels": 30, "busy_ms": 2.4, "span_ms": 3.0, "busy_fraction": 0.8, "gap_count": 27,
        "gap_median_us": 2.0, "gap_p90_us": 5.0, "gap_max_us": 9.0, "gaps_us": [0.0, 1.0, 2.0] * 9,
        "per_call": {"kernels": 10.0, "busy_ms": 0.8, "span_ms": 1.0, "syncs_inside_calls": inside}}
json.dump(rep, open(a[a.index("--json") + 1], "w"))
print("0.25")
PY
chmod +x "$tmp/fake-tnrt"

# One variant profiled by its own key, one not.
python3 - "$root" "$tmp/suite.json" <<'PY'
import json, sys
root, out = sys.argv[1], sys.argv[2]
suite = json.load(open(f"{root}/bench/suites/smoke.json"))
suite["name"] = "profile-switch"
suite["problems"] = [p for p in suite["problems"] if p["name"] == "tiny-tree"]
suite["problems"][0]["file"] = f"{root}/" + suite["problems"][0]["file"]
suite["variants"] = [{"name": "eager", "mode": "eager", "options": [], "profile": True},
                     {"name": "compiled", "mode": "compiled", "options": []}]
suite["peers"] = []
json.dump(suite, open(out, "w"))
PY
run_harness() {  # run_harness OUT [ARGS...]
  local out=$1; shift
  python3 "$root/bench/harness.py" "$tmp/suite.json" --tnrt "$tmp/fake-tnrt" --device cpu --no-bandwidth \
    --reps 1 --out "$out" "$@" >"$tmp/harness.log" 2>&1
}

run_harness "$tmp/a"
check "harness exits 0 ($(tail -3 "$tmp/harness.log" | tr '\n' ' '))" test $? == 0
python3 - "$tmp/a/results.json" >"$tmp/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["variant"]: r for r in d["rows"]}
cmds = {r["variant"]: r["command"] for r in d["records"]}
assert "--profile" in cmds["eager"].split() and "--profile" not in cmds["compiled"].split(), cmds
assert rows["eager"]["profiled"] is True and rows["compiled"]["profiled"] is False, rows
assert rows["eager"]["kernels_per_call"] == 10 and rows["eager"]["gap_median_us"] == 2.0, rows["eager"]
assert rows["compiled"]["kernels_per_call"] is None
print("per-variant ok")
PY
check "a variant's \"profile\": true ($(tail -1 "$tmp/py"))" grep -q "per-variant ok" "$tmp/py"
check "README marks the profiled variant" grep -q '^| eager (profiled) |' "$tmp/a/README.md"
check "README leaves the other unmarked" grep -q '^| compiled |' "$tmp/a/README.md"
check "README has the profile table" grep -q '^Profiled with CUPTI' "$tmp/a/README.md"
check "CSV has the profiled column" grep -q ',profiled,kernels_per_call,' "$tmp/a/results.csv"
if python3 -c "import matplotlib" >/dev/null 2>&1; then
  check "report.py drew the gap histogram" test -s "$tmp/a/gaps-tiny-tree.png"
else
  skip_check "no matplotlib for the gap histogram"
fi

# --profile profiles every tnrt variant; the dry run shows the command lines.
python3 "$root/bench/harness.py" "$tmp/suite.json" --tnrt "$tmp/fake-tnrt" --device cpu --reps 1 --dry-run --profile >"$tmp/dry" 2>&1
check "--profile adds --profile to every tnrt job" test "$(grep -c -- ' --profile ' "$tmp/dry")" == 2
python3 "$root/bench/harness.py" "$tmp/suite.json" --tnrt "$tmp/fake-tnrt" --device cpu --reps 1 --dry-run >"$tmp/dry" 2>&1
check "without it only the variant that asks" test "$(grep -c -- ' --profile ' "$tmp/dry")" == 1
finish
