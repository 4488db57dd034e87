"""Each tool finding its own path (issue 16's Show), on a GPU host: for every constant-fill network
of a suite,
  - tnrt's search (`tnrt inspect --optimizer auto`: seed 0, 16 greedy + 8 partitioning trials,
    reconfiguration, scored by tnrt's cost model), its wall time reported apart;
  - cotengra's HyperOptimizer given the same wall time (greedy and, when the kahypar module is
    there, kahypar drivers; optlib 'random', minimize 'combo', one process, seed 0);
  - cuTensorNet's own `contract_path` (its hyper-optimiser, `--samples` samples, seed 0), run by
    cuTensorNet itself (autotuned, bench/peers/cutensornet_tree.py --own-path);
then each path's tc / sc / model time by one convention (`tnrt inspect --path-file`: log2
multiply-adds, log2 elements of the largest tensor) and its time when tnrt executes it (compiled,
median of --runs after --warmups), and the end-to-end comparison: tnrt on its own path against
cuTensorNet on its own path. Results must agree across the paths (the suite's constant fills
make every element of the exact result 1).

    python3 bench/paths/own_paths.py bench/suites/families.json --tnrt /tmp/tnrt-bin/tnrt --out /tmp/own

Writes DIR/own_paths.csv, DIR/own_paths.md, DIR/own_paths.json and DIR/paths/NAME-TOOL.json.
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import common  # noqa: E402


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def inspect(tnrt: str, file: str, dtype: str, extra: list[str]) -> dict:
    out = subprocess.run([tnrt, "inspect", file, "--dtype", dtype] + extra, capture_output=True, text=True,
                         timeout=900, check=True).stdout
    get = lambda key: float(re.search(rf"^{key}: ([-\d.]+)", out, re.M).group(1))  # noqa: E731
    r = {"tc": get("tc"), "sc": get("sc"), "model_ms": get("model")}
    m = re.search(r"^search: ([\d.]+) s", out, re.M)
    if m:
        r["search_s"] = float(m.group(1))
    return r


def execute(tnrt: str, file: str, p: dict, path_file: str, args, jfile: str) -> dict:
    device = getattr(args, "device", "cuda")  # path_ab.py's --device; the CPU engine runs eagerly
    cmd = [tnrt, "contract", file, "--device", device, "--mode", "eager" if device == "cpu" else "compiled", "--dtype", p["dtype"],
           "--fill", repr(p["fill"]["value"]), "--path-file", path_file, "--warmup", str(args.warmups),
           "--repeat", str(args.runs), "--json", jfile]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return {"status": "failed", "error": (r.stderr.strip().splitlines() or ["rc %d" % r.returncode])[-1][:300]}
    d = json.load(open(jfile, encoding="utf-8"))
    res = d.get("result") or {}
    return {"status": "ok", "ms": d["median_ms"], "compile_ms": d.get("compile_ms"), "wall_s": wall,
            "norm": res.get("norm"), "scalar": res.get("scalar"), "text": res.get("text")}


def each_network(suite: dict, globs: list[str] | None, budget: float, keep=lambda p: True):
    """The suite's constant-fill networks whose names match one of `globs` (every one when none) and
    that `keep` accepts, as (problem, file), each logged as it starts; no new one starts once
    `budget` seconds (0: no bound) have passed."""
    problems = [p for p in suite["problems"] if p["fill"]["kind"] == "constant"
                and (not globs or any(fnmatch.fnmatch(p["name"], g) for g in globs)) and keep(p)]
    start = time.perf_counter()
    for k, p in enumerate(problems):
        if budget and time.perf_counter() - start > budget:
            log(f"budget of {budget:.0f} s spent: {len(problems) - k} networks not run")
            return
        log(f"[{k + 1}/{len(problems)}] {p['name']}")
        yield p, os.path.join(ROOT, p["file"])


def cotengra_search(problem: common.Problem, seconds: float, seed: int) -> tuple[list[list[int]], int, float]:
    import cotengra as ctg
    inputs = [tuple(ix) for ix in problem.inputs]
    size = {l: int(e) for l, e in enumerate(problem.extents)}
    opt = ctg.HyperOptimizer(max_time=seconds, max_repeats=10**6, optlib="random", minimize="combo",
                             parallel=False, progbar=False, seed=seed, reconf_opts={})
    t0 = time.perf_counter()
    tree = opt.search(inputs, tuple(problem.output), size)
    took = time.perf_counter() - t0
    return [[int(a), int(b)] for a, b in tree.get_path()], len(opt.scores), took


def cutensornet_own(file: str, p: dict, args, jfile: str, path_file: str) -> dict:
    import cutensornet_tree  # bench/peers: the peer, called in this process (one import of cuquantum)
    argv = [file, "--dtype", p["dtype"], "--fill", "constant", "--value", repr(p["fill"]["value"]), "--device", "cuda", "--own-path",
            "--samples", str(args.samples), "--warmups", str(args.warmups), "--runs", str(args.runs),
            "--json", jfile, "--write-path", path_file]
    rc = cutensornet_tree.main(argv)
    d = json.load(open(jfile, encoding="utf-8"))
    if rc != 0:
        return {"status": d.get("status", "failed"), "error": d.get("error", "rc %d" % rc)}
    pf = d.get("path_finding") or {}
    res = d.get("result") or {}
    return {"status": "ok", "ms": d.get("median_ms"), "path_s": pf.get("ms", 0) / 1e3, "slices": pf.get("num_slices"),
            "setup_ms": d.get("setup_ms"), "norm": res.get("norm"), "text": res.get("text")}


def agree(a, b, tol: float = 5e-3) -> bool:
    return a is not None and b is not None and abs(a - b) <= tol * max(abs(a), abs(b), 1e-30)


def add_run_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of tnrt's runs (execute) and of the loop over networks (each_network)."""
    ap.add_argument("--warmups", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--budget", type=float, default=0, help="stop starting networks after this many seconds (0: none)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite")
    ap.add_argument("--tnrt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--problem", action="append", help="glob of network names (default: every constant-fill one)")
    ap.add_argument("--samples", type=int, default=8, help="cuTensorNet's hyper-optimiser samples")
    add_run_arguments(ap)
    ap.add_argument("--skip-cotengra", action="store_true")
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="no runs: the tables of earlier own_paths.json files, "
                    "rows in the suite's order (a later file's row replaces an earlier one's)")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args)

    suite = json.load(open(args.suite, encoding="utf-8"))
    os.makedirs(os.path.join(args.out, "paths"), exist_ok=True)
    try:
        import cotengra  # noqa: F401
        import importlib.util
        ctg_note = "cotengra %s, drivers greedy + %s" % (cotengra.__version__,
                                                       "kahypar" if importlib.util.find_spec("kahypar") else "labels (no kahypar)")
        cotengra_search(common.load_problem(os.path.join(ROOT, "bench/suites/families/chain-n8-d800-2000.json")), 0.2, 0)  # warm
    except Exception as exc:  # noqa: BLE001
        ctg_note = f"cotengra not usable: {exc}"
        args.skip_cotengra = True
    log(ctg_note)

    rows = []
    for p, file in each_network(suite, args.problem, args.budget):
        name = p["name"]
        row: dict = {"network": name, "dtype": p["dtype"]}
        pdir = os.path.join(args.out, "paths")
        paths = {}
        # tnrt's own search
        tp = os.path.join(pdir, f"{name}-tnrt.json")
        row["tnrt"] = inspect(args.tnrt, file, p["dtype"], ["--optimizer", "auto", "--write-path", tp])
        paths["tnrt"] = tp
        seconds = row["tnrt"]["search_s"]
        # cotengra at equal time
        if not args.skip_cotengra:
            problem = common.load_problem(file)
            cpath, trials, took = cotengra_search(problem, max(seconds, 0.05), 0)
            cp = os.path.join(pdir, f"{name}-cotengra.json")
            json.dump(cpath, open(cp, "w", encoding="utf-8"))
            row["cotengra"] = inspect(args.tnrt, file, p["dtype"], ["--path-file", cp])
            row["cotengra"].update(search_s=took, trials=trials)
            paths["cotengra"] = cp
        # cuTensorNet's own path, run by cuTensorNet
        qp = os.path.join(pdir, f"{name}-cutensornet.json")
        row["cutensornet_run"] = cutensornet_own(file, p, args, os.path.join(args.out, f"cq-{name}.json"), qp)
        if row["cutensornet_run"]["status"] == "ok":
            row["cutensornet"] = inspect(args.tnrt, file, p["dtype"], ["--path-file", qp])
            row["cutensornet"]["search_s"] = row["cutensornet_run"]["path_s"]
            paths["cutensornet"] = qp
        # tnrt executes every path
        for tool, pf in paths.items():
            row[tool]["exec"] = execute(args.tnrt, file, p, pf, args, os.path.join(args.out, f"run-{name}-{tool}.json"))
        norms = [row[t]["exec"].get("norm") for t in paths if row[t]["exec"]["status"] == "ok"]
        cq_norm = row["cutensornet_run"].get("norm")
        row["agree"] = all(agree(n, norms[0]) for n in norms + ([cq_norm] if cq_norm is not None else [])) if norms else False
        t_ms = row["tnrt"]["exec"].get("ms")
        q_ms = row["cutensornet_run"].get("ms")
        row["tnrt_vs_cutensornet"] = q_ms / t_ms if t_ms and q_ms else None
        rows.append(row)
        log("  tnrt %s ms (search %.2f s), cuTensorNet own %s ms (search %s s)" % (
            t_ms, seconds, q_ms, row["cutensornet_run"].get("path_s")))

    with open(os.path.join(args.out, "own_paths.json"), "w", encoding="utf-8") as f:
        json.dump({"suite": args.suite, "command": " ".join(sys.argv), "cotengra": ctg_note, "samples": args.samples,
                   "warmups": args.warmups, "runs": args.runs, "rows": rows}, f, indent=1)
    write_tables(rows, args.out, ctg_note)
    return 0


