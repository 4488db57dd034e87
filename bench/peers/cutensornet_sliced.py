"""The cuTensorNet peer with slicing: cuquantum.tensornet.Network over the same pairwise path as tnrt
and the same sliced labels.

Like cutensornet_tree.py (whose pairwise_paths, device setup and helpers it imports): the network in
interleaved form with the problem's integer labels, the problem's pairwise steps as a linear path,
inputs built on the host with tnrt's fills and uploaded before any timing. In addition the sliced
labels go to cuTensorNet with the path, through the documented form of cuquantum.tensornet's
OptimizerOptions (cuquantum-python 25.x):

    net.contract_path(optimize=OptimizerOptions(path=linear_path, slicing=[mode, ...]))

"slicing" as a sequence of sliced modes (each sliced whole: one value per slice; the same as
(mode, 1) pairs), which Network.contract_path sets after the given path
(OptimizerInfoInterface.sliced_mode_extent); cuTensorNet then reports num_slices, checked here
against the product of the labels' extents. contract() with no `slices` argument contracts and sums
every slice. The labels: --slices NAME,NAME,... or else the input file's "slices" key (names as in
its format_string; bench/suites/sliced/generate.py writes them). Example:

    python3 bench/peers/cutensornet_sliced.py bench/suites/sliced/small-regular3-n180.json \
        --warmups 1 --runs 3 --device cuda --memory-limit 40000000000 --json out.json

With no --value the constant fill is the file's "fill"; with that fill (given or not) the result is
checked against the file's exact result 1 unless --reference says otherwise. Writes one JSON object (cutensornet_tree.py's keys, "tool":
"cutensornet", "mode": "given_path_sliced", plus "slices") to stdout or --json FILE; exits 0 when
it ran, 2 when not supported (no cuquantum, no GPU), 1 on failure (e.g. a sliced label the
problem does not have).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from cutensornet_tree import device_setup, one_line, pairwise_paths  # noqa: E402


def finish(report: dict, args, status: str, error: str, rc: int) -> int:
    report.update(status=status, error=error, verified=None)
    common.emit(report, args.json_out)
    common.progress(f"cutensornet_sliced: {status}: {error}")
    return rc


def file_doc(args) -> dict:
    """The input file as JSON (its "slices" and "fill" keys), {} for an expression."""
    if not args.file:
        return {}
    with open(args.file, encoding="utf-8") as f:
        doc = json.load(f)
    return doc if isinstance(doc, dict) else {}


def sliced_labels(args, doc: dict, problem: common.Problem) -> tuple[list[str], list[int]]:
    """(names, label ids) of the labels to slice: --slices, else the file's "slices"."""
    if args.slices is not None:
        names = [s for s in args.slices.split(",") if s]
    elif isinstance(doc.get("slices"), list):
        names = [str(s) for s in doc["slices"]]
    else:
        raise ValueError("no sliced labels: the file has no \"slices\" key and --slices is not given")
    ids = {n: i for i, n in enumerate(problem.label_names)}
    bad = [n for n in names if n not in ids]
    if bad:
        raise ValueError(f"sliced labels {bad} are not labels of the problem")
    if len(set(names)) != len(names):
        raise ValueError(f"a sliced label is given twice: {names}")
    used = {l for t in problem.inputs for l in t}
    if any(ids[n] not in used for n in names):
        raise ValueError("a sliced label occurs in no input")
    return names, [ids[n] for n in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_peer_arguments(ap)
    ap.set_defaults(value=None)  # None: the file's constant fill (see below)
    ap.add_argument("--slices", help="comma-separated label names to slice (default: the file's \"slices\")")
    ap.add_argument("--package", choices=["torch", "cupy"], default="torch",
                    help="device arrays handed to cuTensorNet (torch: its caching allocator, peak memory known)")
    ap.add_argument("--autotune", type=int, default=0, metavar="N", help="Network.autotune iterations (0: off)")
    ap.add_argument("--compute-type", choices=["default", "tf32", "3xtf32"], default="default",
                    help="f32/c64 only: cuTensorNet's compute type (default: full f32)")
    ap.add_argument("--memory-limit", default="80%", help="NetworkOptions.memory_limit (bytes, or e.g. 80%%)")
    args = ap.parse_args(argv)

    problem = common.problem_from_args(args)
    doc = file_doc(args)
    fill = doc.get("fill") if isinstance(doc.get("fill"), dict) else {}
    file_fill = fill.get("kind") == "constant" and args.fill == "constant" and "value" in fill
    if args.value is None:
        args.value = float(fill["value"]) if file_fill else common.REFERENCE_FILL
    if args.reference is None and file_fill and args.value == float(fill["value"]) and "result" in fill:
        args.reference = repr(float(fill["result"]))  # the file's constant fill: its exact result
    report = common.base_report("cutensornet", args, problem)
    report["mode"] = "given_path_sliced"
    report["counters"] = {}
    try:
        names, ids = sliced_labels(args, doc, problem)
    except (ValueError, KeyError) as exc:
        return finish(report, args, "failed", one_line(exc), 1)
    expected = math.prod(problem.extents[l] for l in ids)
    report["slices"] = {"labels": names, "label_ids": ids, "expected": expected, "num_slices": None,
                        "source": "--slices" if args.slices is not None else "the file's \"slices\""}
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
        return run(cuquantum, tensornet, args, problem, report, ids, expected)
    except Exception as exc:  # the harness reads the object; one line says what failed
        msg = one_line(exc)
        if "no gpu" in msg.lower() or "no cuda-capable" in msg.lower() or "CUDA_ERROR_NO_DEVICE" in msg:
            return finish(report, args, "not_supported", msg, 2)
        return finish(report, args, "failed", msg, 1)


def run(cuquantum, tensornet, args, problem: common.Problem, report: dict, ids: list[int], expected: int) -> int:
    dtype = common.canonical_dtype(args.dtype)
    sync, to_dev, to_host, reset_peak, peak = device_setup(args, report)
    host = common.make_inputs(problem, dtype, common.fill_from_args(args))
    inputs = [to_dev(a) for a in host]
    del host
    sync()
    input_bytes = sum(int(a.nbytes) for a in inputs)

    opts = {"memory_limit": int(args.memory_limit) if args.memory_limit.isdigit() else args.memory_limit,
            "device_id": int(args.device.split(":")[1]) if ":" in args.device else 0}
    if args.compute_type != "default":
        if dtype not in ("f32", "c64"):
            raise ValueError(f"--compute-type {args.compute_type} applies to f32/c64, not {dtype}")
        opts["compute_type"] = {"tf32": cuquantum.ComputeType.COMPUTE_TF32,
                                "3xtf32": cuquantum.ComputeType.COMPUTE_3XTF32}[args.compute_type]
    interleaved = []
    for t, labels in zip(inputs, problem.inputs):
        interleaved += [t, list(labels)]
    interleaved.append(list(problem.output))
    _, linear = pairwise_paths(problem)
    settings = {"package": args.package, "autotune_iterations": args.autotune, "compute_type": args.compute_type,
                "memory_limit": args.memory_limit, "blocking": True,
                "labels": "interleaved, the problem's integer labels",
                "path": f"the problem's {len(linear)} pairwise steps, linear form",
                "optimize": "OptimizerOptions(path=<linear path>, slicing=<sliced label ids>)",
                "note": "cuTensorNet orders each intermediate's modes itself; unary steps fold into the next pair"}
    reset_peak()
    t0 = time.perf_counter()
    net = tensornet.Network(*interleaved, options=tensornet.NetworkOptions(**opts))
    try:
        create_ms = (time.perf_counter() - t0) * 1e3
        optimize = tensornet.OptimizerOptions(path=linear, slicing=list(ids))
        t0 = time.perf_counter()
        path, info = net.contract_path(optimize=optimize)
        path_ms = (time.perf_counter() - t0) * 1e3
        if [sorted(map(int, p)) for p in path] != [sorted(p) for p in linear]:
            raise RuntimeError("cuTensorNet reports a path other than the one given")
        num_slices = int(info.num_slices)
        got = sorted(int(m) for m, _ in info.slices)
        report["slices"].update(num_slices=num_slices,
                                reported=[[problem.label_names[int(m)], int(e)] for m, e in info.slices])
        if num_slices != expected or got != sorted(ids):
            raise RuntimeError(f"cuTensorNet slices {got} into {num_slices}, not the {expected} slices of {sorted(ids)}")
        report["path_finding"] = {"ms": path_ms, "flops": float(info.opt_cost),
                                  "largest_intermediate_elements": float(info.largest_intermediate),
                                  "num_slices": num_slices, "contractions": len(path), "finder": "given"}
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
            out = net.contract()  # every slice, summed
            sync()
            dt = (time.perf_counter() - t0) * 1e3
            if i >= args.warmups:
                times.append(dt)
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
