"""The cotengra, JAX and cuTensorNet peers (bench/peers/*_tree.py) on the host, no GPU: each runs as
the harness runs it (a subprocess writing a JSON report) on a tiny tree and a three-tensor
expression, and must report status ok with a verified result; cuTensorNet, which needs a GPU,
must report not_supported/failed in one line with a non-zero exit."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "bench", "peers")
TINY = os.path.join(ROOT, "bench", "suites", "data", "tiny_tree.json")
EXPR = ["--expr", "ab,bc,cd->ad", "--shapes", "3x4,4x5,5x2", "--fill", "random", "--seed", "3"]


def run_peer(script: str, args: list[str], tmp_path, timeout: float = 50.0):
    out = tmp_path / f"{script}.json"
    cmd = [sys.executable, os.path.join(PEERS, script)] + args + ["--json", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    report = json.loads(out.read_text()) if out.exists() else None
    return p, report


def expr_reference(tmp_path) -> str:
    """The NumPy f64 result of EXPR's inputs (what the harness computes for a random fill)."""
    p, doc = run_peer("common.py", EXPR + ["--dtype", "f32", "--compute-dtype", "f64"], tmp_path)
    assert p.returncode == 0 and doc["status"] == "ok", p.stderr
    return json.dumps(doc["result"])


def check_ok(p, report, dtype="f32"):
    assert p.returncode == 0, p.stderr
    assert report is not None
    assert report["status"] == "ok", report.get("error")
    assert report["verified"] is True, report.get("verification")
    assert report["dtype"] == dtype
    assert len(report["times_ms"]) == 2 and report["median_ms"] is not None
    assert "settings" in report and "versions" in report and "counters" in report


CASES = [("cotengra_tree.py", "cotengra", ["--backend", "numpy"]),
         ("jax_tree.py", "jax", ["--precision", "highest"])]


@pytest.mark.parametrize("script,module,extra", CASES, ids=["cotengra", "jax"])
def test_tiny_tree(script, module, extra, tmp_path):
    pytest.importorskip(module)
    p, report = run_peer(script, [TINY, "--dtype", "f32", "--fill", "constant", "--value", "0.5",
                                  "--reference", "0.25", "--warmups", "1", "--runs", "2",
                                  "--device", "cpu"] + extra, tmp_path)
    check_ok(p, report)
    assert report["result"]["scalar"][0] == pytest.approx(0.25, rel=1e-5)
    assert report["steps"] == 5


@pytest.mark.parametrize("script,module,extra", CASES, ids=["cotengra", "jax"])
@pytest.mark.parametrize("dtype", ["f32", "c128"])
def test_expression_random_fill(script, module, extra, dtype, tmp_path):
    pytest.importorskip(module)
    ref_args = EXPR + ["--dtype", dtype, "--compute-dtype", "c128" if dtype[0] == "c" else "f64"]
    p, doc = run_peer("common.py", ref_args, tmp_path)
    assert p.returncode == 0, p.stderr
    p, report = run_peer(script, EXPR + ["--dtype", dtype, "--reference", json.dumps(doc["result"]),
                                         "--warmups", "1", "--runs", "2", "--device", "cpu"] + extra, tmp_path)
    check_ok(p, report, dtype)
    assert report["result"]["shape"] == [3, 2]


@pytest.mark.parametrize("script,module,extra", CASES, ids=["cotengra", "jax"])
def test_wrong_reference_is_not_verified(script, module, extra, tmp_path):
    """The check can fail: a reference off by 1% gives verified false (status still ok)."""
    pytest.importorskip(module)
    p, report = run_peer(script, [TINY, "--value", "0.5", "--reference", "0.2525", "--warmups", "0",
                                  "--runs", "2", "--device", "cpu"] + extra, tmp_path)
    assert p.returncode == 0 and report["status"] == "ok"
    assert report["verified"] is False


