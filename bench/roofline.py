"""A roofline per network and per step: the byte floor, the flop floor, and where the time goes.

Per pairwise step (bench/peers/common.py's Problem, the steps tnrt runs):
  bytes = elements of lhs + rhs + result, times the element size (common.Problem.step_bytes)
  flops = k x the product of the extents of every label of the step (the union of the lhs and rhs
          labels: one multiply-add per point of the iteration space), k = 2 for a real dtype,
          8 for a complex one (a complex multiply-add is 4 multiplies and 4 adds)
  unary step (a sum over labels): one add per element read, 1 flop real, 2 complex
Per network: byte floor = total bytes / copy bandwidth (bench/bandwidth.py), flop floor = total
flops / the GEMM peak of the dtype (bench/gemm_peak.py; f32 is TF32 off, as tnrt computes); the
larger is "the floor". Per step: floor = max(bytes / bandwidth, flops / peak), bound "memory" or
"compute" by which term is larger.

Where the time goes: `tnrt contract FILE --mode compiled --step-profile FILE.csv` replays the
compiled program once with an event between launches and writes one row per launch (columns op,
step, lhs_rank, rhs_rank, out_rank, bytes, ms, gbps, kernel; step is the tree's step index, or
"fused" for the one launch that runs every absorbed small step, or "copy" for a step-less tree).
The fused launch is charged with the steps no other row names. The summary splits the end-to-end
time into: launches of memory-bound steps (their times and floors), launches of compute-bound steps
(the same), and the remainder, end-to-end time - sum of launch times (launch and per-step overhead;
negative when the event replay ran slower than the timed runs). Event-to-event times include the
GPU's idle time before a launch that the host had not yet enqueued.

    python3 bench/roofline.py FILE --dtype f32 --bandwidth-gbs 4250 --peak-tflops 50 \
        [--steps STEPS.csv] [--total-ms T | --report tnrt.json] [--json OUT] [--top 10]

--bandwidth-json and --peaks-json take bench/bandwidth.py's and bench/gemm_peak.py's JSON instead
of the numbers. Python 3.11+ standard library; bench/peers/common.py for the problem.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peers"))
import common  # noqa: E402

COMPLEX = ("c64", "c128")


# --------------------------------------------------------------------------------------------------
# costs
# --------------------------------------------------------------------------------------------------
def flops_per_multiply_add(dtype: str) -> int:
    return 8 if common.canonical_dtype(dtype) in COMPLEX else 2


def step_costs(problem: common.Problem, dtype: str) -> list[dict]:
    """One dict per step, in order: step, kind (pair | unary), labels (the union), bytes, flops."""
    dtype = common.canonical_dtype(dtype)
    labels = problem.operand_labels()
    nbytes = problem.step_bytes(dtype)
    k = flops_per_multiply_add(dtype)
    out = []
    for i, s in enumerate(problem.steps):
        if s.rhs >= 0:
            union = list(dict.fromkeys(labels[s.lhs] + labels[s.rhs]))
            flops = k * math.prod(problem.extents[l] for l in union)
            kind = "pair"
        else:
            union = list(labels[s.lhs])
            flops = (2 if dtype in COMPLEX else 1) * math.prod(problem.extents[l] for l in union)
            kind = "unary"
        out.append({"step": i, "kind": kind, "labels": len(union), "bytes": nbytes[i], "flops": flops})
    return out


def total_flops(problem: common.Problem, dtype: str) -> int:
    return sum(c["flops"] for c in step_costs(problem, dtype))


def floor_of(nbytes: float, flops: float, bandwidth_bytes_per_s: float | None,
             peak_flops_per_s: float | None) -> dict:
    """byte_floor_ms, flop_floor_ms (None where the rate is unknown), floor_ms (the larger), bound."""
    b = nbytes / bandwidth_bytes_per_s * 1e3 if bandwidth_bytes_per_s else None
    f = flops / peak_flops_per_s * 1e3 if peak_flops_per_s else None
    if b is None and f is None:
        return {"byte_floor_ms": None, "flop_floor_ms": None, "floor_ms": None, "bound": None}
    if f is None or (b is not None and b >= f):
        return {"byte_floor_ms": b, "flop_floor_ms": f, "floor_ms": b, "bound": "memory"}
    return {"byte_floor_ms": b, "flop_floor_ms": f, "floor_ms": f, "bound": "compute"}


def network_floors(problem: common.Problem, dtype: str, bandwidth_bytes_per_s: float | None,
                   peak_flops_per_s: float | None) -> dict:
    costs = step_costs(problem, dtype)
    nbytes = sum(c["bytes"] for c in costs)
    flops = sum(c["flops"] for c in costs)
    out = {"steps": len(costs), "bytes": nbytes, "flops": flops,
           "intensity_flops_per_byte": flops / nbytes if nbytes else None,
           "bandwidth_GBps": bandwidth_bytes_per_s / 1e9 if bandwidth_bytes_per_s else None,
           "peak_tflops": peak_flops_per_s / 1e12 if peak_flops_per_s else None}
    out.update(floor_of(nbytes, flops, bandwidth_bytes_per_s, peak_flops_per_s))
    # each step at its own bound: never below the network's floor (a sum of maxima)
    per = [floor_of(c["bytes"], c["flops"], bandwidth_bytes_per_s, peak_flops_per_s)["floor_ms"] for c in costs]
    out["sum_of_step_floors_ms"] = sum(per) if costs and None not in per else None
    return out


def step_floors(problem: common.Problem, dtype: str, bandwidth_bytes_per_s: float | None,
                peak_flops_per_s: float | None) -> list[dict]:
    return [dict(c, **floor_of(c["bytes"], c["flops"], bandwidth_bytes_per_s, peak_flops_per_s))
            for c in step_costs(problem, dtype)]


def peak_for(peaks_tflops: dict | None, dtype: str) -> float | None:
    """FLOP/s of the dtype's GEMM peak (f32: TF32 off, never the tf32 entry), None if unmeasured."""
    v = (peaks_tflops or {}).get(common.canonical_dtype(dtype))
    return float(v) * 1e12 if isinstance(v, (int, float)) and v > 0 else None