def merge(args) -> int:
    suite = json.load(open(args.suite, encoding="utf-8"))
    order = {p["name"]: i for i, p in enumerate(suite["problems"])}
    rows, docs = {}, []
    for f in args.merge:
        doc = json.load(open(f, encoding="utf-8"))
        docs.append(doc)
        for r in doc["rows"]:
            rows[r["network"]] = r
    merged = sorted(rows.values(), key=lambda r: order.get(r["network"], len(order)))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "own_paths.json"), "w", encoding="utf-8") as f:
        json.dump(dict(docs[0], command=" ; ".join(d["command"] for d in docs), rows=merged), f, indent=1)
    write_tables(merged, args.out, docs[0]["cotengra"])
    return 0


def fmt(x, spec=".3g"):
    return "—" if x is None else format(x, spec)


def write_tables(rows: list[dict], out: str, ctg_note: str) -> None:
    tools = ["tnrt", "cotengra", "cutensornet"]
    fields = ["network", "dtype"]
    for t in tools:
        fields += [f"{t}_search_s", f"{t}_tc", f"{t}_sc", f"{t}_model_ms", f"{t}_tnrt_ms"]
    fields += ["cotengra_trials", "cutensornet_own_ms", "cutensornet_slices", "tnrt_own_vs_cutensornet_own", "agree"]
    with open(os.path.join(out, "own_paths.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            d = {"network": r["network"], "dtype": r["dtype"], "agree": r["agree"],
                 "cotengra_trials": r.get("cotengra", {}).get("trials"),
                 "cutensornet_own_ms": r["cutensornet_run"].get("ms"),
                 "cutensornet_slices": r["cutensornet_run"].get("slices"),
                 "tnrt_own_vs_cutensornet_own": r["tnrt_vs_cutensornet"]}
            for t in tools:
                x = r.get(t)
                if not x:
                    continue
                d.update({f"{t}_search_s": x.get("search_s"), f"{t}_tc": x["tc"], f"{t}_sc": x["sc"],
                          f"{t}_model_ms": x["model_ms"], f"{t}_tnrt_ms": x["exec"].get("ms")})
            w.writerow(d)
    lines = ["| network | tnrt search s | tnrt tc / sc | tnrt path, tnrt ms | cotengra (equal time) tc / sc (trials) | "
             "cotengra path, tnrt ms | cuTensorNet search s | cuTensorNet tc / sc | cuTensorNet path, tnrt ms | "
             "cuTensorNet path, cuTensorNet ms | cuTensorNet own / tnrt own | results agree |",
             "|---|---:|---|---:|---|---:|---:|---|---:|---:|---:|---|"]
    ratios, ahead = [], 0
    for r in rows:
        t, c, q, qr = r["tnrt"], r.get("cotengra"), r.get("cutensornet"), r["cutensornet_run"]
        ratio = r["tnrt_vs_cutensornet"]
        if ratio:
            ratios.append(ratio)
            ahead += ratio > 1
        lines.append("| %s | %s | %.2f / %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["network"], fmt(t.get("search_s"), ".2f"), t["tc"], t["sc"], fmt(t["exec"].get("ms")),
            ("%.2f / %.2f (%d)" % (c["tc"], c["sc"], c["trials"])) if c else "—", fmt(c["exec"].get("ms")) if c else "—",
            fmt(qr.get("path_s"), ".2f"), ("%.2f / %.2f" % (q["tc"], q["sc"])) if q else qr.get("error", "—")[:60],
            fmt(q["exec"].get("ms")) if q else "—", fmt(qr.get("ms")), fmt(ratio, ".2f"), "yes" if r["agree"] else "NO"))
    if ratios:
        gm = math.exp(statistics.fmean(math.log(x) for x in ratios))
        lines += ["", f"tnrt with its own path against cuTensorNet with its own path: ahead on {ahead} of {len(ratios)}; "
                      f"geometric mean of cuTensorNet's time over tnrt's {gm:.2f}x."]
    lines += ["", f"tc: log2 multiply-adds; sc: log2 elements of the largest tensor (both by `tnrt inspect --path-file`). "
                  f"Search times are wall times on the GPU host's CPU; {ctg_note}."]
    with open(os.path.join(out, "own_paths.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