def test_cotengra_tree_holds_the_problems_pairs(tmp_path):
    pytest.importorskip("cotengra")
    p, report = run_peer("cotengra_tree.py", EXPR + ["--reference", expr_reference(tmp_path), "--warmups", "0",
                                                     "--runs", "2", "--device", "cpu", "--backend", "numpy",
                                                     "--strip-exponent"], tmp_path)
    check_ok(p, report)
    tree = report["tree"]
    assert tree["same_pairs"] is True and tree["pairs"] == tree["problem_pairs"] == 2
    assert report["settings"]["strip_exponent"] is True


def test_cotengra_numpy_backend_needs_cpu(tmp_path):
    pytest.importorskip("cotengra")
    p, report = run_peer("cotengra_tree.py", [TINY, "--device", "cuda", "--backend", "numpy"], tmp_path)
    assert p.returncode == 2 and report["status"] == "not_supported"


def test_jax_compile_timeout_is_not_supported(tmp_path):
    pytest.importorskip("jax")
    p, report = run_peer("jax_tree.py", [TINY, "--device", "cpu", "--compile-timeout", "0.001"], tmp_path)
    assert p.returncode == 2, p.stderr
    assert report["status"] == "not_supported" and "compile exceeded" in report["error"]


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_cutensornet_without_gpu_fails_cleanly(device, tmp_path):
    p, report = run_peer("cutensornet_tree.py", [TINY, "--value", "0.5", "--reference", "0.25",
                                                 "--warmups", "0", "--runs", "1", "--device", device], tmp_path)
    if report is not None and report.get("status") == "ok":
        pytest.skip("a GPU and cuTensorNet are present: the peer ran")
    assert p.returncode != 0
    assert report is not None and report["tool"] == "cutensornet"
    assert report["status"] in ("not_supported", "failed")
    assert report["error"] and "\n" not in report["error"]
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) <= 1, p.stderr
    if device == "cpu":
        assert p.returncode == 2 and report["status"] == "not_supported"


def test_pairwise_paths_match_the_steps():
    """The ssa/linear paths handed to cotengra and cuTensorNet replay the problem's pairs."""
    sys.path.insert(0, PEERS)
    import common
    from cutensornet_tree import pairwise_paths
    problem = common.load_problem(TINY)
    ssa, linear = pairwise_paths(problem)
    assert len(ssa) == len(linear) == problem.n_inputs - 1
    # replay the linear path and compare the leaf sets formed with the ssa path's
    live = [frozenset([i]) for i in range(problem.n_inputs)]
    nodes = list(live)
    for (a, b), (i, j) in zip(linear, ssa):
        merged = live[a] | live[b]
        live = [x for k, x in enumerate(live) if k not in (a, b)] + [merged]
        nodes.append(nodes[i] | nodes[j])
        assert nodes[-1] == merged
    assert live == [frozenset(range(problem.n_inputs))]
    # a unary step renames its operand: the pairwise paths skip it
    problem = common.Problem([[0, 1], [1, 2], [2]], [], [2, 3, 2],
                             [common.Step(1, -1, [1]), common.Step(0, 3, [0]), common.Step(2, -1, [2]),
                              common.Step(4, 5, [])])
    problem.validate()
    assert pairwise_paths(problem) == ([(0, 1), (3, 2)], [(0, 1), (1, 0)])


UNARY_TREE = {"inputs": [[1, 2], [2, 3]], "output": [], "tree": {
    "isleaf": False, "eins": {"ixs": [[2], [2, 3]], "iy": []}, "args": [
        {"isleaf": False, "eins": {"ixs": [[1, 2]], "iy": [2]}, "args": [{"isleaf": True, "tensorindex": 1}]},
        {"isleaf": True, "tensorindex": 2}]}}


@pytest.mark.parametrize("script,module,extra", CASES, ids=["cotengra", "jax"])
def test_tree_with_a_unary_step(script, module, extra, tmp_path):
    """A one-child node sums label 1 away first; 2*2*2 elements of 0.5*0.5: the value is 2."""
    pytest.importorskip(module)
    f = tmp_path / "unary.json"
    f.write_text(json.dumps(UNARY_TREE))
    p, report = run_peer(script, [str(f), "--value", "0.5", "--reference", "2", "--warmups", "0",
                                  "--runs", "2", "--device", "cpu"] + extra, tmp_path)
    check_ok(p, report)
    assert report["steps"] == 2
