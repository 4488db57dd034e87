"""The benchmark's floors and roofline (bench/roofline.py, bench/gemm_peak.py) and their harness
integration (bench/harness.py --peaks/--skip-peak/--roofline). No GPU: a stand-in for tnrt writes the
reports and step profiles a GPU run would, and the smoke suite runs on the CPU engine."""
import csv
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, os.path.join(BENCH, "peers"))
sys.path.insert(0, BENCH)
import common  # noqa: E402
import gemm_peak  # noqa: E402
import roofline  # noqa: E402

PY = sys.executable


# --------------------------------------------------------------------------------------------------
# costs by hand
# --------------------------------------------------------------------------------------------------
def test_matmul_flops_and_bytes():
    p = common.load_problem(None, "ab,bc->ac", "3x4,4x5")
    assert len(p.steps) == 1
    (c,) = roofline.step_costs(p, "f32")
    assert c["flops"] == 2 * 3 * 4 * 5 == 120
    assert c["bytes"] == (3 * 4 + 4 * 5 + 3 * 5) * 4 == 188
    (z,) = roofline.step_costs(p, "c64")
    assert z["flops"] == 8 * 3 * 4 * 5
    assert z["bytes"] == 47 * 8
    assert roofline.step_costs(p, "f64")[0]["flops"] == 120
    assert roofline.step_costs(p, "c128")[0]["bytes"] == 47 * 16
    assert roofline.total_flops(p, "c128") == 480


def test_unary_step_counts_elements_read():
    p = common.load_problem(None, "ab->a", "3x4")
    assert [s.rhs for s in p.steps] == [-1]
    (c,) = roofline.step_costs(p, "f32")
    assert c["kind"] == "unary"
    assert c["flops"] == 12  # one add per element read
    assert c["bytes"] == (12 + 3) * 4
    assert roofline.step_costs(p, "c64")[0]["flops"] == 24


def four_steps() -> common.Problem:
    """T0[a,b] T1[b,a] -> s0 [] ; T2[c,d] T3[d,e] -> s1 [c,e] ; s1 T4[e,c] -> s2 [] ; s0 s2 -> s3 [].
    a = b = 2, c = d = e = 8. f32: s0 8 flops 36 B, s1 1024 flops 768 B, s2 128 flops 516 B,
    s3 2 flops 12 B."""
    a, b, c, d, e = range(5)
    p = common.Problem(inputs=[[a, b], [b, a], [c, d], [d, e], [e, c]], output=[], extents=[2, 2, 8, 8, 8],
                       steps=[common.Step(0, 1, []), common.Step(2, 3, [c, e]), common.Step(6, 4, []),
                              common.Step(5, 7, [])])
    p.validate()
    return p


def test_costs_of_a_small_network_by_hand():
    costs = roofline.step_costs(four_steps(), "f32")
    assert [x["flops"] for x in costs] == [8, 1024, 128, 2]
    assert [x["bytes"] for x in costs] == [36, 768, 516, 12]
    assert [x["labels"] for x in costs] == [2, 3, 2, 0]


def test_network_floor_picks_the_larger():
    p = four_steps()  # 1332 bytes, 1162 flops
    n = roofline.network_floors(p, "f32", 1e9, 1e9)
    assert n["bytes"] == 1332 and n["flops"] == 1162
    assert n["byte_floor_ms"] == pytest.approx(1.332e-3)
    assert n["flop_floor_ms"] == pytest.approx(1.162e-3)
    assert n["floor_ms"] == pytest.approx(1.332e-3) and n["bound"] == "memory"
    n = roofline.network_floors(p, "f32", 1e9, 0.5e9)
    assert n["flop_floor_ms"] == pytest.approx(2.324e-3)
    assert n["floor_ms"] == pytest.approx(2.324e-3) and n["bound"] == "compute"
    # every step at its own bound: 36 + 1024*2 + 516 + 12 (ns at these rates), never below the floor
    assert n["sum_of_step_floors_ms"] == pytest.approx((36 + 2048 + 516 + 12) * 1e-6)
    # one rate unknown: the other is the floor; none: no floor
    assert roofline.network_floors(p, "f32", 1e9, None)["floor_ms"] == pytest.approx(1.332e-3)
    only = roofline.network_floors(p, "f32", None, 1e9)
    assert only["floor_ms"] == pytest.approx(1.162e-3) and only["bound"] == "compute"
    assert roofline.network_floors(p, "f32", None, None)["floor_ms"] is None


