#!/usr/bin/env python3
"""Contract a TensorNetworkBenchmarks tree JSON with NumPy, step by step along the file's tree.

The CPU peer for tnrt's engine (bench/results/cpu-*): same tree, same fill (every element 0.5^0.4,
exact result 1, or --random: uniform within +-10% of it), same step order, intermediates freed as
soon as consumed. Each binary step is one `numpy.einsum(lhs, rhs, out, optimize=False)` call with
integer sublists (labels renumbered per step: NumPy's einsum takes at most 52 distinct labels). `--mode tensordot` uses numpy.tensordot + transpose for steps with contracted labels and no
batch labels instead (BLAS-backed; einsum everywhere else). Prints each run's time and the median.

  python3 bench/peers/numpy_tree.py data/tensornetwork_permutation_optimized.json --dtype f32 --runs 3
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np


def load(path):
    with open(path) as f:
        d = json.load(f)
    inputs = [list(ls) for ls in d["inputs"]]
    steps = []  # (lhs id, rhs id, out labels); ids: inputs 0..n-1 then step results

    def walk(node):
        if node["isleaf"]:
            return node["tensorindex"] - 1
        ids = [walk(a) for a in node["args"]]
        assert len(ids) == 2, "binary trees only"
        steps.append((ids[0], ids[1], list(node["eins"]["iy"])))
        return len(inputs) + len(steps) - 1

    walk(d["tree"])
    return inputs, steps


def contract(inputs, steps, arrays, mode):
    n = len(inputs)
    labels = list(inputs) + [s[2] for s in steps]
    ops = list(arrays) + [None] * len(steps)
    for k, (a, b, out) in enumerate(steps):
        la, lb = labels[a], labels[b]
        shared = set(la) & set(lb)
        contracted = [l for l in la if l in shared and l not in out]
        batch = [l for l in shared if l in out]
        if mode == "tensordot" and contracted and not batch and len(set(la)) == len(la) and len(set(lb)) == len(lb) \
                and set(out) == (set(la) | set(lb)) - set(contracted):
            r = np.tensordot(ops[a], ops[b], axes=([la.index(l) for l in contracted], [lb.index(l) for l in contracted]))
            have = [l for l in la if l not in contracted] + [l for l in lb if l not in contracted]
            r = np.ascontiguousarray(np.transpose(r, [have.index(l) for l in out]))
        else:
            # einsum sublists take integers below 52: number this step's labels from 0
            ids = {}
            for l in la + lb:
                ids.setdefault(l, len(ids))
            r = np.einsum(ops[a], [ids[l] for l in la], ops[b], [ids[l] for l in lb], [ids[l] for l in out], optimize=False)
        ops[n + k] = r
        ops[a] = None
        ops[b] = None
    return ops[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f64", "c64", "c128"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--random", action="store_true", help="uniform within +-10%% of 0.5^0.4 (seed 2026)")
    ap.add_argument("--mode", default="einsum", choices=["einsum", "tensordot"])
    args = ap.parse_args()
    dt = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}[args.dtype]
    inputs, steps = load(args.file)
    v = 0.5 ** 0.4
    rng = np.random.default_rng(2026)
    arrays = []
    for ls in inputs:
        shape = (2,) * len(ls)
        if args.random:
            arrays.append((v * rng.uniform(0.9, 1.1, size=shape)).astype(dt))
        else:
            arrays.append(np.full(shape, v, dtype=dt))
    times = []
    for r in range(args.runs):
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = contract(inputs, steps, arrays, args.mode)
        t1 = time.perf_counter()
        c1 = time.process_time()
        times.append(t1 - t0)
        print(f"run {r}: {t1 - t0:.3f} s (cpu {c1 - c0:.3f} s) result {complex(res).real!r}", flush=True)
    print(f"numpy {np.__version__} {args.mode} {args.dtype}: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s, max {max(times):.3f} s over {args.runs} runs")


if __name__ == "__main__":
    sys.exit(main())
