"""Checks the sliced suite (bench/suites/sliced.json and the networks under bench/suites/sliced/,
written by bench/suites/sliced/generate.py) and the cuTensorNet sliced peer, without a GPU:

- the three network files (big, small, tiny) exist, are under 1 MB, parse as JSON and load with
  bench/peers/common.py; the suite lists them with the bands of the generator (big: largest
  intermediate 2^34..2^36 elements and an unsliced peak above 141 GiB; small 2^26..2^28; tiny at
  most 2^18); the recorded metrics are those recomputed from the file here;
- "slices" names distinct summed labels of format_string, the slice count and the per-slice
  largest intermediate (<= the target) recompute, and "slicing_note" says how they were found;
- the tiny network contracts (NumPy engine in f64, and opt_einsum along the file's path) to the
  constant fill's exact 1, and its slices summed give the unsliced result under a random fill;
- bench/peers/cutensornet_sliced.py exits 2 (not supported, one line) without cuquantum or a GPU,
  and 1 for a sliced label the network does not have.

    python3 -m pytest -q tests/python/test_suite_sliced.py     # a few seconds, CPU only
"""
from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import common  # noqa: E402

SUITE = os.path.join(ROOT, "bench", "suites", "sliced.json")
DIR = os.path.join(ROOT, "bench", "suites", "sliced")
PEER = os.path.join(ROOT, "bench", "peers", "cutensornet_sliced.py")
H200_BYTES = 141 * 2**30
BANDS = {"big": (34, 36), "small": (26, 28), "tiny": (0, 18)}
TARGETS = {"big": 31, "small": 24, "tiny": 12}

with open(SUITE, encoding="utf-8") as _f:
    SUITE_DOC = json.load(_f)
CONSTANT = [p for p in SUITE_DOC["problems"] if p["fill"]["kind"] == "constant"]
ROLES = {p["role"]: p for p in CONSTANT}


