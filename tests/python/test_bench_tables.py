"""The table scripts whose outputs results folders commit (no GPU): bench/precision_errors.py (the
reduced-precision row's relative errors), bench/launch_summary.py (launches per compiled call) and
bench/holdback.py (the steps that hold a memory-bound network above its floor)."""
import csv
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, os.path.join(BENCH, "peers"))
sys.path.insert(0, BENCH)
import holdback  # noqa: E402
import launch_summary  # noqa: E402
import precision_errors  # noqa: E402


def test_relative_error_of_scalars_and_tensors():
    rel = precision_errors.relative_error
    assert abs(rel({"scalar": [1.002, 0.0]}, 1.0) - 2e-3) < 1e-12
    # tnrt writes complex scalars as {"re", "im"}; a [re, im] reference
    assert abs(rel({"scalar": {"re": 0.0, "im": 2.0}}, [0.0, 1.0]) - 1.0) < 1e-12
    # a tensor: the larger of the norm's and the sum's relative errors
    got = {"shape": [2], "norm": 16.0, "sum": [250.0, 0.0]}
    ref = {"shape": [2], "norm": 16.0, "sum": [256.0, 0.0]}
    assert abs(rel(got, ref) - 6.0 / 256.0) < 1e-12
    assert rel(None, 1.0) is None
    assert rel({"scalar": [1.0, 0.0]}, 0.0) is None  # no relative error against zero


def test_precision_table_from_a_results_file(tmp_path, capsys):
    doc = {"problems": [{"name": "net", "reference_value": 1.0}],
           "records": [{"problem": "net", "variant": "compiled tf32", "median_ms": 0.5, "verified": False,
                        "result": {"scalar": [1.01, 0.0]}},
                       {"problem": "net", "variant": "jax highest", "median_ms": 1.5, "verified": True,
                        "result": {"scalar": [1.0, 0.0]}},
                       {"problem": "net", "variant": "timed out", "median_ms": None, "result": None}]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    md = tmp_path / "errors.md"
    assert precision_errors.main([str(path), "--md", str(md)]) == 0
    lines = md.read_text().splitlines()
    assert lines[2] == "| net | compiled tf32 | 0.500 | 1.0e-02 | no |"
    assert lines[3] == "| net | jax highest | 1.500 | 0.0e+00 | yes |"
    assert len(lines) == 4  # the job without a time is left out
    assert capsys.readouterr().out == md.read_text()


def test_launch_summary_counts_launches(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    fields = ["op", "step", "ms", "kernel"]
    rows = [("0", "fused", "0.030", "fused"), ("1", "4", "0.004", "library"), ("2", "7", "0.020", "library"),
            ("3", "9", "0.008", "dot")]
    for name in ("roofline-net-compiled.csv", "roofline-net-compiled-dot-off.csv"):
        with open(raw / name, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            w.writerows(rows if "off" not in name else rows[:-1] + [("3", "9", "0.025", "library")])
    md = tmp_path / "launches.md"
    assert launch_summary.main([str(raw), "--md", str(md)]) == 0
    # the fused 30 us; two launches under 10 us (4 and 8 us, the fused one not counted); the last a dot
    assert md.read_text().splitlines()[2] == "| net | 4 | 30.0 | 2 | 12 | 62 | 8.0 (dot) |"
    assert launch_summary.main([str(raw), "--variant", "compiled dot off", "--md", str(md)]) == 0
    assert md.read_text().splitlines()[2] == "| net | 4 | 30.0 | 1 | 4 | 79 | 25.0 (library) |"


def test_holdback_splits_the_excess_between_large_steps_and_the_rest(tmp_path, capsys):
    raw = tmp_path / "raw"
    raw.mkdir()
    # 1e12 B/s: a megabyte is a microsecond
    (raw / "bandwidth.json").write_text(json.dumps({"bandwidth_bytes_per_s": 1e12, "gpu": "test GPU"}))
    with open(tmp_path / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["problem", "variant", "median_ms", "floor_ms", "x_floor"])
        w.writerow(["Net-A", "compiled", "0.060", "0.020", "3.0"])  # over 1.5x: reported
        w.writerow(["Net-B", "compiled", "0.025", "0.020", "1.25"])  # within: left out
        w.writerow(["Net-A", "compiled dot off", "0.070", "0.020", "3.5"])  # another variant: left out
        w.writerow(["Net-C", "compiled", "", "0.020", ""])  # a failed job: left out
    fields = ["op", "step", "bytes", "ms", "gbps", "kernel", "batch", "m", "n", "k"]
    steps = [("0", "fused", "0", "0.010", "0", "fused", "0", "0", "0", "0"),          # the rest: 10 us excess
             ("1", "3", "1000000", "0.011", "90", "library", "1", "2", "4", "8"),     # the rest: 10 us excess
             ("2", "5", "20000000", "0.040", "500", "tiled", "2", "8", "16", "4")]   # large (20 us of bytes): 20 us over
    for net in ("net-a", "net-b"):
        with open(raw / f"roofline-{net}-compiled.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            w.writerows(steps)
    holdback.main([str(tmp_path), "--top", "2"])
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if l.startswith("| Net-")]
    assert rows == ["| Net-A | 0.060 | 0.020 | 3.00 | 0.061 | 1, 0.040, 0.020, 2.00 | 2, 0.021 | 50% | 50% |"]
    assert "large steps: 10 us of bytes or more (10.0 MB)" in out
    assert "### Net-A" in out and "### Net-B" not in out
    # the large steps only (the rest's times may hold the host's enqueue): the one, 20 us over
    detail = [l for l in out.splitlines() if l.startswith("| 5 ") or l.startswith("| fused ") or l.startswith("| 3 ")]
    assert detail == ["| 5 | tiled | 2 x 8 x 16 x 4 | 20.00 MB | 0.0400 | 500 | 0.0200 |"]
    assert "By kernel (steps, ms alone, excess ms): tiled 1, 0.040, 0.020; fused 1, 0.010, 0.010; library 1, 0.011, 0.010" in out


def test_holdback_refuses_a_folder_without_results(tmp_path):
    with pytest.raises(SystemExit) as e:
        holdback.main([str(tmp_path)])
    assert "not a fam-roof harness folder" in str(e.value)
    # results, but a profile that is not tnrt's: one error line naming it
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "bandwidth.json").write_text(json.dumps({"bandwidth_bytes_per_s": 1e12}))
    (tmp_path / "results.csv").write_text("problem,variant,median_ms,floor_ms,x_floor\nnet,compiled,0.06,0.02,3.0\n")
    (tmp_path / "raw" / "roofline-net-compiled.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit) as e:
        holdback.main([str(tmp_path)])
    assert "not a step profile" in str(e.value)
