"""tnrt from Python on the GPU, beside the same contraction's C++ figure and torch.

  python3 bench/python/api_bench.py [network.json] [--runs N] [--json FILE]

1. The reference network (a TNB tree JSON, f32, every element 0.5**0.4) as torch CUDA tensors through
   tnrt.Network: compile once, then contract() N times with out= on a side stream; the median of
   the per-call times (CUDA events around each call), and the result.
2. The host overhead of tnrt.einsum on a 2x2 matrix product beside torch.einsum's (median of many
   calls, synchronized every call: each figure is enqueue + the tiny kernels), and the host time of
   its parts, each timed alone without a synchronize per call (einsum_2x2_parts_us).
Prints one line per figure and writes them to --json.
"""
import argparse
import json
import statistics
import sys
import time

import torch

import einsum_repeat  # bench/python, beside this script: its best_us
import tnrt


def cuda_ms(fn, runs, stream):
    times = []
    for i in range(runs + 3):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record(stream)
        fn()
        b.record(stream)
        b.synchronize()
        if i >= 3:
            times.append(a.elapsed_time(b))
    return statistics.median(times), min(times), max(times)


def host_us(fn, runs):
    times = []
    for i in range(runs + 20):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        if i >= 20:
            times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def best_us(fn):
    return einsum_repeat.best_us(fn, n=300, after_round=torch.cuda.synchronize)


def host_parts(a, b):
    """Where a 2x2 tnrt.einsum's host time goes: the whole call and each piece it does, timed alone
    (enqueue only: a synchronize after each round, none per call)."""
    from tnrt import _arrays, _core
    eq = "ij,jk->ik"
    prep = _core._Prepared(eq, (a, b))
    problem = prep.build("auto")
    s = _arrays.stream_handle(None, prep.framework, prep.ordinal)
    ctx = _core.context(prep.ordinal)
    out = torch.empty(2, 2, device="cuda")
    caps = lambda: [_arrays.import_cuda(x, s, True) for x in prep.arrays]  # noqa: E731 - as einsum does (stream=None)
    caps_handshake = lambda: [_arrays.import_cuda(x, s) for x in prep.arrays]  # noqa: E731 - __dlpack__(stream=s)
    return {
        "einsum": best_us(lambda: tnrt.einsum(eq, a, b)),
        "torch.einsum": best_us(lambda: torch.einsum(eq, a, b)),
        "prepare": best_us(lambda: _core._Prepared(eq, (a, b))),
        "path and problem": best_us(lambda: _core._Prepared(eq, (a, b)).build("auto")),
        "stream": best_us(lambda: _arrays.stream_handle(None, prep.framework, prep.ordinal)),
        "out alloc": best_us(lambda: _arrays.empty_like_framework(prep.framework, prep.arrays[0], problem.output_shape, prep.ordinal)),
        "dlpack x3": best_us(lambda: (caps(), _arrays.import_cuda(out, s, True))),
        "dlpack x3 through __dlpack__(stream=)": best_us(lambda: (caps_handshake(), _arrays.import_cuda(out, s))),
        "contract_into (C++, dlpack included)": best_us(lambda: ctx.contract_into(problem, caps(), _arrays.import_cuda(out, s, True), s)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("network", nargs="?", default="data/tensornetwork_permutation_optimized.json")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}

    problem = tnrt.load(args.network)
    fill = 0.5 ** 0.4
    ops = [torch.full(tuple(s), fill, device="cuda", dtype=torch.float32) for s in problem.input_shapes]
    result = torch.empty(tuple(problem.output_shape), device="cuda", dtype=torch.float32)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with tnrt.Network(problem, *ops) as net:
        t0 = time.perf_counter()
        net.compile()
        out["compile_ms"] = (time.perf_counter() - t0) * 1e3
        med, lo, hi = cuda_ms(lambda: net.contract(stream=side, out=result), args.runs, side)
        out["network_contract_ms"] = {"median": med, "min": lo, "max": hi}
        side.synchronize()
        out["result"] = float(result.reshape(-1)[0].item()) if result.numel() else None
        print(f"tnrt.Network.contract (compiled, torch tensors, side stream): median {med:.3f} ms "
              f"(min {lo:.3f}, max {hi:.3f}) over {args.runs} runs; result {out['result']:.9g}; compile {out['compile_ms']:.0f} ms")

    a = torch.rand(2, 2, device="cuda")
    b = torch.rand(2, 2, device="cuda")
    torch.testing.assert_close(tnrt.einsum("ij,jk->ik", a, b), torch.einsum("ij,jk->ik", a, b))
    out["einsum_2x2_us"] = {"tnrt": host_us(lambda: tnrt.einsum("ij,jk->ik", a, b), 500),
                            "torch": host_us(lambda: torch.einsum("ij,jk->ik", a, b), 500)}
    print(f"2x2 einsum, host time per call incl. sync: tnrt {out['einsum_2x2_us']['tnrt']:.1f} us, "
          f"torch {out['einsum_2x2_us']['torch']:.1f} us")
    try:
        out["einsum_2x2_parts_us"] = parts = host_parts(a, b)
        print("2x2 einsum, host time of its parts (best of 5 x 300 calls, no sync): "
              + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()))
    except Exception as e:  # the figures above still land in --json
        print(f"2x2 einsum parts: {type(e).__name__}: {e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
