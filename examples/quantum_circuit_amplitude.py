"""One amplitude <b|C|0...0> of a small random quantum circuit, with quimb building the tensor
network, cotengra finding the contraction tree and tnrt contracting it: on the GPU when torch has
CUDA (and tnrt its CUDA backend), else NumPy arrays on tnrt's CPU engine. Checked against quimb's
own contraction.

    python3 examples/quantum_circuit_amplitude.py [--qubits 12] [--depth 8] [--seed 7]
"""

import argparse
import time

import cotengra as ctg
import numpy as np
import quimb.tensor as qtn

import tnrt
import tnrt.cotengra


def random_circuit(n, depth, seed):
    rng = np.random.default_rng(seed)
    circ = qtn.Circuit(n)
    for layer in range(depth):
        for q in range(n):
            circ.apply_gate("U3", *rng.uniform(0, 2 * np.pi, 3), q)
        for q in range(layer % 2, n - 1, 2):
            circ.apply_gate("CZ", q, q + 1)
    return circ


def use_gpu():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or not tnrt.built_with_cuda or tnrt.unavailable_reason(0):
        return None
    return torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qubits", type=int, default=12)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    circ = random_circuit(args.qubits, args.depth, args.seed)
    bits = "".join(np.random.default_rng(args.seed).choice(["0", "1"], args.qubits))
    tn = circ.amplitude_tn(bits)  # the closed network <bits|C|0>
    tn.full_simplify_(output_inds=(), seq="ADCR")
    opt = ctg.HyperOptimizer(methods=["greedy"], max_repeats=16, progbar=False)

    want = tn.contract(..., output_inds=(), optimize=opt)  # quimb's own contraction (numpy, pairwise)

    tnrt.register_cotengra()  # implementation="tnrt": tnrt.cotengra.TnrtContractor
    torch = use_gpu()
    if torch is not None:
        tn = tn.copy()
        tn.apply_to_arrays(lambda x: torch.as_tensor(x, device="cuda"))
        where = "GPU (torch CUDA arrays)"
    else:
        where = "CPU engine (numpy arrays)"
    t0 = time.perf_counter()
    got = tn.contract(..., output_inds=(), optimize=opt, implementation="tnrt")
    if torch is not None:
        torch.cuda.synchronize()
        got = got.cpu().item()
    dt = time.perf_counter() - t0
    got = complex(got)
    err = abs(got - complex(want)) / max(abs(complex(want)), 1e-300)
    print(f"{args.qubits} qubits, depth {args.depth}, <{bits}|C|0>: {len(tn.tensors)} tensors on {where}")
    print(f"tnrt  {got:.10e}  ({dt * 1e3:.1f} ms including the path and the first call)")
    print(f"quimb {complex(want):.10e}  relative difference {err:.2e}")
    assert err < 1e-8, "tnrt and quimb disagree"


if __name__ == "__main__":
    main()
