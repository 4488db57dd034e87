"""The cuTensorNet peer: cuquantum.tensornet.Network over the same pairwise path as tnrt.

The network is given in interleaved form with the problem's global integer labels (no 52-letter
limit) and the problem's steps as a linear (numpy.einsum_path) path; cuTensorNet then chooses each
intermediate's mode order and kernels itself and sums a label as soon as no other operand needs it
(tnrt's rule too). Unary steps of the problem have no counterpart in a pairwise path: their sums
fold into the next contraction. A path given this way is never sliced.

Inputs are built on the host (tnrt's fills, bit for bit) and uploaded as torch (default) or CuPy
device arrays before any timing. Then contract_path (the given path, or with --own-path
cuTensorNet's hyper-optimiser, timed and reported apart), autotune (--autotune N iterations,
0: off), and warmups + runs of contract(): device synchronize, clock, contract(), device
synchronize, clock. Example:

    python3 bench/peers/cutensornet_tree.py data/tensornetwork_permutation_optimized.json \
        --dtype f32 --warmups 3 --runs 10 --device cuda --autotune 3 --json out.json

Writes one JSON object ("tool": "cutensornet", torch_tree.py's keys) to stdout or --json FILE;
exits 0 when it ran, 2 when not supported (no cuquantum, no GPU), 1 on failure.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

DTYPE_NAME = {"f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}


def pairwise_paths(problem: common.Problem) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The problem's pairwise steps as (ssa path, linear path). A unary step renames its operand
    (its sums fold into the next pairwise contraction): in the ssa path it keeps the operand's id,
    in the linear path its position."""
    n = problem.n_inputs
    ssa_of: dict[int, int] = {i: i for i in range(n)}
    live = list(range(n))  # linear positions -> problem operand ids
    ssa, linear = [], []
    nxt = n
    for i, s in enumerate(problem.steps):
        me = n + i
        if s.rhs < 0:
            ssa_of[me] = ssa_of[s.lhs]
            live[live.index(s.lhs)] = me
            continue
        ssa.append((ssa_of[s.lhs], ssa_of[s.rhs]))
        ssa_of[me] = nxt
        nxt += 1
        a, b = live.index(s.lhs), live.index(s.rhs)
        linear.append((a, b))
        live = [x for k, x in enumerate(live) if k not in (a, b)] + [me]
    return ssa, linear


def one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


def finish(report: dict, args, status: str, error: str, rc: int) -> int:
    report.update(status=status, error=error, verified=None)
    common.emit(report, args.json_out)
    common.progress(f"cutensornet_tree: {status}: {error}")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    ap.add_argument("--package", choices=["torch", "cupy"], default="torch",
                    help="device arrays handed to cuTensorNet (torch: its caching allocator, peak memory known)")
    ap.add_argument("--autotune", type=int, default=3, metavar="N", help="Network.autotune iterations (0: off)")
    ap.add_argument("--compute-type", choices=["default", "tf32", "3xtf32"], default="default",
                    help="f32/c64 only: cuTensorNet's compute type (default: full f32)")
    ap.add_argument("--own-path", action="store_true", help="let cuTensorNet find the path (and slicing)")
    ap.add_argument("--samples", type=int, default=8, help="--own-path: hyper-optimiser samples")
    ap.add_argument("--threads", type=int, help="--own-path: hyper-optimiser threads")
    ap.add_argument("--path-seed", type=int, default=0, help="--own-path: optimiser seed")
    ap.add_argument("--memory-limit", default="80%", help="NetworkOptions.memory_limit")
    ap.add_argument("--write-path", metavar="FILE", help="write the path contract_path returned (linear, json) there, "
                    "for tnrt's --path-file")
    args = ap.parse_args(argv)

    problem = common.problem_from_args(args)
    report = common.base_report("cutensornet", args, problem)
    report["mode"] = "own_path" if args.own_path else "given_path"
    report["counters"] = {}
    if args.device == "cpu":
        return finish(report, args, "not_supported", "the cuTensorNet peer needs a CUDA device", 2)
    try:
        import cuquantum
        from cuquantum import tensornet
    except Exception as exc:  # ImportError, or a library cuda.pathfinder cannot find
        return finish(report, args, "not_supported", f"cuquantum.tensornet not importable: {one_line(exc)}", 2)
    report["versions"]["cuquantum"] = cuquantum.__version__
    try:
        from cuquantum.bindings import cutensornet as cutn
        v = cutn.get_version()
        report["versions"]["cutensornet"] = f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    except Exception as exc:
        return finish(report, args, "not_supported", f"libcutensornet not loadable: {one_line(exc)}", 2)
    try:
        return run(cuquantum, tensornet, args, problem, report)
    except Exception as exc:  # the harness reads the object; one line says what failed
        msg = one_line(exc)
        if "no gpu" in msg.lower() or "no cuda-capable" in msg.lower() or "CUDA_ERROR_NO_DEVICE" in msg:
            return finish(report, args, "not_supported", msg, 2)
        return finish(report, args, "failed", msg, 1)


