"""The cotengra peer: cotengra's own executor, ContractionTree.contract, over tnrt's path.

The tree is built with ContractionTree.from_path from the problem's inputs, output, extents and its
pairwise steps (as an ssa path; each label one opt_einsum symbol) and checked to hold the same
pairs as the problem. cotengra then runs it its own way: each pair as tensordot + transpose, or as
an einsum with per-step letters where tensordot cannot (hyperedges), labels summed as soon as no
other operand needs them, intermediates' mode order its own; unary steps become leaf
preprocessing or fold into the next pair. --implementation picks the pairwise kernels ("auto":
cotengra's choice, i.e. the backend's tensordot/einsum through autoray, cotengra's batched-matmul
ones for numpy); --strip-exponent rescales every intermediate (extra work, reported).

Inputs: tnrt's fills bit for bit, built on the host, moved to the device before timing. Each timed
run: synchronize, clock, tree.contract(arrays, backend=...), synchronize, clock. Example:

    python3 bench/peers/cotengra_tree.py data/tensornetwork_permutation_optimized.json \
        --dtype f32 --warmups 3 --runs 10 --device cuda --backend torch --json out.json
    python3 bench/peers/cotengra_tree.py bench/suites/data/tiny_tree.json --value 0.5 \
        --reference 0.25 --device cpu --backend numpy

Writes one JSON object ("tool": "cotengra", torch_tree.py's keys) to stdout or --json FILE;
exits 0 when it ran, 2 when not supported (library missing, backend/device mismatch), 1 on failure.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from cutensornet_tree import one_line, pairwise_paths  # noqa: E402

TORCH_DTYPE = {"f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}


def finish(report: dict, args, status: str, error: str, rc: int) -> int:
    report.update(status=status, error=error, verified=None)
    common.emit(report, args.json_out)
    common.progress(f"cotengra_tree: {status}: {error}")
    return rc


def build_tree(ctg, problem: common.Problem):
    """(tree, check dict): the problem's pairwise steps as a cotengra ContractionTree."""
    sym = [ctg.get_symbol(i) for i in range(len(problem.extents))]
    inputs = [tuple(sym[l] for l in ix) for ix in problem.inputs]
    output = tuple(sym[l] for l in problem.output)
    size = {sym[l]: int(e) for l, e in enumerate(problem.extents)}
    ssa, _ = pairwise_paths(problem)
    tree = ctg.ContractionTree.from_path(inputs, output, size, ssa_path=ssa, autocomplete=False)
    # the problem's pairs, as leaf sets, with each result's labels
    n = problem.n_inputs
    leaves = [frozenset([i]) for i in range(n)]
    ours = {}
    for s in problem.steps:
        if s.rhs < 0:
            leaves.append(leaves[s.lhs])
            continue
        leaves.append(leaves[s.lhs] | leaves[s.rhs])
        ours[frozenset([leaves[s.lhs], leaves[s.rhs]])] = frozenset(sym[l] for l in s.out)
    theirs = {}
    for p, l, r in tree.traverse():
        key = frozenset([frozenset(tree.get_subgraph(l)), frozenset(tree.get_subgraph(r))])
        theirs[key] = frozenset(tree.get_legs(p))
    same_pairs = set(ours) == set(theirs)
    other_labels = sum(1 for k in ours if k in theirs and ours[k] != theirs[k])
    check = {"same_pairs": same_pairs, "pairs": len(theirs), "problem_pairs": len(ours),
             "pairs_with_other_labels": other_labels, "preprocessed_inputs": len(tree.preprocessing),
             "flops": float(tree.total_flops()), "max_size": float(tree.max_size()),
             "peak_size": float(tree.peak_size())}
    return tree, check


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    ap.add_argument("--backend", choices=["torch", "numpy", "cupy"], default="torch",
                    help="array library cotengra dispatches to (numpy: --device cpu; cupy: cuda; torch: either)")
    ap.add_argument("--implementation", choices=["auto", "autoray", "cotengra"], default="auto",
                    help="pairwise kernels: the backend's tensordot/einsum (autoray) or cotengra's bmm ones")
    ap.add_argument("--strip-exponent", action="store_true", help="rescale each intermediate (cotengra option)")
    ap.add_argument("--prefer-einsum", action="store_true", help="einsum for every pair instead of tensordot")
    ap.add_argument("--allow-tf32", action="store_true", help="torch: allow TF32 matmuls (off: full f32)")
    args = ap.parse_args(argv)

    problem = common.problem_from_args(args)
    report = common.base_report("cotengra", args, problem)
    report["mode"] = "eager"
    report["counters"] = {}
    try:
        import cotengra as ctg
    except Exception as exc:
        return finish(report, args, "not_supported", f"cotengra not importable: {one_line(exc)}", 2)
    report["versions"]["cotengra"] = ctg.__version__
    try:
        import autoray
        report["versions"]["autoray"] = getattr(autoray, "__version__", None)
    except ImportError:
        pass
    on_cpu = args.device == "cpu"
    if (args.backend == "numpy" and not on_cpu) or (args.backend == "cupy" and on_cpu):
        return finish(report, args, "not_supported",
                      f"backend {args.backend} with device {args.device}: numpy runs on the cpu, cupy on cuda", 2)
    try:
        backend = __import__(args.backend)
    except Exception as exc:
        return finish(report, args, "not_supported", f"{args.backend} not importable: {one_line(exc)}", 2)
    try:
        return run(ctg, backend, args, problem, report)
    except Exception as exc:
        return finish(report, args, "failed", one_line(exc), 1)