def test_step_floors_and_bounds():
    st = roofline.step_floors(four_steps(), "f32", 1e9, 1e9)
    assert [x["bound"] for x in st] == ["memory", "compute", "memory", "memory"]
    assert [x["floor_ms"] for x in st] == pytest.approx([36e-6, 1024e-6, 516e-6, 12e-6])


def test_peak_for_uses_tf32_off_for_f32():
    peaks = {"f32": 50.0, "tf32": 400.0, "c64": 48.0}
    assert roofline.peak_for(peaks, "f32") == pytest.approx(50e12)
    assert roofline.peak_for(peaks, "complex64") == pytest.approx(48e12)
    assert roofline.peak_for(peaks, "f64") is None
    assert roofline.peak_for(None, "f32") is None


# --------------------------------------------------------------------------------------------------
# where the time goes, from a step profile
# --------------------------------------------------------------------------------------------------
HEADER = ["op", "step", "lhs_rank", "rhs_rank", "out_rank", "bytes", "ms", "gbps", "kernel"]


def write_profile(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for r in rows:
            w.writerow(r)


def test_summary_splits_memory_compute_overhead(tmp_path):
    path = tmp_path / "steps.csv"
    # the fused launch runs steps 0 and 3 (no row names them); steps 1 and 2 are library launches
    write_profile(path, [[0, "fused", 0, 0, 0, 0, "0.001000", 0, "fused"],
                         [1, 1, 2, 2, 2, 768, "0.004000", 0.2, "library"],
                         [2, 2, 2, 2, 0, 516, "0.002000", 0.3, "tiled"]])
    rows = roofline.read_step_profile(str(path))
    assert [r["step"] for r in rows] == ["fused", 1, 2]
    s = roofline.summarize(four_steps(), "f32", rows, 1e9, 1e9, total_ms=0.010)
    assert s["ops"] == 3 and s["fused_steps"] == 2 and s["steps_in_profile"] == 4
    assert s["kernel_ms"] == pytest.approx(0.007)
    m, c = s["memory_bound"], s["compute_bound"]
    assert (m["ops"], m["steps"]) == (2, 3)  # the fused launch (48 B, 10 flops) and step 2
    assert m["ms"] == pytest.approx(0.003)
    assert m["floor_ms"] == pytest.approx((48 + 516) * 1e-6)
    assert (c["ops"], c["steps"]) == (1, 1)
    assert c["ms"] == pytest.approx(0.004)
    assert c["floor_ms"] == pytest.approx(1024e-6)
    assert s["overhead_ms"] == pytest.approx(0.003)
    assert [o["op"] for o in s["top"]] == [1, 2, 0]  # by time over floor
    assert s["top"][0]["bound"] == "compute"
    assert s["top"][0]["x_floor"] == pytest.approx(0.004 / 1024e-6)
    assert s["warnings"] == []
    # no end-to-end time: no overhead; the compact form carries the table's figures
    s2 = roofline.summarize(four_steps(), "f32", rows, 1e9, 1e9)
    assert s2["overhead_ms"] is None
    cp = roofline.compact(s)
    assert cp["memory_ms"] == pytest.approx(0.003) and cp["compute_ms"] == pytest.approx(0.004)
    assert cp["overhead_ms"] == pytest.approx(0.003) and len(cp["top"]) == 3


def test_summary_warns_when_the_steps_differ(tmp_path):
    path = tmp_path / "steps.csv"
    write_profile(path, [[0, 0, 2, 2, 0, 999, "0.001", 0, "library"],
                         [1, 1, 2, 2, 2, 768, "0.001", 0, "library"]])
    s = roofline.summarize(four_steps(), "f32", roofline.read_step_profile(str(path)), 1e9, 1e9, 0.01)
    text = " ".join(s["warnings"])
    assert "bytes differ" in text and "no fused launch" in text


def test_not_a_step_profile(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a step profile"):
        roofline.read_step_profile(str(path))


def test_roofline_cli(tmp_path):
    out = tmp_path / "r.json"
    steps = tmp_path / "s.csv"
    write_profile(steps, [[0, 0, 2, 2, 2, 376, "0.5", 0, "library"]])
    r = subprocess.run([PY, os.path.join(BENCH, "roofline.py"), "--expr", "ab,bc->ac", "--shapes", "3x4,4x5",
                        "--dtype", "c64", "--bandwidth-gbs", "1", "--peak-tflops", "1e-3", "--steps", str(steps),
                        "--total-ms", "2", "--json", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "where the time goes" in r.stdout and "compute-bound" in r.stdout
    d = json.loads(out.read_text())
    n = d["network"]
    assert n["flops"] == 480 and n["bytes"] == 376
    assert n["byte_floor_ms"] == pytest.approx(376 / 1e9 * 1e3)
    assert n["flop_floor_ms"] == pytest.approx(480 / 1e9 * 1e3)
    assert n["bound"] == "compute"
    assert d["overhead_ms"] == pytest.approx(1.5)
    assert d["compute_bound"]["ms"] == pytest.approx(0.5)


# --------------------------------------------------------------------------------------------------
# gemm_peak.py
# --------------------------------------------------------------------------------------------------
def test_gemm_flop_convention():
    assert gemm_peak.gemm_flops(8192, "f32") == 2 * 8192 ** 3
    assert gemm_peak.gemm_flops(8192, "tf32") == 2 * 8192 ** 3
    assert gemm_peak.gemm_flops(10, "c64") == 8000
    assert gemm_peak.gemm_flops(10, "c128") == 8000


def test_gemm_peak_on_cpu(tmp_path):
    out = tmp_path / "peak.json"
    r = subprocess.run([PY, os.path.join(BENCH, "gemm_peak.py"), "--device", "cpu", "--size", "32",
                        "--repeats", "2", "--warmups", "1", "--json", str(out)], capture_output=True, text=True,
                       timeout=120)
    d = json.loads(out.read_text())
    try:
        import torch  # noqa: F401
    except ImportError:
        assert r.returncode == gemm_peak.EXIT_NOT_SUPPORTED
        assert d["status"] == "not_supported" and d["peaks_tflops"] == {}
        assert "torch" in d["error"]
        return
    assert r.returncode == 0, r.stderr
    assert d["status"] == "ok"
    for k in ("f32", "f64", "c64", "c128", "tf32"):
        assert d["peaks_tflops"][k] > 0
        assert d["entries"][k]["flops"] == gemm_peak.gemm_flops(32, k)


def test_gemm_peak_rejects_an_unknown_dtype():
    r = subprocess.run([PY, os.path.join(BENCH, "gemm_peak.py"), "--device", "cpu", "--dtypes", "f16"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--dtypes" in r.stderr


# --------------------------------------------------------------------------------------------------
# the harness
# --------------------------------------------------------------------------------------------------
FAKE_TNRT = r'''#!/usr/bin/env python3
import json, sys
a = sys.argv[1:]
rep = {"tool": "tnrt", "status": "ok", "times_ms": [1.0, 1.0, 1.0], "median_ms": 1.0, "min_ms": 1.0,
       "max_ms": 1.0, "result": {"scalar": 0.25, "shape": []}, "verification": {"status": "not_run"},
       "counters": {}}
if "--step-profile" in a:
    with open(a[a.index("--step-profile") + 1], "w") as f:
        f.write("op,step,lhs_rank,rhs_rank,out_rank,bytes,ms,gbps,kernel\n")
        f.write("0,fused,0,0,0,0,0.100000,0,fused\n")   # steps 0-2
        f.write("1,3,2,2,1,0,0.200000,0,library\n")
        f.write("2,4,1,1,0,0,0.300000,0,library\n")
json.dump(rep, open(a[a.index("--json") + 1], "w"))
print("0.25")
'''


@pytest.fixture
def fake_suite(tmp_path):
    fake = tmp_path / "fake-tnrt"
    fake.write_text(FAKE_TNRT)
    fake.chmod(0o755)
    with open(os.path.join(BENCH, "suites", "smoke.json"), encoding="utf-8") as f:
        suite = json.load(f)
    suite["name"] = "roofline-switch"
    suite["problems"] = [p for p in suite["problems"] if p["name"] == "tiny-tree"]
    suite["problems"][0]["file"] = os.path.join(ROOT, suite["problems"][0]["file"])
    suite["variants"] = [{"name": "eager", "mode": "eager", "options": []},
                         {"name": "compiled", "mode": "compiled", "options": []}]
    suite["peers"] = []
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    return str(path), str(fake)


def harness(*args, timeout=120):
    return subprocess.run([PY, os.path.join(BENCH, "harness.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_harness_flop_floor_and_roofline(tmp_path, fake_suite):
    suite, fake = fake_suite
    peaks = tmp_path / "peaks.json"  # absurdly slow "GEMMs" so that the flop floor is the larger
    peaks.write_text(json.dumps({"status": "ok", "method": "test", "peaks_tflops": {"f32": 1e-12, "tf32": 1.0}}))
    out = tmp_path / "out"
    r = harness(suite, "--tnrt", fake, "--device", "cpu", "--reps", "1", "--peaks", str(peaks), "--roofline",
                "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads((out / "results.json").read_text())
    assert d["gemm_peak"]["peaks_tflops"]["f32"] == 1e-12
    prob = common.load_problem(os.path.join(ROOT, "bench/suites/data/tiny_tree.json"))
    flops = roofline.total_flops(prob, "f32")
    nbytes = prob.total_bytes("f32")
    assert d["problems"][0]["flops"] == flops
    rows = {x["variant"]: x for x in d["rows"]}
    bw = d["bandwidth"]["bandwidth_bytes_per_s"]
    for row in rows.values():
        assert row["byte_floor_ms"] == pytest.approx(nbytes / bw * 1e3)
        assert row["flop_floor_ms"] == pytest.approx(flops * 1e3)  # 1 flop/s: flops seconds
        assert row["floor_ms"] == pytest.approx(max(row["byte_floor_ms"], row["flop_floor_ms"]))
        assert row["floor_bound"] == "compute"
        assert row["x_floor"] == pytest.approx(1.0 / row["floor_ms"])
    # one roofline job, for the compiled variant only
    assert [x["variant"] for x in d["rooflines"]] == ["compiled"]
    rf = d["rooflines"][0]
    assert rf["status"] == "ok", rf
    assert "--step-profile" in rf["command"]
    s = rf["summary"]
    assert s["kernel_ms"] == pytest.approx(0.6)
    assert s["overhead_ms"] == pytest.approx(0.4)  # median 1.0 - 0.6
    assert s["compute_ms"] == pytest.approx(0.6) and s["memory_ms"] == pytest.approx(0.0)
    assert rows["compiled"]["roofline_overhead_ms"] == pytest.approx(0.4)
    assert rows["eager"].get("roofline_overhead_ms") is None
    # roofline jobs are no reps of the variant
    assert rows["compiled"]["reps"] == 1
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        crow = {x["variant"]: x for x in csv.DictReader(f)}
    for k in ("byte_floor_ms", "flop_floor_ms", "floor_bound", "roofline_memory_ms", "roofline_compute_ms",
              "roofline_overhead_ms"):
        assert k in crow["compiled"]
    assert float(crow["compiled"]["roofline_overhead_ms"]) == pytest.approx(0.4)
    readme = (out / "README.md").read_text()
    assert "GEMM peaks: f32" in readme and "tf32 1.0" in readme
    assert "the floor is the flop floor (compute-bound)" in readme
    assert "mem / compute / overhead ms" in readme
    assert "Where the time goes" in readme
    assert os.path.exists(out / "raw" / "roofline-tiny-tree-compiled.csv")
    assert os.path.exists(out / "raw" / "roofline-tiny-tree-compiled.roofline.json")


def test_harness_without_peaks_or_roofline(tmp_path, fake_suite):
    suite, fake = fake_suite
    out = tmp_path / "out"
    r = harness(suite, "--tnrt", fake, "--device", "cpu", "--reps", "1", "--skip-peak", "--no-bandwidth",
                "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads((out / "results.json").read_text())
    assert d["gemm_peak"] is None and d["rooflines"] == []
    for row in d["rows"]:
        assert row["floor_ms"] is None and row["x_floor"] is None
    readme = (out / "README.md").read_text()
    assert "GEMM peaks: not measured" in readme
    assert "mem / compute / overhead ms" not in readme
    dry = harness(suite, "--tnrt", fake, "--device", "cpu", "--reps", "1", "--roofline", "--dry-run")
    assert dry.returncode == 0
    assert sum("--step-profile" in line for line in dry.stdout.splitlines()) == 1


def test_harness_merge_pools_peaks(tmp_path, fake_suite):
    suite, fake = fake_suite
    parts = []
    for i, v in enumerate((1.0, 3.0)):
        peaks = tmp_path / f"p{i}.json"
        peaks.write_text(json.dumps({"status": "ok", "peaks_tflops": {"f32": v}}))
        part = tmp_path / f"part{i}"
        r = harness(suite, "--tnrt", fake, "--device", "cpu", "--reps", "1", "--no-bandwidth", "--peaks", str(peaks),
                    "--roofline", "--out", str(part))
        assert r.returncode == 0, r.stderr
        parts.append(str(part))
    out = tmp_path / "merged"
    r = harness("--merge", *parts, "--out", str(out))
    assert r.returncode == 0, r.stderr
    d = json.loads((out / "results.json").read_text())
    assert d["gemm_peak"]["peaks_tflops"]["f32"] == pytest.approx(2.0)
    assert len(d["rooflines"]) == 2


TNRT = os.path.join(ROOT, "build", "tnrt")


@pytest.mark.skipif(not os.access(TNRT, os.X_OK), reason="no build/tnrt")
def test_harness_runs_the_smoke_suite_on_cpu(tmp_path):
    out = tmp_path / "smoke"
    r = harness(os.path.join(BENCH, "suites", "smoke.json"), "--device", "cpu", "--tnrt", TNRT, "--reps", "1",
                "--only", "eager", "--only", "compiled", "--only", "numpy", "--roofline", "--out", str(out),
                timeout=300)
    # 0, or 3 where a job failed; never a crash or a verification failure
    assert r.returncode in (0, 3), r.stdout + r.stderr[-3000:]
    d = json.loads((out / "results.json").read_text())
    ok = [x for x in d["rows"] if x["reps_ok"]]
    assert ok and all(x["verified"] is not False for x in d["rows"])
    assert all(x["byte_floor_ms"] for x in ok)
    assert d["gemm_peak"]["status"] in ("ok", "not_supported")
    # compiled runs on the GPU only: its roofline jobs are recorded as not supported
    assert {x["status"] for x in d["rooflines"]} <= {"ok", "not_supported"}
    assert len(d["rooflines"]) == 3


SLOW_PEER = r'''import sys, time
time.sleep(60)
'''


def test_harness_job_timeout_and_budget(tmp_path, fake_suite):
    """A peer past --timeout is killed and recorded as a timeout; past --budget no job starts."""
    suite_path, fake = fake_suite
    slow = tmp_path / "slow_peer.py"
    slow.write_text(SLOW_PEER)
    suite = json.loads(open(suite_path).read())
    suite["peers"] = [{"name": "slow", "script": str(slow), "args": []}]
    suite["variants"] = []
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(suite))
    out = tmp_path / "t"
    r = harness(str(path), "--tnrt", fake, "--device", "cpu", "--reps", "1", "--skip-peak", "--no-bandwidth",
                "--timeout", "1", "--out", str(out), timeout=60)
    assert r.returncode == 3, r.stderr
    (rec,) = json.loads((out / "results.json").read_text())["records"]
    assert rec["status"] == "timeout" and rec["wall_s"] < 15
    out = tmp_path / "b"
    r = harness(str(path), "--tnrt", fake, "--device", "cpu", "--reps", "2", "--skip-peak", "--no-bandwidth",
                "--budget", "0.000001", "--out", str(out), timeout=60)
    recs = json.loads((out / "results.json").read_text())["records"]
    assert [x["status"] for x in recs] == ["skipped", "skipped"]


def test_suite_table_counts_compiled_and_eager_against_the_peers():
    """bench/suite_table.py: best full-precision peer over the chosen compiled variant (JAX's TF32
    row left out), and tnrt eager against torch eager."""
    import suite_table  # noqa: PLC0415

    def row(problem, variant, ms, kind="peer", verified="True"):
        return {"problem": problem, "variant": variant, "median_ms": str(ms), "statuses": "ok", "kind": kind,
                "verified": verified, "dtype": "f32", "floor_ms": "0.1", "floor_bound": "memory", "x_floor": "2"}
    rows = [row("a", "eager", 2.0, "tnrt"), row("a", "compiled", 1.0, "tnrt"), row("a", "compiled static", 0.5, "tnrt"),
            row("a", "torch", 3.0), row("a", "torch graph", 1.5), row("a", "jax default (TF32)", 0.1),
            row("b", "eager", 4.0, "tnrt"), row("b", "compiled", 2.0, "tnrt"), row("b", "compiled static", 2.0, "tnrt"),
            row("b", "torch", 2.0), row("b", "cuTensorNet", 1.0)]
    _, ratios, eager = suite_table.table(rows)
    assert ratios == [1.5, 0.5]  # a: torch graph 1.5 / 1.0 (not JAX's TF32 0.1); b: cuTensorNet 1.0 / 2.0
    assert eager == [1.5, 0.5]   # torch eager / tnrt eager
    _, static, _ = suite_table.table(rows, "compiled static")
    assert static == [3.0, 0.5]
    # a required peer that did not run on a network leaves that network out, and the row says so
    lines, required, _ = suite_table.table(rows, "compiled", ("cuTensorNet",))
    assert required == [0.5]
    assert "missing: cuTensorNet" in lines[2] and "missing" not in lines[3]


def test_suite_table_counts_memory_bound_networks_within_their_floor():
    """bench/suite_table.py's memory-bound target: the compiled variant within 1.5x of the byte floor,
    counted over memory-bound networks only (compute-bound ones, '-random' twins and failed runs left
    out), worst last."""
    import suite_table  # noqa: PLC0415

    def row(problem, x, bound="memory", variant="compiled", status="ok"):
        return {"problem": problem, "variant": variant, "median_ms": "1", "statuses": status, "kind": "tnrt",
                "verified": "True", "dtype": "f32", "floor_ms": "0.5", "floor_bound": bound, "x_floor": str(x)}
    rows = [row("a", 1.2), row("b", 3.0), row("c", 1.5), row("d", 1.1, "compute"), row("a-random", 9.0),
            row("e", 1.0, status="error"), row("f", 1.4, variant="eager"), row("g", 2.0)]
    within, xs = suite_table.memory_bound(rows)
    assert within == 2  # a (1.2) and c (1.5, the bound itself)
    assert xs == [("a", 1.2), ("c", 1.5), ("g", 2.0), ("b", 3.0)]
    assert suite_table.memory_bound(rows, within=1.25)[0] == 1


def test_variant_table_ratios_and_geometric_mean():
    """bench/variant_table.py: base / variant per network, a dash where a variant did not run, and the
    geometric mean over the networks where both ran."""
    import variant_table  # noqa: PLC0415

    def row(problem, variant, ms, verified="True"):
        return {"problem": problem, "variant": variant, "median_ms": str(ms), "verified": verified, "abs_err": "1e-6",
                "compile_ms": "100"}
    rows = [row("a", "compiled", 1.0), row("a", "fast", 0.5), row("b", "compiled", 2.0), row("b", "fast", 4.0, "False"),
            row("c", "compiled", 1.0), row("d", "compiled", 3.0), row("d", "fast", "")]
    lines = variant_table.table(rows, "compiled", ["fast"])
    body = [x for x in lines if x.startswith("| ") and not x.startswith("| network")]
    assert [x.split(" | ")[0] for x in body] == ["| a", "| b", "| d"]  # c: the variant did not run; d: it failed
    assert "| 0.5 | 2.000 |" in body[0] and "FAIL" in body[1] and "| — | — | — |" in body[2]
    assert any("geometric mean of compiled / fast 1.000 over 2 networks" in x for x in lines)  # sqrt(2 * 0.5)


@pytest.mark.skipif(not os.access(TNRT, os.X_OK), reason="no build/tnrt")
def test_path_ab_runs_both_paths_in_turns(tmp_path):
    """bench/paths/path_ab.py on the CPU engine: a 3-matrix chain under its two paths, both results
    agree, tc differs as the shapes say; a network without both files is left out; bad --paths is one
    line and exit 2."""
    net = tmp_path / "chain.json"
    net.write_text(json.dumps({"format_string": "ab,bc,cd->ad", "shapes": [[40, 50], [50, 6], [6, 30]], "dtype": "float32"}))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"problems": [
        {"name": "chain", "file": str(net), "dtype": "f32", "fill": {"kind": "constant", "value": 0.5}},
        {"name": "lonely", "file": str(net), "dtype": "f32", "fill": {"kind": "constant", "value": 0.5}}]}))
    paths = tmp_path / "paths"
    paths.mkdir()
    (paths / "chain-asis.json").write_text("[[0, 1], [0, 1]]")   # (ab,bc) first: 40*50*6 + 40*6*30
    (paths / "chain-other.json").write_text("[[1, 2], [0, 1]]")  # (bc,cd) first: 50*6*30 + 40*50*30
    (paths / "lonely-asis.json").write_text("[[0, 1], [0, 1]]")
    out = tmp_path / "ab"
    script = os.path.join(BENCH, "paths", "path_ab.py")
    r = subprocess.run([sys.executable, script, str(suite), "--tnrt", TNRT, "--paths", str(paths), "--out", str(out),
                        "--device", "cpu", "--reps", "2", "--warmups", "0", "--runs", "2"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    d = json.loads((out / "path_ab.json").read_text())
    assert [x["network"] for x in d["rows"]] == ["chain"]
    row = d["rows"][0]
    assert row["agree"] and len(row["asis"]["runs_ms"]) == 2 and row["a_over_b"] > 0
    assert row["asis"]["tc"] < row["other"]["tc"]
    bad = subprocess.run([sys.executable, script, str(suite), "--tnrt", TNRT, "--paths", str(tmp_path / "none"), "--out", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
