"""Fits the search's cost model (include/tnrt/search.hpp, cost_model) to measured step times: the
step profiles bench/paths/step_profiles.py wrote (one CSV per network and path, and the sweep).

The model of one binary step of U multiply-adds reading A and B elements and writing D, with the
GEMM sizes m = U / B and n = U / A (the free sizes of each side):

    t = (max(c, m) + overlap * min(c, m)) / p + overhead
    c   = flops / peak / e_c,  m = bytes / bandwidth / e_m
    e_c = 1 / (1 + gemm_tile / min(m, n))            a skinny GEMM wastes its tiles
    p   = min(1, D / parallel_elements) ** exponent   a small result leaves the GPU idle (D > 1;
                                                      a full reduction to a scalar is exempt)

fitted by least squares on log time over every f32/c64 step of at least --min-ms (the profile times
each op alone, launch and all: the fit's overhead is fixed at --overhead-ms, not the search's). The
overlap is 0 (a roofline, cost_model's default) unless --overlap fits it too.

    python3 bench/paths/calibrate.py DIR [DIR...] --suite bench/suites/families.json --out calib.json

Writes the parameters, the error of the roofline and of the fitted model, and per path the measured
sum beside both models' sums (do the models rank a network's paths as the GPU does?) as JSON and
Markdown (--md).
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import sys

PEAK, BANDWIDTH = 50.7e12, 4250e9  # cost_model's defaults: measured FP32 peak, copy bandwidth


def load(dirs: list[str], dtypes: dict[str, str]) -> list[dict]:
    rows = []
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.csv")) + glob.glob(os.path.join(d, "sweep", "*.csv"))):
            src = os.path.basename(f)[:-4]
            net = src.rsplit("-", 1)[0]
            dt = dtypes.get(net, "f32")
            with open(f, newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                if "multiply_adds" not in (reader.fieldnames or []):
                    continue
                for r in reader:
                    if r["step"] in ("fused", "copy"):
                        continue
                    rows.append({"src": src, "dtype": dt, "ms": float(r["ms"]), "madds": float(r["multiply_adds"]),
                                 "bytes": float(r["bytes"]), "b": float(r["batch"]), "m": float(r["m"]), "n": float(r["n"]),
                                 "k": float(r["k"]), "rhs_rank": int(r["rhs_rank"])})
    return rows


def predict(rows: list[dict], th: list[float] | None, overhead_ms: float):
    import numpy as np
    fpm = np.array([8.0 if r["dtype"].startswith("c") else 2.0 for r in rows])
    C = np.array([r["madds"] for r in rows]) * fpm / PEAK * 1e3
    M = np.array([r["bytes"] for r in rows]) / BANDWIDTH * 1e3
    if th is None:
        return np.maximum(C, M) + overhead_ms
    tile, d0, expo, em = th[:4]
    overlap = th[4] if len(th) > 4 else 0.0
    m = np.array([r["m"] for r in rows]); n = np.array([r["n"] for r in rows])
    unary = np.array([r["rhs_rank"] == 0 and r["n"] <= 1 for r in rows])
    D = np.array([r["b"] * r["m"] * r["n"] for r in rows])
    ec = np.where(unary, 1.0, 1 / (1 + tile / np.maximum(np.minimum(m, n), 1)))
    par = np.where(D <= 1, 1.0, np.minimum(1.0, D / d0) ** expo)
    c, mem = C / ec, M / em
    return (np.maximum(c, mem) + overlap * np.minimum(c, mem)) / par + overhead_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--suite", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--md")
    ap.add_argument("--min-ms", type=float, default=0.03)
    ap.add_argument("--overhead-ms", type=float, default=0.012)
    ap.add_argument("--overlap", action="store_true", help="also fit the overlap term (cost_model::overlap; else 0)")
    args = ap.parse_args(argv)
    import numpy as np
    from scipy.optimize import minimize

    suite = json.load(open(args.suite, encoding="utf-8"))
    dtypes = {p["name"]: p["dtype"] for p in suite["problems"]}
    every = [r for r in load(args.dirs, dtypes) if r["dtype"] in ("f32", "c64")]
    if not every:
        print("calibrate: no step profile with multiply_adds in " + ", ".join(args.dirs), file=sys.stderr)
        return 2
    rows = [r for r in every if r["ms"] >= args.min_ms]
    y = np.log([r["ms"] for r in rows])

    def loss(x):
        return float(np.mean((np.log(predict(rows, list(np.exp(x)), args.overhead_ms)) - y) ** 2))

    start = [32, 2 ** 20, 0.5, 0.8] + ([0.3] if args.overlap else [])
    fit = minimize(loss, np.log(start), method="Nelder-Mead",
                   options={"maxiter": 20000 if args.overlap else 8000, "xatol": 1e-6, "fatol": 1e-10})
    th = [float(v) for v in np.exp(fit.x)]
    base_err = np.abs(np.log(predict(rows, None, args.overhead_ms)) - y)
    fit_err = np.abs(np.log(predict(rows, th, args.overhead_ms)) - y)
    q = lambda e: {f"p{int(p * 100)}": round(float(np.quantile(e, p)), 3) for p in (0.5, 0.9, 0.99)}  # noqa: E731
    # per path: the sums over every step (all of them, not only those over --min-ms)
    base_all, fit_all = predict(every, None, args.overhead_ms), predict(every, th, args.overhead_ms)
    sums: dict[str, list[float]] = {}
    for r, b, f in zip(every, base_all, fit_all):
        s = sums.setdefault(r["src"], [0.0, 0.0, 0.0])
        s[0] += r["ms"]; s[1] += float(b); s[2] += float(f)
    by_net: dict[str, dict[str, list[float]]] = {}
    for src, s in sums.items():
        if "-" in src and not src.startswith(("modes-", "matrix-")):
            net, tool = src.rsplit("-", 1)
            by_net.setdefault(net, {})[tool] = s
    agree_base = agree_fit = pairs = 0
    for tools in by_net.values():
        names = sorted(tools)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                a, b = tools[names[i]], tools[names[j]]
                if abs(a[0] - b[0]) < 0.1 * max(a[0], b[0]):
                    continue  # measured within 10%: no order to get right
                pairs += 1
                agree_base += (a[0] < b[0]) == (a[1] < b[1])
                agree_fit += (a[0] < b[0]) == (a[2] < b[2])
    params = {"gemm_tile": th[0], "parallel_elements": th[1], "parallel_exponent": th[2], "memory_efficiency": th[3]}
    if args.overlap:
        params["overlap"] = th[4]
    out = {"parameters": params,
           "fit_overhead_ms": args.overhead_ms, "steps_fitted": len(rows), "steps_all": len(every),
           "abs_log_error": {"roofline": q(base_err), "fitted": q(fit_err)},
           "rmse_log": {"roofline": float(np.sqrt(np.mean(base_err ** 2))), "fitted": float(np.sqrt(np.mean(fit_err ** 2)))},
           "path_pairs_ordered": {"pairs": pairs, "roofline": agree_base, "fitted": agree_fit},
           "paths": {net: {t: {"measured_ms": round(s[0], 4), "roofline_ms": round(s[1], 4), "fitted_ms": round(s[2], 4)}
                           for t, s in sorted(tools.items())} for net, tools in sorted(by_net.items())}}
    json.dump(out, open(args.out, "w", encoding="utf-8"), indent=1)
    print(json.dumps({k: out[k] for k in ("parameters", "steps_fitted", "abs_log_error", "path_pairs_ordered")}, indent=1))
    if args.md:
        lines = ["# Cost-model calibration", "",
                 f"{len(rows)} f32/c64 steps of at least {args.min_ms} ms (of {len(every)}), from " + ", ".join(args.dirs), "",
                 "| parameter | value |", "|---|---|"]
        lines += [f"| {k} | {v:.4g} |" for k, v in out["parameters"].items()]
        lines += ["", "| model | median abs log error | p90 | p99 |", "|---|---|---|---|"]
        for k in ("roofline", "fitted"):
            e = out["abs_log_error"][k]
            lines.append(f"| {k} | {e['p50']} | {e['p90']} | {e['p99']} |")
        lines += ["", f"Pairs of paths of one network whose measured times differ by more than 10%: {pairs}; "
                  f"ordered as measured by the roofline {agree_base}, by the fitted model {agree_fit}.", "",
                  "| network | path | measured ms (sum of steps) | roofline ms | fitted ms |", "|---|---|---|---|---|"]
        for net, tools in out["paths"].items():
            for t, s in tools.items():
                lines.append(f"| {net} | {t} | {s['measured_ms']:.3f} | {s['roofline_ms']:.3f} | {s['fitted_ms']:.3f} |")
        open(args.md, "w", encoding="utf-8").write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