def run(ctg, xp, args, problem: common.Problem, report: dict) -> int:
    dtype = common.canonical_dtype(args.dtype)
    report["versions"][args.backend] = xp.__version__
    tree, check = build_tree(ctg, problem)
    report["tree"] = check
    if not check["same_pairs"]:
        raise RuntimeError(f"cotengra's tree has other pairs than the problem ({check['pairs']} vs {check['problem_pairs']})")
    settings = {"backend": args.backend, "implementation": args.implementation,
                "strip_exponent": args.strip_exponent, "prefer_einsum": args.prefer_einsum,
                "path": "the problem's pairwise steps (ssa path)",
                "note": "cotengra runs each pair its own way (tensordot+transpose or einsum), sums labels as "
                        "early as possible and orders intermediates itself; unary steps fold into leaves/pairs"}
    host = common.make_inputs(problem, dtype, common.fill_from_args(args))
    counters: dict = {}
    if args.backend == "torch":
        torch = xp
        dev = torch.device(args.device)
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("CUDA not available to torch")
            if dev.index is None:
                dev = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(dev)
            p = torch.cuda.get_device_properties(dev)
            report["gpu"] = {"name": p.name, "memory_bytes": p.total_memory, "capability": f"{p.major}.{p.minor}"}
            torch.backends.cuda.matmul.allow_tf32 = bool(args.allow_tf32)
            settings["allow_tf32"] = bool(args.allow_tf32)
            report["versions"]["cuda"] = torch.version.cuda
        arrays = [torch.from_numpy(a).to(device=dev, dtype=getattr(torch, TORCH_DTYPE[dtype])) for a in host]

        def sync():
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)

        def to_host(x):
            return x.detach().cpu().numpy()
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
    elif args.backend == "cupy":
        cupy = xp
        d = cupy.cuda.Device(int(args.device.split(":", 1)[1]) if ":" in args.device else 0)
        d.use()
        arrays = [cupy.asarray(a) for a in host]
        sync, to_host = d.synchronize, cupy.asnumpy
    else:
        arrays = host
        sync, to_host = (lambda: None), (lambda x: x)
    del host
    sync()
    counters["input_bytes"] = sum(int(a.nbytes) for a in arrays)
    impl = None if args.implementation == "auto" else args.implementation
    kw = {"backend": args.backend, "implementation": impl, "strip_exponent": args.strip_exponent,
          "prefer_einsum": args.prefer_einsum, "autojit": False}

    out = None
    times: list[float] = []
    ctx = xp.inference_mode() if args.backend == "torch" else contextlib.nullcontext()
    with ctx:
        for i in range(args.warmups + args.runs):
            out = None
            sync()
            t0 = time.perf_counter()
            out = tree.contract(arrays, **kw)
            sync()
            dt = (time.perf_counter() - t0) * 1e3
            if i >= args.warmups:
                times.append(dt)
    if args.backend == "torch" and arrays and arrays[0].is_cuda:
        counters["peak_device_bytes"] = int(xp.cuda.max_memory_allocated())
        counters["peak_reserved_bytes"] = int(xp.cuda.max_memory_reserved())
    import numpy as np
    if args.strip_exponent:
        mantissa, exponent = out
        arr = np.asarray(to_host(mantissa)).astype(np.complex128 if dtype[0] == "c" else np.float64)
        exponent = float(exponent)
        report["exponent_log10"] = exponent
        arr = arr * 10.0 ** exponent
    else:
        arr = to_host(out)
    report.update(common.timing_stats(times))
    report["settings"] = settings
    report["counters"] = counters
    return common.finish_ok(report, args, problem, common.describe_result(arr))


if __name__ == "__main__":
    sys.exit(main())
