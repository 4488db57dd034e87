"""The table scripts whose outputs results folders commit (no GPU): bench/precision_errors.py (the
reduced-precision row's relative errors) and bench/launch_summary.py (launches per compiled call)."""
import csv
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, os.path.join(BENCH, "peers"))
sys.path.insert(0, BENCH)
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
