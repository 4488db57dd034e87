"""cotengra's whole-network contractors on one tree, on the GPU, in one sitting: tnrt
(implementation="tnrt", tnrt.cotengra.TnrtContractor), NVIDIA cuTensorNet (implementation=
"cuquantum", cotengra's CuQuantumContractor; and "cuquantum-direct", the same Network calls made
here, see CuQuantumDirect) and cotengra's default pairwise torch execution (implementation="auto"
on torch arrays).

  python3 bench/python/cotengra_bench.py [--qubits 36] [--depth 36] [--seed 7] [--runs 10] [--json FILE]

The network: one amplitude <b|C|0> of a random 1D brickwork circuit (U3 layers, CZ pairs) built by
quimb, simplified, complex64, as torch CUDA arrays; the tree: cotengra's HyperOptimizer (greedy,
32 repeats, seeded), the same tree object for every implementation. Each figure is the median wall
time of a call that ends with torch.cuda.synchronize(), after 2 warm-up calls (the first builds and,
for tnrt, compiles the contractor). Every result is compared with the first implementation's.
"""
import argparse
import json
import statistics
import sys
import time

import cotengra as ctg
import numpy as np
import quimb.tensor as qtn
import torch

import tnrt
import tnrt.cotengra

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "examples"))
from quantum_circuit_amplitude import random_circuit  # noqa: E402  (the example's circuit)


def timed(fn, runs):
    out = None
    for _ in range(2):
        out = fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), max(times), out


class CuQuantumDirect:
    """What cotengra's CuQuantumContractor does (one cuquantum.tensornet.Network built on the first
    call with the tree's path, autotuned 3 iterations, then reset_operands and contract), with the
    path given as an OptimizerOptions object: cotengra 0.8.3 passes optimize={"path": ...}, which
    cuquantum-python 26.9 refuses ("AssertionError: Unrecognized options.", measured on the H200,
    2026-12-02)."""

    def __init__(self, tree):
        self.tree, self.network = tree, None

    def __call__(self, *arrays):
        from cuquantum import tensornet

        if self.network is None:
            self.network = tensornet.Network(self.tree.get_eq(), *arrays)
            self.network.contract_path(optimize=tensornet.OptimizerOptions(path=list(self.tree.get_path())))
            self.network.autotune(iterations=3)
        else:
            self.network.reset_operands(*arrays)
        return self.network.contract()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qubits", type=int, default=36)
    ap.add_argument("--depth", type=int, default=36)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()

    circ = random_circuit(args.qubits, args.depth, args.seed)
    bits = "".join(np.random.default_rng(args.seed).choice(["0", "1"], args.qubits))
    tn = circ.amplitude_tn(bits)
    tn.full_simplify_(output_inds=(), seq="ADCR")
    arrays = [torch.as_tensor(np.asarray(t.data, dtype=np.complex64), device="cuda") for t in tn.tensors]
    # quimb's index names as single opt_einsum symbols: cotengra builds equations from them
    symbol = {}
    for t in tn.tensors:
        for ix in t.inds:
            symbol.setdefault(ix, ctg.get_symbol(len(symbol)))
    inputs = [tuple(symbol[ix] for ix in t.inds) for t in tn.tensors]
    size_dict = {symbol[ix]: d for t in tn.tensors for ix, d in zip(t.inds, t.shape)}
    opt = ctg.HyperOptimizer(methods=["greedy"], max_repeats=32, progbar=False, seed=args.seed)
    tree = opt.search(inputs, (), size_dict)
    info = {"qubits": args.qubits, "depth": args.depth, "tensors": len(arrays), "log2_flops": float(np.log2(tree.contraction_cost())),
            "log2_width": float(tree.contraction_width()), "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cotengra": ctg.__version__}
    print(f"{len(arrays)} tensors, log2 flops {info['log2_flops']:.2f}, width {info['log2_width']:.1f} (log2 elements)")
    tnrt.register_cotengra()
    results, ref = {}, None
    cq_direct = CuQuantumDirect(tree)
    for impl in ["tnrt", "cuquantum", "cuquantum-direct", "auto"]:
        try:
            if impl == "cuquantum-direct":
                fn = lambda: cq_direct(*arrays)  # noqa: E731
            else:
                fn = lambda: tree.contract(arrays, implementation=impl)  # noqa: E731
            med, lo, hi, out = timed(fn, args.runs)
            val = complex(out.item() if hasattr(out, "item") else out)
            ref = val if ref is None else ref
            err = abs(val - ref) / max(abs(ref), 1e-300)
            results[impl] = {"median_ms": med, "min_ms": lo, "max_ms": hi, "value": [val.real, val.imag], "rel_diff": err}
            print(f"{impl:10s} median {med:8.3f} ms (min {lo:.3f}, max {hi:.3f}); value {val:.8e}; rel diff {err:.1e}")
        except Exception as e:  # a peer that cannot run here is reported, not fatal
            results[impl] = {"error": f"{type(e).__name__}: {e}"}
            print(f"{impl:10s} failed: {type(e).__name__}: {e}")
    info["results"] = results
    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
