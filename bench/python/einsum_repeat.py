"""Host time of a repeated einsum with a named optimizer: a 14-operand matrix chain of 8x8 float32 on
the CPU engine, against the time of its path search alone; then a 2x2 product's host time per call
and the parts of it spent on the path and on preparing the operands.

tnrt.einsum searches a path for a named optimizer ("auto" here) once per expression, shapes, dtype
and optimizer and reuses it; before 2026-12-06 every call searched again.

    PYTHONPATH=build/python python3 bench/python/einsum_repeat.py
"""
import string
import time

import numpy as np

import tnrt
from tnrt import _core, _tnrt

N = 14
L = string.ascii_letters
EQ = ",".join(L[i] + L[i + 1] for i in range(N)) + "->" + L[0] + L[N]


def main():
    arrays = [np.random.default_rng(i).random((8, 8), dtype=np.float32) for i in range(N)]
    t = time.perf_counter()
    _tnrt.linear_path(EQ, [[8, 8]] * N, "auto", "float32")
    search_ms = (time.perf_counter() - t) * 1e3
    tnrt.einsum(EQ, *arrays)  # the first call: search, problem, plans
    reps = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(20):
            tnrt.einsum(EQ, *arrays)
        reps.append((time.perf_counter() - t) / 20 * 1e3)
    print(f"{EQ}: path search {search_ms:.2f} ms; repeated einsum median {sorted(reps)[2]:.3f} ms a call "
          f"(5 x 20 calls; min {min(reps):.3f}, max {max(reps):.3f})")
    # A 2x2 product: the host time of a whole call, of its path (resolve_path) and of preparing its
    # operands in Python (_Prepared: expression, arrays, dtypes), each the best of 5 x 3000 calls.
    a, b = (np.ones((2, 2), np.float32) for _ in range(2))
    whole = best_us(lambda: tnrt.einsum("ij,jk->ik", a, b))
    path = best_us(lambda: _core.resolve_path("auto", "ij,jk->ik", ((2, 2), (2, 2)), "float32"))
    prep = best_us(lambda: _core._Prepared("ij,jk->ik", (a, b)))
    print(f"ij,jk->ik (2x2): einsum {whole:.1f} us a call; of it resolve_path {path:.1f} us, _Prepared {prep:.1f} us")


def best_us(f, n=3000, rounds=5, after_round=None):
    """The best of `rounds` rounds of n calls, in us a call, after 100 warm-up calls; after_round runs
    between rounds, untimed (api_bench.py: a synchronize, so that GPU work queues up within a round only)."""
    for _ in range(100):
        f()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
        if after_round is not None:
            after_round()
    return best


if __name__ == "__main__":
    main()