def generator():
    """bench/suites/sliced/generate.py as a module (its peak estimate)."""
    spec = importlib.util.spec_from_file_location("sliced_generate", os.path.join(DIR, "generate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def doc_of(p: dict) -> dict:
    with open(os.path.join(ROOT, p["file"]), encoding="utf-8") as f:
        return json.load(f)


_CACHE: dict = {}


def problem_of(p: dict) -> common.Problem:
    if p["file"] not in _CACHE:
        _CACHE[p["file"]] = common.load_problem(file=os.path.join(ROOT, p["file"]))
    return _CACHE[p["file"]]


def costs(pr: common.Problem) -> tuple[int, int]:
    """(flops, largest intermediate) of a real network: 2 flops per multiply-add over the union of a
    pairwise step's labels, one per element of a unary step."""
    labels = pr.operand_labels()
    flops = largest = 0
    for s in pr.steps:
        if s.rhs >= 0:
            flops += 2 * math.prod(pr.extents[l] for l in set(labels[s.lhs]) | set(labels[s.rhs]))
        else:
            flops += math.prod(pr.extents[l] for l in labels[s.lhs])
        largest = max(largest, math.prod(pr.extents[l] for l in s.out))
    return flops, largest


def sliced_problem(pr: common.Problem, ids: list[int]) -> common.Problem:
    ext = list(pr.extents)
    for l in ids:
        ext[l] = 1
    return common.Problem(pr.inputs, pr.output, ext, pr.steps, pr.label_names, pr.source)


def test_suite_lists_the_three_networks():
    assert SUITE_DOC["name"] == "sliced"
    assert set(ROLES) == {"big", "small", "tiny"}
    for p in SUITE_DOC["problems"]:
        path = os.path.join(ROOT, p["file"])
        assert os.path.exists(path), p["file"]
        assert p["file"].startswith("bench/suites/sliced/")
        assert os.path.basename(p["file"]).startswith(p["role"] + "-")
        assert os.path.getsize(path) < 1 << 20
        assert p["dtype"] == "f32"
        assert p["reference"] == (1.0 if p["fill"]["kind"] == "constant" else "numpy")
    # the harness's loader accepts it, and no tnrt variant runs the big network unsliced
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import harness
    suite = harness.load_suite(SUITE)
    big = ROLES["big"]
    for v in suite["variants"]:
        assert not harness.applies(v, big), v["name"]
    assert any(harness.applies(v, big) and v["script"].endswith("cutensornet_sliced.py") for v in suite["peers"])


@pytest.mark.parametrize("role", ["big", "small", "tiny"])
def test_file_metrics_and_bands(role):
    p = ROLES[role]
    doc = doc_of(p)
    for key in ("format_string", "shapes", "dtype", "path", "family", "generator", "slices", "slicing_note", "fill"):
        assert key in doc, key
    pr = problem_of(p)
    flops, largest = costs(pr)
    m = doc["metrics"]
    assert m["n_inputs"] == pr.n_inputs == p["n_inputs"]
    assert m["log2_largest_intermediate"] == pytest.approx(math.log2(largest), abs=1e-3)
    assert p["log2_largest_intermediate"] == pytest.approx(math.log2(largest), abs=1e-3)
    assert m["log2_flops"] == pytest.approx(math.log2(flops), abs=1e-3)
    lo, hi = BANDS[role]
    assert lo <= m["log2_largest_intermediate"] <= hi
    assert m["peak_bytes_unsliced"] == generator().peak_bytes(pr)
    if role == "big":
        assert m["log2_largest_intermediate"] >= 34
        assert m["peak_bytes_unsliced"] > H200_BYTES
        assert largest * 4 * 2 > H200_BYTES  # two such tensors live at once: past the H200 anyway
        assert m["log2_multiply_adds"] <= 44
    if role == "small":
        assert m["log2_flops"] >= 30 and m["peak_bytes_unsliced"] <= 8e9
    # the constant fill: c**N * prod(summed extents) = 1
    summed = {l for t in pr.inputs for l in t} - set(pr.output)
    c = doc["fill"]["value"]
    assert p["fill"]["value"] == c
    assert pr.n_inputs * math.log2(c) + sum(math.log2(pr.extents[l]) for l in summed) == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("role", ["big", "small", "tiny"])
def test_slices_name_labels_of_the_expression(role):
    p = ROLES[role]
    doc = doc_of(p)
    pr = problem_of(p)
    lhs, rhs = doc["format_string"].split("->")
    names = doc["slices"]
    assert names and len(set(names)) == len(names)
    for n in names:
        assert len(n) == 1 and n in lhs and n not in rhs, n
    assert names == p["slices"]
    assert "SliceFinder" in doc["slicing_note"] and f"2**{TARGETS[role]}" in doc["slicing_note"]
    ids = [pr.label_names.index(n) for n in names]
    slices = math.prod(pr.extents[l] for l in ids)
    info = doc["slicing"][f"2^{TARGETS[role]}"]
    assert info["labels"] == names and info["slices"] == slices == p["num_slices"]
    flops, _ = costs(pr)
    flops1, largest1 = costs(sliced_problem(pr, ids))
    assert largest1 <= 2 ** TARGETS[role]
    assert info["log2_largest_intermediate_per_slice"] == pytest.approx(math.log2(largest1), abs=1e-3)
    assert info["flops_overhead"] == pytest.approx(slices * flops1 / flops, rel=1e-3)
    if role == "big":
        assert info["flops_overhead"] <= 4.0
        assert info["peak_bytes_per_slice"] <= 40e9
        assert "2^30" in doc["slicing"]


def test_tiny_contracts_to_one():
    import numpy as np
    p = ROLES["tiny"]
    doc = doc_of(p)
    pr = problem_of(p)
    fill = common.Fill("constant", doc["fill"]["value"])
    inputs = [a.astype(np.float64) for a in common.make_inputs(pr, "f32", fill)]
    assert float(common.numpy_contract(pr, inputs)) == pytest.approx(1.0, rel=1e-5)  # f32-rounded c
    exact = [np.full(a.shape, doc["fill"]["value"]) for a in inputs]
    assert float(common.numpy_contract(pr, exact)) == pytest.approx(1.0, rel=1e-10)
    opt_einsum = pytest.importorskip("opt_einsum")
    val = opt_einsum.contract(doc["format_string"], *exact, optimize=[tuple(x) for x in doc["path"]])
    assert float(val) == pytest.approx(1.0, rel=1e-10)
    assert doc["fill"]["result"] == 1.0


def test_tiny_slices_sum_to_the_unsliced_result():
    import numpy as np
    p = ROLES["tiny"]
    doc = doc_of(p)
    pr = problem_of(p)
    c = doc["fill"]["value"]
    inputs = common.make_inputs(pr, "f64", common.Fill("random", c, 7, 0.5 * c, 1.5 * c))
    full = float(common.numpy_contract(pr, inputs))
    ids = [pr.label_names.index(n) for n in doc["slices"]]
    one = sliced_problem(pr, ids)
    total, count = 0.0, 0
    for values in itertools.product(*[range(pr.extents[l]) for l in ids]):
        fix = dict(zip(ids, values))
        part = []
        for a, labels in zip(inputs, pr.inputs):
            index = tuple(slice(fix[l], fix[l] + 1) if l in fix else slice(None) for l in labels)
            part.append(np.ascontiguousarray(a[index]))
        total += float(common.numpy_contract(one, part))
        count += 1
    assert count == doc["slicing"]["2^12"]["slices"]
    assert total == pytest.approx(full, rel=1e-10)
    assert full != pytest.approx(1.0, rel=1e-3)  # the random fill is not the constant one


def cuquantum_present() -> bool:
    return importlib.util.find_spec("cuquantum") is not None


def run_peer(args: list[str], tmp_path):
    out = tmp_path / "report.json"
    p = subprocess.run([sys.executable, PEER] + args + ["--json", str(out)], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    return p, (json.loads(out.read_text()) if out.exists() else None)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_cutensornet_sliced_exits_2_without_cuquantum(device, tmp_path):
    if device == "cuda" and cuquantum_present():
        pytest.skip("cuquantum is installed: the peer may run")
    p, report = run_peer([os.path.join(ROOT, ROLES["tiny"]["file"]), "--warmups", "0", "--runs", "1",
                          "--device", device], tmp_path)
    assert p.returncode == 2, p.stderr
    assert report["tool"] == "cutensornet" and report["status"] == "not_supported"
    assert report["error"] and "\n" not in report["error"]
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert report["slices"]["labels"] == ROLES["tiny"]["slices"]
    assert report["slices"]["expected"] == ROLES["tiny"]["num_slices"]
    assert report["fill"] == f"constant {ROLES['tiny']['fill']['value']!r}"  # the file's fill by default


def test_cutensornet_sliced_rejects_unknown_labels(tmp_path):
    p, report = run_peer([os.path.join(ROOT, ROLES["tiny"]["file"]), "--slices", "h,not-a-label",
                          "--device", "cpu"], tmp_path)
    assert p.returncode == 1, p.stderr
    assert report["status"] == "failed" and "not-a-label" in report["error"]
    assert "Traceback" not in p.stderr


def test_cutensornet_sliced_reuses_the_tree_peer():
    """The sliced peer imports the tree peer's path conversion rather than a copy of it."""
    import cutensornet_sliced
    import cutensornet_tree
    assert cutensornet_sliced.pairwise_paths is cutensornet_tree.pairwise_paths
    pr = problem_of(ROLES["tiny"])
    _, linear = cutensornet_tree.pairwise_paths(pr)
    assert len(linear) == pr.n_inputs - 1