# --------------------------------------------------------------------------------------------------
# the step profile
# --------------------------------------------------------------------------------------------------
STEP_PROFILE_COLUMNS = ("op", "step", "lhs_rank", "rhs_rank", "out_rank", "bytes", "ms", "gbps", "kernel")


def read_step_profile(path: str) -> list[dict]:
    """tnrt's --step-profile CSV: one dict per launch (op int, step int | "fused" | "copy", ms...; "shape",
    the step's [batch, m, n, k] where the profile has those columns, else None)."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("op", "step", "ms") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a step profile (no column {', '.join(missing)}; "
                             f"want {','.join(STEP_PROFILE_COLUMNS)})")
        rows = []
        for r in reader:
            st = r["step"].strip()
            rows.append({"op": int(r["op"]), "step": int(st) if st.lstrip("-").isdigit() else st,
                         "bytes": float(r.get("bytes") or 0), "ms": float(r["ms"]), "gbps": float(r.get("gbps") or 0),
                         "kernel": r.get("kernel", ""),
                         "ranks": [int(r[c]) for c in ("lhs_rank", "rhs_rank", "out_rank") if r.get(c, "").strip()],
                         "shape": [float(r[c]) for c in ("batch", "m", "n", "k")]
                         if all(r.get(c, "").strip() for c in ("batch", "m", "n", "k")) else None})
    return rows


def summarize(problem: common.Problem, dtype: str, rows: list[dict], bandwidth_bytes_per_s: float | None,
              peak_flops_per_s: float | None, total_ms: float | None = None, top: int = 10) -> dict:
    """Where the time goes, from a step profile's rows (read_step_profile)."""
    dtype = common.canonical_dtype(dtype)
    costs = step_costs(problem, dtype)
    net = network_floors(problem, dtype, bandwidth_bytes_per_s, peak_flops_per_s)
    named = {r["step"] for r in rows if isinstance(r["step"], int)}
    bad_steps = sorted(s for s in named if not 0 <= s < len(costs))
    absorbed = [i for i in range(len(costs)) if i not in named]
    ops, mismatched = [], []
    for r in rows:
        st = r["step"]
        if isinstance(st, int) and 0 <= st < len(costs):
            c = costs[st]
            steps, nbytes, flops = [st], c["bytes"], c["flops"]
            if r["bytes"] and abs(r["bytes"] - nbytes) > 0.5:
                mismatched.append(st)
        elif st == "fused":
            steps = absorbed
            nbytes = sum(costs[i]["bytes"] for i in absorbed)
            flops = sum(costs[i]["flops"] for i in absorbed)
        elif st == "copy":  # a step-less tree: the input copied to the result
            steps = []
            nbytes = 2 * math.prod(problem.shape(problem.output)) * common.dtype_bytes(dtype)
            flops = 0
        else:
            steps, nbytes, flops = [], r["bytes"], 0
        op = {"op": r["op"], "step": st, "steps": len(steps), "ms": r["ms"], "bytes": nbytes, "flops": flops,
              "kernel": r.get("kernel", "")}
        op.update(floor_of(nbytes, flops, bandwidth_bytes_per_s, peak_flops_per_s))
        op["x_floor"] = r["ms"] / op["floor_ms"] if op["floor_ms"] else None
        op["over_floor_ms"] = r["ms"] - op["floor_ms"] if op["floor_ms"] is not None else None
        op["achieved_GBps"] = nbytes / (r["ms"] * 1e6) if r["ms"] > 0 else None
        op["achieved_tflops"] = flops / (r["ms"] * 1e9) if r["ms"] > 0 else None
        ops.append(op)

    def part(bound: str | None) -> dict:
        sel = [o for o in ops if o["bound"] == bound]
        ms = sum(o["ms"] for o in sel)
        fl = sum(o["floor_ms"] or 0.0 for o in sel) if sel and bound else None
        return {"ops": len(sel), "steps": sum(o["steps"] for o in sel), "ms": ms, "floor_ms": fl,
                "x_floor": ms / fl if fl else None}

    kernel_ms = sum(o["ms"] for o in ops)
    ranked = sorted([o for o in ops if o["over_floor_ms"] is not None], key=lambda o: -o["over_floor_ms"])
    out = {
        "network": net,
        "dtype": dtype,
        "ops": len(ops),
        "steps_in_profile": len(named) + (len(absorbed) if any(r["step"] == "fused" for r in rows) else 0),
        "fused_steps": len(absorbed) if any(r["step"] == "fused" for r in rows) else 0,
        "total_ms": total_ms,
        "kernel_ms": kernel_ms,
        "memory_bound": part("memory"),
        "compute_bound": part("compute"),
        "unclassified": part(None) if any(o["bound"] is None for o in ops) else None,
        "overhead_ms": total_ms - kernel_ms if total_ms is not None else None,
        "top": ranked[:top],
        "warnings": [],
    }
    if bad_steps:
        out["warnings"].append(f"the profile names steps {bad_steps[:5]} the problem does not have ({len(costs)} steps)")
    if mismatched:
        out["warnings"].append(f"{len(mismatched)} steps' bytes differ from the problem's (first: step {mismatched[0]}): "
                               "tnrt ran other steps than bench/peers/common.py reads")
    if not any(r["step"] == "fused" for r in rows) and absorbed and rows:
        out["warnings"].append(f"{len(absorbed)} steps are in no row and there is no fused launch")
    return out


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------
def _f(v, spec=".3g", none="—") -> str:
    return none if v is None else format(v, spec)


