"""The JAX peer: one jax.jit of tnrt's pairwise steps, one jnp.einsum per step.

Each step is an einsum over its own letters (labels renumbered per step, at most 52), in the
problem's order, with the problem's output labels for every intermediate; XLA then compiles the
whole tree as one program (it may fuse, reorder layouts and pick its own kernels). Inputs are
tnrt's fills bit for bit, built on the host and put on the device before compiling.

--precision highest sets jax_default_matmul_precision to "highest" (and each einsum's precision):
full f32. --precision default leaves JAX's default, which on NVIDIA GPUs lets f32 dot products use
TF32; the report's verification shows the error that costs. Compilation (trace, lower, compile)
runs in a worker thread and is timed apart; past --compile-timeout seconds the peer reports
not_supported ("compile exceeded") and exits 2 (networks of hundreds of steps can take minutes to
compile). Each timed run: clock,
call, block_until_ready(), clock. Example:

    python3 bench/peers/jax_tree.py data/tensornetwork_permutation_optimized.json --dtype f32 \
        --warmups 3 --runs 10 --device cuda --precision highest --json out.json

Writes one JSON object ("tool": "jax", torch_tree.py's keys) to stdout or --json FILE; exits 0
when it ran, 2 when not supported (no JAX, no such device, compile too long), 1 on failure.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def subscripts(a: list[int], b: list[int] | None, o: list[int]) -> str:
    def word(ls: list[int]) -> str:
        return "".join(LETTERS[l] for l in ls)
    return f"{word(a)}->{word(o)}" if b is None else f"{word(a)},{word(b)}->{word(o)}"


def one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


def finish(report: dict, args, status: str, error: str, rc: int) -> int:
    report.update(status=status, error=error, verified=None)
    common.emit(report, args.json_out)
    common.progress(f"jax_tree: {status}: {error}")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    ap.add_argument("--precision", choices=["highest", "default"], default="highest",
                    help="matmul precision: highest (full f32) or JAX's default (TF32 on NVIDIA GPUs)")
    ap.add_argument("--compile-timeout", type=float, default=120.0, metavar="S",
                    help="give up (not_supported) when jit compilation takes longer (120 s)")
    args = ap.parse_args(argv)

    problem = common.problem_from_args(args)
    report = common.base_report("jax", args, problem)
    report["mode"] = "jit"
    report["counters"] = {}
    try:
        import jax
        import jax.numpy as jnp
    except Exception as exc:
        return finish(report, args, "not_supported", f"jax not importable: {one_line(exc)}", 2)
    report["versions"]["jax"] = jax.__version__
    try:
        import jaxlib
        report["versions"]["jaxlib"] = jaxlib.__version__
    except Exception:
        pass
    dtype = common.canonical_dtype(args.dtype)
    if dtype in ("f64", "c128"):
        jax.config.update("jax_enable_x64", True)
    if args.precision == "highest":
        jax.config.update("jax_default_matmul_precision", "highest")
    platform = "cpu" if args.device == "cpu" else "gpu"
    index = int(args.device.split(":", 1)[1]) if ":" in args.device else 0
    try:
        devices = jax.devices(platform)
        device = devices[index]
    except Exception as exc:
        return finish(report, args, "not_supported", f"no JAX {platform} device {index}: {one_line(exc)}", 2)
    try:
        return run(jax, jnp, device, args, problem, report)
    except Exception as exc:
        return finish(report, args, "failed", one_line(exc), 1)


def compile_with_timeout(jax, fn, arrays, timeout_s: float):
    """(compiled, trace+lower ms, compile ms), or None when it ran past timeout_s (the thread is
    left behind: the caller reports and exits)."""
    box: dict = {}

    def work():
        try:
            t0 = time.perf_counter()
            lowered = jax.jit(fn).lower(*arrays)
            t1 = time.perf_counter()
            box["compiled"] = lowered.compile()
            box["times"] = ((t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3)
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    th = threading.Thread(target=work, name="jax-compile", daemon=True)
    th.start()
    th.join(timeout_s)
    if th.is_alive():
        return None
    if "error" in box:
        raise box["error"]
    return box["compiled"], box["times"][0], box["times"][1]


def run(jax, jnp, device, args, problem: common.Problem, report: dict) -> int:
    import numpy as np
    dtype = common.canonical_dtype(args.dtype)
    if device.platform != "cpu":
        report["gpu"] = {"name": getattr(device, "device_kind", str(device))}
        stats = _memory_stats(device)
        if stats.get("bytes_limit"):
            report["gpu"]["memory_bytes"] = stats.get("bytes_limit")
    precision = jax.lax.Precision.HIGHEST if args.precision == "highest" else None
    report["settings"] = {
        "precision": args.precision,
        "jax_default_matmul_precision": jax.config.jax_default_matmul_precision,
        "x64": bool(jax.config.jax_enable_x64),
        "platform": device.platform,
        "XLA_PYTHON_CLIENT_PREALLOCATE": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", ""),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
        "note": "one jit over the problem's steps (jnp.einsum each); XLA may fuse and re-layout"}

    host = common.make_inputs(problem, dtype, common.fill_from_args(args))
    arrays = [jax.device_put(a, device) for a in host]
    del host
    for a in arrays:
        a.block_until_ready()
    report["counters"]["input_bytes"] = sum(int(a.nbytes) for a in arrays)
    steps = [(lhs, rhs, me, subscripts(a, b, o)) for lhs, rhs, me, a, b, o in common.schedule(problem)]
    rid = problem.result_id()

    def tree(*xs):
        ops = list(xs) + [None] * len(steps)
        for lhs, rhs, me, sub in steps:
            if rhs < 0:
                ops[me] = jnp.einsum(sub, ops[lhs], precision=precision)
            else:
                ops[me] = jnp.einsum(sub, ops[lhs], ops[rhs], precision=precision)
        return ops[rid]

    got = compile_with_timeout(jax, tree, arrays, args.compile_timeout)
    if got is None:
        report["compile_timeout_s"] = args.compile_timeout
        finish(report, args, "not_supported", f"compile exceeded {args.compile_timeout:g} s", 2)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)  # the compile thread cannot be stopped; leave without waiting for it
    compiled, lower_ms, compile_ms = got
    report["compile_ms"] = lower_ms + compile_ms
    report["setup_ms"] = {"trace_lower": lower_ms, "compile": compile_ms}

    out = None
    times: list[float] = []
    for i in range(args.warmups + args.runs):
        out = None
        t0 = time.perf_counter()
        out = compiled(*arrays)
        out.block_until_ready()
        dt = (time.perf_counter() - t0) * 1e3
        if i >= args.warmups:
            times.append(dt)
    report.update(common.timing_stats(times))
    counters = report["counters"]
    try:
        ma = compiled.memory_analysis()
        if ma is not None:
            counters.update(temp_bytes=int(ma.temp_size_in_bytes), argument_bytes=int(ma.argument_size_in_bytes),
                            output_bytes=int(ma.output_size_in_bytes))
    except Exception:
        pass
    stats = _memory_stats(device)
    if "peak_bytes_in_use" in stats:
        counters["peak_device_bytes"] = int(stats["peak_bytes_in_use"])
    return common.finish_ok(report, args, problem, common.describe_result(np.asarray(out)))


def _memory_stats(device) -> dict:
    try:
        return device.memory_stats() or {}
    except Exception:
        return {}


if __name__ == "__main__":
    sys.exit(main())
