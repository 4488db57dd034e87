"""The CuPy peer: cupy.einsum over the same contraction tree as tnrt, one call per step.

Same schedule, inputs, timing and verification as torch_tree.py: inputs uploaded before timing;
each timed run is device synchronize, clock, the whole tree, device synchronize, clock. CuPy routes
einsum through cuTENSOR only when CUPY_ACCELERATORS names cutensor and cuTENSOR is importable; the
report records both (the default is CuPy's own kernels and cuBLAS).

Peak device memory is sampled in one extra, untimed run after the timed ones (CuPy's pool keeps no
high-water mark). Writes one JSON object ("tool": "cupy") to stdout or --json FILE.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def subscripts(a: list[int], b: list[int] | None, o: list[int]) -> str:
    def word(ls: list[int]) -> str:
        return "".join(LETTERS[l] for l in ls)
    lhs = word(a) if b is None else f"{word(a)},{word(b)}"
    return f"{lhs}->{word(o)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    args = ap.parse_args(argv)
    problem = common.problem_from_args(args)
    report = common.base_report("cupy", args, problem)
    report["mode"] = "eager"
    report["counters"] = {}
    try:
        import cupy
    except ImportError as exc:
        report.update(status="failed", error=f"cupy not importable: {exc}", verified=None)
        common.emit(report, args.json_out)
        return 1
    try:
        return run(cupy, args, problem, report)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"
        report.update(status="failed", error=msg[:2000], verified=None)
        common.emit(report, args.json_out)
        common.progress(f"cupy_tree: {msg[:500]}")
        return 1


def cutensor_importable() -> bool:
    try:
        from cupy_backends.cuda.libs import cutensor  # noqa: F401,PLC0415
        return True
    except Exception:
        return False


def run(cupy, args, problem: common.Problem, report: dict) -> int:
    if args.device == "cpu":
        report.update(status="not_supported", verified=None, error="the CuPy peer needs a CUDA device")
        common.emit(report, args.json_out)
        return 2
    dev_id = int(args.device.split(":", 1)[1]) if ":" in args.device else 0
    device = cupy.cuda.Device(dev_id)
    device.use()
    props = cupy.cuda.runtime.getDeviceProperties(dev_id)
    name = props.get("name", b"")
    report["gpu"] = {"name": name.decode() if isinstance(name, bytes) else str(name),
                     "memory_bytes": props.get("totalGlobalMem")}
    report["versions"].update(cupy=cupy.__version__,
                              cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                              cuda_driver=cupy.cuda.runtime.driverGetVersion())
    report["settings"] = {"CUPY_ACCELERATORS": os.environ.get("CUPY_ACCELERATORS", ""),
                          "cutensor_importable": cutensor_importable()}

    host = common.make_inputs(problem, common.canonical_dtype(args.dtype), common.fill_from_args(args))
    inputs = [cupy.asarray(a) for a in host]
    del host
    device.synchronize()
    input_bytes = sum(int(x.nbytes) for x in inputs)

    steps = [(lhs, rhs, me, subscripts(a, b, o)) for lhs, rhs, me, a, b, o in common.schedule(problem)]
    n_in = problem.n_inputs
    rid = problem.result_id()
    pool = cupy.get_default_memory_pool()

    def contract(sample=None):
        ops = list(inputs) + [None] * len(steps)
        for lhs, rhs, me, sub in steps:
            ops[me] = cupy.einsum(sub, ops[lhs]) if rhs < 0 else cupy.einsum(sub, ops[lhs], ops[rhs])
            if lhs >= n_in:
                ops[lhs] = None
            if rhs >= n_in:
                ops[rhs] = None
            if sample is not None:
                sample.append(pool.used_bytes())
        return ops[rid]

    out = None
    times: list[float] = []
    for i in range(args.warmups + args.runs):
        device.synchronize()
        t0 = time.perf_counter()
        out = contract()
        device.synchronize()
        dt = (time.perf_counter() - t0) * 1e3
        if i >= args.warmups:
            times.append(dt)
    report.update(common.timing_stats(times))
    result = common.describe_result(cupy.asnumpy(out))
    del out
    sample: list[int] = []
    contract(sample)  # untimed: sample the pool after every step
    device.synchronize()
    report["counters"] = {"input_bytes": input_bytes,
                          "peak_device_bytes_sampled": max(sample) if sample else input_bytes,
                          "pool_total_bytes": int(pool.total_bytes())}
    return common.finish_ok(report, args, problem, result)


if __name__ == "__main__":
    sys.exit(main())
