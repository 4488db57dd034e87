#!/usr/bin/env bash
# The reference network (TensorNetworkBenchmarks, 550 tensors, every element 0.5^0.4: exact result
# 1) contracted through the CLI, in f32 (with the --json report) and f64 on the CPU engine.
source "$(dirname "$0")/common.bash"

# The default run (f32, --device auto: the CPU where there is no GPU): result, time, floor, report.
tnrt contract "$reference" --json "$tmp/report.json"
check "f32 exits 0 (stderr: $(head -c 200 "$tmp/err"))" test "$rc" == 0
value=$(awk '$1 == "result:" { print $2 }' "$tmp/out")
check "f32 result $value within 1e-4 of 1" near "$value" 1 1e-4
check "prints the time line" grep -q '^time: median .* ms' "$tmp/out"
check "prints the floor line" grep -q '^floor: .* ms' "$tmp/out"
check "the floor line says its 4250 GB/s are the H200's" grep -q "read+written at 4250 GB/s, the H200's copy bandwidth: --bandwidth sets another)$" "$tmp/out"
check "--json report written" test -s "$tmp/report.json"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/report.json" >"$tmp/py" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["problem"]["steps"] == 549, r["problem"]
assert r["problem"]["inputs"] == 550, r["problem"]
assert r["dtype"] == "f32", r["dtype"]
assert r["device"] in ("cpu", "cuda"), r["device"]
assert len(r["times_ms"]) == r["repeats"] >= 1, r["times_ms"]
assert r["min_ms"] <= r["median_ms"] <= r["max_ms"]
assert abs(r["result"]["scalar"] - 1) <= 1e-4, r["result"]
assert r["result"]["shape"] == []
assert r["verification"]["status"] in ("not_run", "passed"), r["verification"]
assert r["floor_ms"] > 0 and r["versions"]["tnrt"]
assert r["bandwidth_gbps"] == 4250 and r["bandwidth_assumed"] is True, r["bandwidth_assumed"]
print("report ok")
PY
  check "--json report fields ($(tail -1 "$tmp/py"))" grep -q "report ok" "$tmp/py"
fi

tnrt contract "$reference" --device cpu --dtype f64 --quiet
check "f64 exits 0 (stderr: $(head -c 200 "$tmp/err"))" test "$rc" == 0
value=$(out)
check "f64 result $value within 1e-10 of 1" near "$value" 1 1e-10
check "f64 result printed with 17 significant digits ($value)" test "${#value}" -ge 17
finish
