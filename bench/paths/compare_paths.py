"""Path quality without a GPU (issue 16): for every network of a suite, the cost of
  - the path stored in the file (cotengra, seeded, made by the suite's generator),
  - tnrt's built-in greedy, its default search "auto" (scored by tnrt's cost model, 16 trials,
    deterministic) and its hyper search (64 trials, at most 1 s) (`tnrt inspect FILE --optimizer ...`),
  - cotengra's HyperOptimizer (greedy trials, optlib 'random', fixed seed, no reconfiguration) given
    the same time as tnrt's search took (wall time of the `tnrt inspect` call, load included), and
    with --cotengra-trials N, the same with N trials and no time limit (its time reported),
as log2 multiply-adds (tc), log2 elements of the largest tensor (sc) and the time tnrt's cost model
predicts for the path (model, ms: `tnrt inspect`'s "model:" line; cotengra's path goes through
`--path-file`). cotengra's tc/sc are converted to the same convention (contraction_cost() counts
multiply-adds). Writes CSV and Markdown.

    python3 bench/paths/compare_paths.py bench/suites/families.json --tnrt build/tnrt --out DIR
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def inspect(tnrt: str, file: str, optimizer: str | None = None, path_file: str | None = None) -> tuple[float, float, float, float]:
    cmd = [tnrt, "inspect", file] + (["--optimizer", optimizer] if optimizer else []) + (["--path-file", path_file] if path_file else [])
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    seconds = time.perf_counter() - t0
    tc = float(re.search(r"^tc: ([-\d.]+)", out, re.M).group(1))
    sc = float(re.search(r"^sc: ([-\d.]+)", out, re.M).group(1))
    model = float(re.search(r"^model: ([-\d.]+)", out, re.M).group(1))
    return tc, sc, model, seconds


def cotengra_search(file: str, seconds: float | None, seed: int, repeats: int = 10**6) -> tuple[float, float, int, float]:
    import cotengra as ctg
    doc = json.load(open(file, encoding="utf-8"))
    lhs, out = doc["format_string"].split("->")
    inputs = [list(t) for t in lhs.split(",")]
    size = {}
    for t, s in zip(inputs, doc["shapes"]):
        for c, e in zip(t, s):
            size[c] = int(e)
    opt = ctg.HyperOptimizer(methods=["greedy"], max_repeats=repeats, max_time=seconds, optlib="random",
                             progbar=False, seed=seed, reconf_opts={})
    t0 = time.perf_counter()
    tree = opt.search(inputs, list(out), size)
    took = time.perf_counter() - t0
    return (math.log2(max(tree.contraction_cost(), 1)), math.log2(max(tree.max_size(), 1)), len(opt.scores), took,
            [list(p) for p in tree.get_path()])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite")
    ap.add_argument("--tnrt", default=os.path.join(ROOT, "build", "tnrt"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cotengra-trials", type=int, default=0,
                    help="also run cotengra with this many trials and no time limit (slow: tens of s a network)")
    args = ap.parse_args(argv)
    suite = json.load(open(args.suite, encoding="utf-8"))
    files, names = [], []
    for p in suite["problems"]:
        f = p.get("file", "")
        if f.endswith(".json") and "families/" in f and f not in files:
            files.append(f)
            names.append(p["name"])
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for i, (name, f) in enumerate(zip(names, files)):
        path = os.path.join(ROOT, f)
        file_tc, file_sc, file_m, _ = inspect(args.tnrt, path)
        g_tc, g_sc, g_m, _ = inspect(args.tnrt, path, "greedy")
        a_tc, a_sc, a_m, a_s = inspect(args.tnrt, path, "auto")
        h_tc, h_sc, h_m, h_s = inspect(args.tnrt, path, "hyper")
        c_tc, c_sc, c_trials, _, c_path = cotengra_search(path, h_s, args.seed)
        pf = os.path.join(args.out, "cotengra-path.json")
        with open(pf, "w", encoding="utf-8") as fh:
            json.dump(c_path, fh)
        c_m = inspect(args.tnrt, path, path_file=pf)[2]
        os.remove(pf)
        row = dict(network=name, file_tc=file_tc, file_sc=file_sc, file_ms=file_m, greedy_tc=g_tc, greedy_ms=g_m,
                   auto_tc=a_tc, auto_sc=a_sc, auto_ms=a_m, auto_s=round(a_s, 3),
                   hyper_tc=h_tc, hyper_sc=h_sc, hyper_ms=h_m, hyper_s=round(h_s, 3), cotengra_tc=round(c_tc, 2),
                   cotengra_sc=round(c_sc, 2), cotengra_ms=c_m, cotengra_trials=c_trials)
        if args.cotengra_trials > 0:
            k_tc, k_sc, _, k_s, _ = cotengra_search(path, None, args.seed, repeats=args.cotengra_trials)
            row.update(cotengraN_tc=round(k_tc, 2), cotengraN_sc=round(k_sc, 2), cotengraN_s=round(k_s, 2))
        rows.append(row)
        sys.stderr.write(f"[{i + 1}/{len(files)}] {name}: file {file_tc:.2f} ({file_m:.3f} ms), auto {a_tc:.2f} ({a_m:.3f} ms, "
                         f"{a_s:.2f} s), hyper {h_tc:.2f} ({h_m:.3f} ms), cotengra {c_tc:.2f} ({c_m:.3f} ms, {c_trials} trials)\n")
    with open(os.path.join(args.out, "paths.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    n = args.cotengra_trials
    head = ("| network | file's path tc / sc, model ms | greedy tc, ms | tnrt auto tc / sc, ms (search s) "
            "| tnrt hyper tc / sc, ms (s) | cotengra at hyper's time tc / sc, ms (trials) | auto ms / file ms | auto ms / cotengra ms |")
    lines = [head + (f" cotengra {n} trials tc / sc (s) |" if n > 0 else ""),
             "|---|---|---|---|---|---|---:|---:|" + ("---|" if n > 0 else "")]
    for r in rows:
        line = (f"| {r['network']} | {r['file_tc']:.2f} / {r['file_sc']:.2f}, {r['file_ms']:.3f} | {r['greedy_tc']:.2f}, "
                f"{r['greedy_ms']:.3f} | {r['auto_tc']:.2f} / {r['auto_sc']:.2f}, {r['auto_ms']:.3f} ({r['auto_s']:.2f}) | "
                f"{r['hyper_tc']:.2f} / {r['hyper_sc']:.2f}, {r['hyper_ms']:.3f} ({r['hyper_s']:.2f}) | {r['cotengra_tc']:.2f} / "
                f"{r['cotengra_sc']:.2f}, {r['cotengra_ms']:.3f} ({r['cotengra_trials']}) | {r['auto_ms'] / r['file_ms']:.2f} | "
                f"{r['auto_ms'] / r['cotengra_ms']:.2f} |")
        if n > 0:
            line += f" {r['cotengraN_tc']:.2f} / {r['cotengraN_sc']:.2f} ({r['cotengraN_s']:.2f}) |"
        lines.append(line)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    for key, what in (("file_ms", "the file's stored cotengra path"), ("cotengra_ms", "cotengra given hyper's search time")):
        q = [r["auto_ms"] / r[key] for r in rows]
        lines += ["", f"tnrt auto against {what}, by the cost model: geometric mean {geo(q):.3f}x the time; "
                  f"at most 1.01x on {sum(x <= 1.01 for x in q)} of {len(q)}, behind by more on {sum(x > 1.01 for x in q)}."]
    d = [r["hyper_tc"] - r["cotengra_tc"] for r in rows]
    lines += ["", f"hyper against cotengra at equal time, in flops: within 0.1 log2 or better on {sum(x <= 0.1 for x in d)} of "
              f"{len(d)}; mean difference {sum(d) / len(d):+.2f} log2 (negative: tnrt's path cheaper)."]
    open(os.path.join(args.out, "paths.md"), "w", encoding="utf-8").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