def floors_text(net: dict) -> str:
    b, f = net.get("byte_floor_ms"), net.get("flop_floor_ms")
    s = (f"byte floor {_f(b)} ms ({net['bytes'] / 1e9:.4g} GB / {_f(net.get('bandwidth_GBps'), '.4g')} GB/s), "
         f"flop floor {_f(f)} ms ({net['flops'] / 1e12:.4g} TFLOP / {_f(net.get('peak_tflops'), '.4g')} TFLOP/s)")
    if net.get("floor_ms") is not None:
        s += f": the floor is {_f(net['floor_ms'])} ms ({net['bound']}-bound)"
    return s


def summary_text(s: dict) -> str:
    lines = [floors_text(s["network"])]
    tot = s.get("total_ms")
    lines.append(f"where the time goes ({s['ops']} launches; end-to-end {_f(tot)} ms, "
                 f"sum of launches {_f(s['kernel_ms'])} ms):")
    lines.append(f"  {'':<14} {'launches':>8} {'steps':>6} {'ms':>10} {'floor ms':>10} {'x floor':>8}")
    for name, key in (("memory-bound", "memory_bound"), ("compute-bound", "compute_bound"),
                      ("unclassified", "unclassified")):
        p = s.get(key)
        if p:
            lines.append(f"  {name:<14} {p['ops']:>8} {p['steps']:>6} {_f(p['ms'], '.4g'):>10} "
                         f"{_f(p['floor_ms'], '.4g'):>10} {_f(p['x_floor'], '.3g'):>8}")
    lines.append(f"  {'overhead':<14} {'':>8} {'':>6} {_f(s.get('overhead_ms'), '.4g'):>10}   "
                 "(end-to-end - sum of launches)")
    if s["top"]:
        lines.append(f"top {len(s['top'])} launches by time over floor:")
        lines.append(f"  {'op':>5} {'step':>6} {'bound':<8} {'ms':>9} {'floor ms':>9} {'x floor':>8} {'GB/s':>8} kernel")
        for o in s["top"]:
            lines.append(f"  {o['op']:>5} {str(o['step']):>6} {str(o['bound']):<8} {_f(o['ms'], '.4g'):>9} "
                         f"{_f(o['floor_ms'], '.4g'):>9} {_f(o['x_floor'], '.3g'):>8} "
                         f"{_f(o['achieved_GBps'], '.4g'):>8} {o['kernel']}")
    for w in s.get("warnings") or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def compact(s: dict) -> dict:
    """The few figures the harness's table carries."""
    m, c = s["memory_bound"], s["compute_bound"]
    return {"total_ms": s.get("total_ms"), "kernel_ms": s["kernel_ms"], "memory_ms": m["ms"],
            "memory_floor_ms": m["floor_ms"], "compute_ms": c["ms"], "compute_floor_ms": c["floor_ms"],
            "overhead_ms": s.get("overhead_ms"), "ops": s["ops"],
            "top": [{k: o[k] for k in ("op", "step", "bound", "ms", "floor_ms", "x_floor", "kernel")}
                    for o in s["top"][:3]],
            "warnings": s.get("warnings") or []}


