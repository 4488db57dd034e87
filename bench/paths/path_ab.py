"""Two paths of each network, executed by tnrt compiled in turns (A, B, A, B, ...): the A/B of a search
change that the dev machine can only predict (for instance bench/paths/model_paths.cpp's paths under
the current cost model, NAME-asis.json, and under another calibration, NAME-other.json). For every
constant-fill network of the suite that has both path files in --paths: each path's tc / sc / model
time (`tnrt inspect --path-file`), the median over --reps of each run's median time, the ratio A / B
(above 1: B is faster) and whether both results agree.

    python3 bench/paths/path_ab.py bench/suites/families.json --tnrt /tmp/tnrt-bin/tnrt \
        --paths /tmp/mp --a asis --b other --out /tmp/path-ab

Writes DIR/path_ab.json and DIR/path_ab.md. Exit status 2 on bad arguments (one line on stderr).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from own_paths import add_run_arguments, agree, each_network, execute, fmt, inspect, log  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite")
    ap.add_argument("--tnrt", required=True)
    ap.add_argument("--paths", required=True, help="folder of NAME-<a>.json and NAME-<b>.json path files")
    ap.add_argument("--a", default="asis", help="tag of the first path file (default asis)")
    ap.add_argument("--b", default="other", help="tag of the second path file (default other)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--problem", action="append", help="glob of network names (default: every constant-fill one with both files)")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--reps", type=int, default=2, help="turns of A then B (default 2)")
    add_run_arguments(ap)
    args = ap.parse_args(argv)
    try:
        suite = json.load(open(args.suite, encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"path_ab: {args.suite}: {e}", file=sys.stderr)
        return 2
    if not os.path.isdir(args.paths):
        print(f"path_ab: --paths {args.paths} is not a folder", file=sys.stderr)
        return 2
    if args.reps < 1:
        print("path_ab: --reps must be at least 1", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    both = lambda p: all(os.path.isfile(os.path.join(args.paths, f"{p['name']}-{t}.json")) for t in (args.a, args.b))  # noqa: E731
    rows = []
    for p, file in each_network(suite, args.problem, args.budget, both):
        name = p["name"]
        row: dict = {"network": name, "dtype": p["dtype"]}
        runs: dict[str, list[dict]] = {args.a: [], args.b: []}
        for tag in (args.a, args.b):
            row[tag] = inspect(args.tnrt, file, p["dtype"], ["--path-file", os.path.join(args.paths, f"{name}-{tag}.json")])
        for rep in range(args.reps):
            for tag in (args.a, args.b):
                pf = os.path.join(args.paths, f"{name}-{tag}.json")
                runs[tag].append(execute(args.tnrt, file, p, pf, args, os.path.join(args.out, f"run-{name}-{tag}-{rep}.json")))
        for tag in (args.a, args.b):
            ok = [r for r in runs[tag] if r["status"] == "ok"]
            row[tag]["ms"] = statistics.median(r["ms"] for r in ok) if ok else None
            row[tag]["runs_ms"] = [r.get("ms") for r in runs[tag]]
            row[tag]["error"] = next((r["error"] for r in runs[tag] if r["status"] != "ok"), None)
            row[tag]["norm"] = ok[0].get("norm") if ok else None
        a_ms, b_ms = row[args.a]["ms"], row[args.b]["ms"]
        row["a_over_b"] = a_ms / b_ms if a_ms and b_ms else None
        row["agree"] = agree(row[args.a]["norm"], row[args.b]["norm"])
        rows.append(row)
        log(f"  {args.a} {fmt(a_ms)} ms, {args.b} {fmt(b_ms)} ms")
    with open(os.path.join(args.out, "path_ab.json"), "w", encoding="utf-8") as f:
        json.dump({"suite": args.suite, "command": " ".join(sys.argv), "a": args.a, "b": args.b, "device": args.device,
                   "reps": args.reps, "warmups": args.warmups, "runs": args.runs, "rows": rows}, f, indent=1)
    lines = [f"| network | {args.a}: tc / sc, model ms | {args.b}: tc / sc, model ms | {args.a} ms | {args.b} ms | "
             f"{args.a} / {args.b} | results agree |", "|---|---|---|---:|---:|---:|---|"]
    ratios = []
    for r in rows:
        a, b = r[args.a], r[args.b]
        if r["a_over_b"]:
            ratios.append(r["a_over_b"])
        lines.append(f"| {r['network']} | {a['tc']:.2f} / {a['sc']:.2f}, {a['model_ms']:.3f} | {b['tc']:.2f} / {b['sc']:.2f}, "
                     f"{b['model_ms']:.3f} | {fmt(a['ms'])} | {fmt(b['ms'])} | {fmt(r['a_over_b'], '.3f')} | "
                     f"{'yes' if r['agree'] else 'no'} |")
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines += ["", f"Geometric mean of {args.a} / {args.b}: {g:.3f} over {len(ratios)} networks; {args.b} faster by more "
                  f"than 3% on {sum(x > 1.03 for x in ratios)}, slower by more than 3% on {sum(x < 1 / 1.03 for x in ratios)}. "
                  f"Times: the median over {args.reps} turns of each run's median of {args.runs} "
                  f"(tnrt {'eager on the CPU' if args.device == 'cpu' else 'compiled, ' + args.device})."]
    with open(os.path.join(args.out, "path_ab.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
