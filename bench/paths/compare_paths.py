"""Path quality without a GPU (issue 16): for every network of a suite, the cost of
  - the path stored in the file (cotengra, seeded, made by the suite's generator),
  - tnrt's built-in greedy and its hyper search (`tnrt inspect FILE --optimizer greedy|hyper`),
  - cotengra's HyperOptimizer (greedy trials, optlib 'random', fixed seed, no reconfiguration) given
    the same time as tnrt's search took (wall time of the `tnrt inspect` call, load included), and
    with --cotengra-trials N, the same with N trials and no time limit (its time reported),
as log2 multiply-adds (tc) and log2 elements of the largest tensor (sc); cotengra's costs are
converted to the same convention (contraction_cost() counts multiply-adds). Writes CSV and
Markdown.

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


def inspect(tnrt: str, file: str, optimizer: str | None) -> tuple[float, float, float]:
    cmd = [tnrt, "inspect", file] + (["--optimizer", optimizer] if optimizer else [])
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    seconds = time.perf_counter() - t0
    tc = float(re.search(r"^tc: ([-\d.]+)", out, re.M).group(1))
    sc = float(re.search(r"^sc: ([-\d.]+)", out, re.M).group(1))
    return tc, sc, seconds


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
    return math.log2(max(tree.contraction_cost(), 1)), math.log2(max(tree.max_size(), 1)), len(opt.scores), took


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
        file_tc, file_sc, _ = inspect(args.tnrt, path, None)
        g_tc, g_sc, _ = inspect(args.tnrt, path, "greedy")
        h_tc, h_sc, h_s = inspect(args.tnrt, path, "hyper")
        c_tc, c_sc, c_trials, _ = cotengra_search(path, h_s, args.seed)
        row = dict(network=name, file_tc=file_tc, file_sc=file_sc, greedy_tc=g_tc, greedy_sc=g_sc,
                   hyper_tc=h_tc, hyper_sc=h_sc, hyper_s=round(h_s, 3), cotengra_tc=round(c_tc, 2),
                   cotengra_sc=round(c_sc, 2), cotengra_trials=c_trials)
        if args.cotengra_trials > 0:
            k_tc, k_sc, _, k_s = cotengra_search(path, None, args.seed, repeats=args.cotengra_trials)
            row.update(cotengraN_tc=round(k_tc, 2), cotengraN_sc=round(k_sc, 2), cotengraN_s=round(k_s, 2))
        rows.append(row)
        sys.stderr.write(f"[{i + 1}/{len(files)}] {name}: file {file_tc:.2f}, greedy {g_tc:.2f}, hyper {h_tc:.2f} "
                         f"({h_s:.2f} s), cotengra {c_tc:.2f} ({c_trials} trials)\n")
    with open(os.path.join(args.out, "paths.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    n = args.cotengra_trials
    head = ("| network | file's path tc / sc | tnrt greedy tc | tnrt hyper tc / sc (s) | cotengra same time tc / sc (trials) "
            "| hyper − cotengra tc |")
    lines = [head + (f" cotengra {n} trials tc / sc (s) | hyper − cotengra {n} |" if n > 0 else ""),
             "|---|---|---:|---|---|---:|" + ("---|---:|" if n > 0 else "")]
    for r in rows:
        line = (f"| {r['network']} | {r['file_tc']:.2f} / {r['file_sc']:.2f} | {r['greedy_tc']:.2f} | "
                f"{r['hyper_tc']:.2f} / {r['hyper_sc']:.2f} ({r['hyper_s']:.2f}) | {r['cotengra_tc']:.2f} / "
                f"{r['cotengra_sc']:.2f} ({r['cotengra_trials']}) | {r['hyper_tc'] - r['cotengra_tc']:+.2f} |")
        if n > 0:
            line += (f" {r['cotengraN_tc']:.2f} / {r['cotengraN_sc']:.2f} ({r['cotengraN_s']:.2f}) | "
                     f"{r['hyper_tc'] - r['cotengraN_tc']:+.2f} |")
        lines.append(line)
    for key, what in (("cotengra_tc", "cotengra given tnrt's search time"), ("cotengraN_tc", f"cotengra with {n} trials")):
        if key not in rows[0]:
            continue
        d = [r["hyper_tc"] - r[key] for r in rows]
        lines += ["", f"Against {what}: tnrt hyper within 0.1 log2 or better on {sum(x <= 0.1 for x in d)} of {len(d)}; "
                  f"mean difference {sum(d) / len(d):+.2f} log2 (negative: tnrt's path cheaper)."]
    open(os.path.join(args.out, "paths.md"), "w", encoding="utf-8").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