def device_setup(args, report: dict):
    """(package module, device index, synchronize(), to_device(ndarray), to_host(array), peak())."""
    dev = int(args.device.split(":", 1)[1]) if ":" in args.device else 0
    if args.package == "torch":
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no GPU: CUDA not available to torch")
        torch.cuda.set_device(dev)
        p = torch.cuda.get_device_properties(dev)
        report["gpu"] = {"name": p.name, "memory_bytes": p.total_memory, "capability": f"{p.major}.{p.minor}"}
        report["versions"].update(torch=torch.__version__, cuda=torch.version.cuda)
        return (lambda: torch.cuda.synchronize(dev),
                lambda a: torch.from_numpy(a).to(f"cuda:{dev}"),
                lambda t: t.detach().cpu().numpy(),
                lambda: torch.cuda.reset_peak_memory_stats(dev),
                lambda: {"peak_device_bytes": int(torch.cuda.max_memory_allocated(dev)),
                         "peak_reserved_bytes": int(torch.cuda.max_memory_reserved(dev))})
    import cupy
    cupy.cuda.Device(dev).use()
    p = cupy.cuda.runtime.getDeviceProperties(dev)
    name = p.get("name", b"")
    report["gpu"] = {"name": name.decode() if isinstance(name, bytes) else str(name),
                     "memory_bytes": p.get("totalGlobalMem")}
    report["versions"].update(cupy=cupy.__version__, cuda_runtime=cupy.cuda.runtime.runtimeGetVersion())
    pool = cupy.get_default_memory_pool()
    return (lambda: cupy.cuda.Device(dev).synchronize(), cupy.asarray, cupy.asnumpy, lambda: None,
            lambda: {"pool_total_bytes": int(pool.total_bytes())})  # CuPy's pool keeps no high-water mark


def run(cuquantum, tensornet, args, problem: common.Problem, report: dict) -> int:
    dtype = common.canonical_dtype(args.dtype)
    sync, to_dev, to_host, reset_peak, peak = device_setup(args, report)
    host = common.make_inputs(problem, dtype, common.fill_from_args(args))
    inputs = [to_dev(a) for a in host]
    del host
    sync()
    input_bytes = sum(int(a.nbytes) for a in inputs)

    settings = {"package": args.package, "autotune_iterations": args.autotune, "own_path": args.own_path,
                "compute_type": args.compute_type, "memory_limit": args.memory_limit, "blocking": True,
                "labels": "interleaved, the problem's integer labels",
                "note": "cuTensorNet orders each intermediate's modes itself; unary steps fold into the next pair"}
    opts = {"memory_limit": args.memory_limit, "device_id": int(args.device.split(":")[1]) if ":" in args.device else 0}
    if args.compute_type != "default":
        if dtype not in ("f32", "c64"):
            raise ValueError(f"--compute-type {args.compute_type} applies to f32/c64, not {dtype}")
        opts["compute_type"] = {"tf32": cuquantum.ComputeType.COMPUTE_TF32,
                                "3xtf32": cuquantum.ComputeType.COMPUTE_3XTF32}[args.compute_type]
    interleaved = []
    for t, labels in zip(inputs, problem.inputs):
        interleaved += [t, list(labels)]
    interleaved.append(list(problem.output))
    ssa, linear = pairwise_paths(problem)
    reset_peak()
    t0 = time.perf_counter()
    net = tensornet.Network(*interleaved, options=tensornet.NetworkOptions(**opts))
    try:
        create_ms = (time.perf_counter() - t0) * 1e3
        if args.own_path:
            optimize = {"samples": args.samples, "seed": args.path_seed}
            if args.threads:
                optimize["threads"] = args.threads
            settings["optimize"] = optimize
        else:
            optimize = {"path": linear}
            settings["path"] = f"the problem's {len(linear)} pairwise steps, linear form"
        t0 = time.perf_counter()
        path, info = net.contract_path(optimize=optimize)
        path_ms = (time.perf_counter() - t0) * 1e3
        if not args.own_path and [sorted(map(int, p)) for p in path] != [sorted(p) for p in linear]:
            raise RuntimeError("cuTensorNet reports a path other than the one given")
        if args.write_path:
            with open(args.write_path, "w", encoding="utf-8") as f:
                json.dump([[int(x) for x in p] for p in path], f)
        report["path_finding"] = {"ms": path_ms, "flops": float(info.opt_cost),
                                  "largest_intermediate_elements": float(info.largest_intermediate),
                                  "num_slices": int(info.num_slices), "contractions": len(path),
                                  "finder": "cutensornet" if args.own_path else "given"}
        autotune_ms = None
        if args.autotune > 0:
            t0 = time.perf_counter()
            net.autotune(iterations=args.autotune)
            sync()
            autotune_ms = (time.perf_counter() - t0) * 1e3
        times: list[float] = []
        out = None
        for i in range(args.warmups + args.runs):
            out = None  # contract() hands out a new result tensor each call
            sync()
            t0 = time.perf_counter()
            out = net.contract()
            sync()
            dt = (time.perf_counter() - t0) * 1e3
            if i >= args.warmups:
                times.append(dt)
        if args.kernels:
            common.profile_kernels(net.contract, sync, args.kernels)
        counters = {"input_bytes": input_bytes,
                    "workspace_scratch_bytes": getattr(net, "workspace_scratch_size", None),
                    "workspace_cache_bytes": getattr(net, "workspace_cache_size", None)}
        counters.update(peak())
        result = common.describe_result(to_host(out))
    finally:
        net.free()
    report.update(common.timing_stats(times))
    report["compile_ms"] = create_ms + path_ms + (autotune_ms or 0.0)
    report["setup_ms"] = {"network": create_ms, "contract_path": path_ms, "autotune": autotune_ms}
    report["settings"] = settings
    report["counters"] = counters
    return common.finish_ok(report, args, problem, result)


if __name__ == "__main__":
    sys.exit(main())