# --------------------------------------------------------------------------------------------------
def _load_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", help="tree JSON or einsum JSON (or --expr/--shapes)")
    ap.add_argument("--expr", help="einsum expression instead of a file")
    ap.add_argument("--shapes", help="shapes for --expr, e.g. 2x3,3x4")
    ap.add_argument("--bond-dim", type=int, default=2, help="extent of every tree-JSON label (2)")
    ap.add_argument("--dtype", default="f32", help="f32 | f64 | c64 | c128")
    ap.add_argument("--bandwidth-gbs", type=float, help="copy bandwidth, GB/s (1e9 bytes/s)")
    ap.add_argument("--bandwidth-json", help="bench/bandwidth.py's JSON instead of --bandwidth-gbs")
    ap.add_argument("--peak-tflops", type=float, help="GEMM peak of --dtype, TFLOP/s")
    ap.add_argument("--peaks-json", help="bench/gemm_peak.py's JSON instead of --peak-tflops")
    ap.add_argument("--steps", help="tnrt's --step-profile CSV: where the time goes")
    ap.add_argument("--total-ms", type=float, help="end-to-end time of one call, ms (for the overhead)")
    ap.add_argument("--report", help="tnrt's --json report: its median_ms is the end-to-end time")
    ap.add_argument("--top", type=int, default=10, help="launches listed by time over floor (10)")
    ap.add_argument("--json", dest="json_out", help="write the summary here")
    ap.add_argument("--per-step", action="store_true", help="also list every step's floor (JSON: steps)")
    args = ap.parse_args(argv)
    if not args.file and not args.expr:
        ap.error("a problem file or --expr is needed")
    try:
        problem = common.load_problem(args.file, args.expr, args.shapes, bond_dim=args.bond_dim)
        dtype = common.canonical_dtype(args.dtype)
    except (OSError, ValueError, KeyError) as exc:
        print(f"roofline: {exc}", file=sys.stderr)
        return 2
    bw = args.bandwidth_gbs * 1e9 if args.bandwidth_gbs else None
    if bw is None and args.bandwidth_json:
        bw = _load_json(args.bandwidth_json).get("bandwidth_bytes_per_s")
    peak = args.peak_tflops * 1e12 if args.peak_tflops else None
    if peak is None and args.peaks_json:
        peak = peak_for(_load_json(args.peaks_json).get("peaks_tflops"), dtype)
    total = args.total_ms
    if total is None and args.report:
        total = _load_json(args.report).get("median_ms")
    out: dict = {"problem": args.file or f"{args.expr} {args.shapes}", "dtype": dtype,
                 "network": network_floors(problem, dtype, bw, peak)}
    if args.per_step:
        out["steps"] = step_floors(problem, dtype, bw, peak)
    text = floors_text(out["network"])
    if args.steps:
        try:
            rows = read_step_profile(args.steps)
        except (OSError, ValueError, KeyError) as exc:
            print(f"roofline: {exc}", file=sys.stderr)
            return 2
        s = summarize(problem, dtype, rows, bw, peak, total, args.top)
        out.update(s)
        out["step_profile"] = args.steps
        text = summary_text(s)
    elif args.per_step:
        lines = [text, f"  {'step':>5} {'bound':<8} {'bytes':>12} {'flops':>12} {'floor ms':>10}"]
        for st in out["steps"]:
            lines.append(f"  {st['step']:>5} {str(st['bound']):<8} {st['bytes']:>12} {st['flops']:>12} "
                         f"{_f(st['floor_ms'], '.4g'):>10}")
        text = "\n".join(lines)
    print(text)
    if args.json_out:
        with open(args.json_out + ".tmp", "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        os.replace(args.json_out + ".tmp", args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
