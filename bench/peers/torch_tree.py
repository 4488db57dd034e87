"""The PyTorch peer: torch.einsum over the same contraction tree as tnrt.

Schedule (TensorNetworkBenchmarks'): post-order over the tree, each internal node one torch.einsum
of its two children with the node's labels (renumbered 0..k-1 per step, as torch's sublist format
takes labels 0..51 only). Inputs are built on the host (constant fill or tnrt's seeded random fill,
the same values bit for bit) and uploaded before timing. Each timed run: torch.cuda.synchronize(),
clock, the whole tree, torch.cuda.synchronize(), clock. Modes:

  (default)       eager: one torch.einsum per step, each intermediate freed once consumed
  --graph         the whole tree captured once into a CUDA graph (torch.cuda.graph); replays timed
  --opt-einsum    one torch.einsum over all inputs with torch.backends.opt_einsum choosing the path;
                  reported as not supported when the network has more than 52 labels

Writes one JSON object (tnrt's report shape, "tool": "torch") to stdout or --json FILE; exits 0 when
it ran (verified or not), 2 when the mode is not supported, 1 on failure (the object says why).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TORCH_DTYPE = {"f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}


def synchronize(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--graph", action="store_true", help="capture the tree into a CUDA graph, time replays")
    g.add_argument("--opt-einsum", action="store_true", help="one einsum over all inputs, opt_einsum's path")
    ap.add_argument("--opt-einsum-strategy", default="auto", help="torch.backends.opt_einsum.strategy")
    ap.add_argument("--allow-tf32", action="store_true", help="allow TF32 matmuls (off: full f32)")
    ap.add_argument("--fuse-modes", action="store_true", help="per step, merge labels adjacent in the same order "
                    "in every operand into one mode (reshape views; the same einsum with fewer modes: the "
                    "reference network's largest step rank falls from 28 to 17)")
    args = ap.parse_args(argv)
    mode = "graph" if args.graph else "opt_einsum" if args.opt_einsum else "eager"
    if args.fuse_modes and args.opt_einsum:
        ap.error("--fuse-modes applies to the per-step schedule, not to --opt-einsum")

    problem = common.problem_from_args(args)
    report = common.base_report("torch", args, problem)
    report["mode"] = mode
    report["counters"] = {}
    try:
        import torch
    except ImportError as exc:
        report.update(status="failed", error=f"torch not importable: {exc}", verified=None)
        common.emit(report, args.json_out)
        return 1
    report["versions"].update(torch=torch.__version__, cuda=getattr(torch.version, "cuda", None))
    try:
        return run(torch, args, problem, report, mode)
    except Exception as exc:  # the harness reads the object; the message names what failed
        msg = f"{type(exc).__name__}: {exc}"
        if "too many" in str(exc) and "dims" in str(exc) and not args.fuse_modes:
            msg += " (torch's kernels take a bounded number of dims; --fuse-modes lowers the rank per step)"
        report.update(status="failed", error=msg[:2000], verified=None)
        common.emit(report, args.json_out)
        common.progress(f"torch_tree: {msg[:500]}")
        return 1


def run(torch, args, problem: common.Problem, report: dict, mode: str) -> int:
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:  # set_device() needs an index
        device = torch.device("cuda", torch.cuda.current_device() if torch.cuda.is_available() else 0)
    dtype_name = common.canonical_dtype(args.dtype)
    tdtype = getattr(torch, TORCH_DTYPE[dtype_name])
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA not available to torch")
        torch.cuda.set_device(device)
        props = torch.cuda.get_device_properties(device)
        report["gpu"] = {"name": props.name, "memory_bytes": props.total_memory,
                         "capability": f"{props.major}.{props.minor}"}
        torch.backends.cuda.matmul.allow_tf32 = bool(args.allow_tf32)
        report["versions"]["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        report["settings"] = {"allow_tf32": bool(args.allow_tf32)}

    if mode == "opt_einsum":
        n_labels = len(problem.extents)
        if n_labels > 52:
            report.update(status="not_supported", verified=None,
                          error=f"one einsum over the whole network needs {n_labels} labels; "
                                "torch.einsum takes at most 52 (letters a-z, A-Z)")
            common.emit(report, args.json_out)
            return 2
        if not torch.backends.opt_einsum.is_available():
            report.update(status="not_supported", verified=None, error="opt_einsum not importable by torch")
            common.emit(report, args.json_out)
            return 2
        torch.backends.opt_einsum.enabled = True
        torch.backends.opt_einsum.strategy = args.opt_einsum_strategy
        report["settings"] = dict(report.get("settings", {}), opt_einsum_strategy=args.opt_einsum_strategy)

    # inputs: built on the host, uploaded before any timing
    host = common.make_inputs(problem, dtype_name, common.fill_from_args(args))
    inputs = [torch.from_numpy(a).to(device=device, dtype=tdtype) for a in host]
    del host
    synchronize(torch, device)
    input_bytes = sum(t.numel() * t.element_size() for t in inputs)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    if mode == "opt_einsum":
        interleaved = []
        for t, labels in zip(inputs, problem.inputs):
            interleaved += [t, list(labels)]
        out_labels = list(problem.output)

        def contract():
            return torch.einsum(*interleaved, out_labels)
    elif args.fuse_modes:
        labels = problem.operand_labels()
        ext = dict(enumerate(problem.extents))
        steps = []
        for i, s in enumerate(problem.steps):
            f = common.fuse_modes(labels[s.lhs], labels[s.rhs] if s.rhs >= 0 else None, s.out, ext)
            if f is None:  # repeated labels: fall back to the plain step
                a, b, o = common.local_sublists(problem)[i]
                f = (a, b, o, problem.shape(labels[s.lhs]),
                     problem.shape(labels[s.rhs]) if s.rhs >= 0 else None, problem.shape(s.out))
            steps.append((s.lhs, s.rhs, problem.n_inputs + i, f[0], f[1], f[2], f[3], f[4], problem.shape(s.out)))
        report["settings"] = dict(report.get("settings", {}), fuse_modes=True,
                                  max_step_rank=max(max(len(x[3]), len(x[4] or []), len(x[5])) for x in steps))
        n_in = problem.n_inputs
        rid = problem.result_id()

        def contract():
            ops = list(inputs) + [None] * len(steps)
            for lhs, rhs, me, a, b, o, sa, sb, so in steps:
                if rhs >= 0:
                    r = torch.einsum(ops[lhs].reshape(sa), a, ops[rhs].reshape(sb), b, o)
                else:
                    r = torch.einsum(ops[lhs].reshape(sa), a, o)
                ops[me] = r.reshape(so)
                if lhs >= n_in:
                    ops[lhs] = None
                if rhs >= n_in:
                    ops[rhs] = None
            return ops[rid]
    else:
        steps = common.schedule(problem)
        n_in = problem.n_inputs
        rid = problem.result_id()

        def contract():
            ops = list(inputs) + [None] * len(steps)
            for lhs, rhs, me, a, b, o in steps:
                if rhs >= 0:
                    ops[me] = torch.einsum(ops[lhs], a, ops[rhs], b, o)
                else:
                    ops[me] = torch.einsum(ops[lhs], a, o)
                if lhs >= n_in:  # free intermediates as soon as they are consumed
                    ops[lhs] = None
                if rhs >= n_in:
                    ops[rhs] = None
            return ops[rid]

    compile_ms = None
    if mode == "graph":
        if device.type != "cuda":
            report.update(status="not_supported", verified=None, error="--graph needs a CUDA device")
            common.emit(report, args.json_out)
            return 2
        # warm up on a side stream before capture (torch's rule), then capture once
        t0 = time.perf_counter()
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(max(1, args.warmups)):
                contract()
        torch.cuda.current_stream(device).wait_stream(side)
        synchronize(torch, device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = contract()
        synchronize(torch, device)
        compile_ms = (time.perf_counter() - t0) * 1e3

        def call():
            graph.replay()
            return static_out
    else:
        call = contract

    out = None
    total = args.warmups + args.runs
    times: list[float] = []
    with torch.inference_mode():
        for i in range(total):
            synchronize(torch, device)
            t0 = time.perf_counter()
            out = call()
            synchronize(torch, device)
            dt = (time.perf_counter() - t0) * 1e3
            if i >= args.warmups:
                times.append(dt)
        if args.kernels:
            common.profile_kernels(call, lambda: synchronize(torch, device), args.kernels)
    report.update(common.timing_stats(times))
    if compile_ms is not None:
        report["compile_ms"] = compile_ms
    counters = {"input_bytes": input_bytes}
    if device.type == "cuda":
        counters["peak_device_bytes"] = int(torch.cuda.max_memory_allocated(device))
        counters["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved(device))
    report["counters"] = counters

    arr = out.detach().to("cpu").numpy()
    return common.finish_ok(report, args, problem, common.describe_result(arr))


if __name__ == "__main__":
    sys.exit(main())
