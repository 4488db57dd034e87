"""Per-step times of tnrt compiled on a GPU host, to check and calibrate the search's cost model
(issue 16): every step's measured time beside the model's (`tnrt contract --step-profile`, whose
CSV carries multiply_adds, the GEMM shape batch/m/n/k and model_ms).

Two sources, each run as `tnrt contract ... --device cuda --mode compiled --step-profile CSV`:
  - paths: each constant-fill network of SUITE on its own path, and on every path file
    DIR/NAME-TOOL.json of --paths (bench/paths/own_paths.py writes them) whose NAME is in the suite;
  - --sweep: single binary steps, einsum expressions, over a grid of GEMM shapes (log2 of the batch,
    m, n and k sizes), each both as many extent-2 modes (the shape of a qubit network's steps) and
    as one mode per role (a matrix product), so that the rank's own cost shows.

    python3 bench/paths/step_profiles.py bench/suites/families.json --tnrt /tmp/tnrt-bin/tnrt \
        --paths /tmp/pp/paths --sweep --out /tmp/prof

Writes DIR/NAME-TOOL.csv (paths), DIR/sweep/CASE.csv and DIR/index.json (every run: its command,
status, median ms). bench/paths/calibrate.py reads the folder.
"""
from __future__ import annotations

import argparse
import fnmatch
import glob
import itertools
import json
import os
import string
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def sweep_cases(max_log2: int = 28) -> list[dict]:
    """The sweep's grid: (b, m, n, k) as log2 sizes, every operand and the result at most 2**max_log2."""
    cases = []
    for b, m, n, k in itertools.product((0, 5), (12, 20, 24), (0, 3, 9), (1, 3, 5, 8)):
        if max(b + m + n, b + m + k, b + n + k) > max_log2:
            continue
        for form in ("modes", "matrix"):
            cases.append({"name": f"{form}-b{b}-m{m}-n{n}-k{k}", "form": form, "b": b, "m": m, "n": n, "k": k})
    return cases


def probe_cases() -> list[dict]:
    """--probe: the shapes of the slowest steps of the 2026-12-03 profiles, as extent-2 modes.
    huge-*: a library step with a tensor of 2^29..2^31 elements (the reference network's steps 222 and
    271 on tnrt's own path ran at a tenth of the roofline). split-*: a long sum into a small result
    (step 505 there, cuTensorNet's step 372 on rqc-5x5-c16-amp, tnrt's 284 on QAOA p=4), as it is
    (keep 0) and with `keep` of its summed modes kept in the result (split-K: the sum over them left
    to a reduction of the small result after)."""
    cases = []
    for m in (20, 21, 22):
        cases.append({"name": f"huge-b3-m{m}-n6-k5", "form": "modes", "b": 3, "m": m, "n": 6, "k": 5, "dtype": "f32"})
        cases.append({"name": f"huge-b3-m{m}-n4-k6", "form": "modes", "b": 3, "m": m, "n": 4, "k": 6, "dtype": "f32"})
    for (b, m, n, k, dt) in ((3, 5, 4, 21, "f32"), (2, 4, 4, 21, "c64"), (0, 3, 3, 21, "c64")):
        for keep in (0, 4, 6, 8, 10, 12):
            cases.append({"name": f"split-b{b}-m{m}-n{n}-k{k}-{dt}-keep{keep}", "form": "modes", "b": b, "m": m, "n": n, "k": k,
                          "keep": keep, "dtype": dt})
    return cases


def expression(case: dict) -> tuple[str, str]:
    """The einsum expression and its --shapes for one sweep case (`keep`: that many of the summed
    modes stay in the result, outermost)."""
    letters = iter(string.ascii_letters)
    if case["form"] == "modes":  # one extent-2 mode per factor of 2
        groups = {r: [next(letters) for _ in range(case[r])] for r in "bmnk"}
        ext = {l: 2 for g in groups.values() for l in g}
    else:  # one mode per role (absent when the role's size is 1)
        groups = {r: ([next(letters)] if case[r] else []) for r in "bmnk"}
        ext = {g[0]: 2 ** case[r] for r, g in groups.items() if g}
    lhs = groups["b"] + groups["m"] + groups["k"]
    rhs = groups["b"] + groups["k"] + groups["n"]
    out = groups["k"][:case.get("keep", 0)] + groups["b"] + groups["m"] + groups["n"]
    eq = "".join(lhs) + "," + "".join(rhs) + "->" + "".join(out)
    shape = lambda ls: "x".join(str(ext[l]) for l in ls) if ls else "-"  # noqa: E731
    return eq, shape(lhs) + "," + shape(rhs)


def run(cmd: list[str], csv_path: str, jpath: str, timeout: float) -> dict:
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd + ["--step-profile", csv_path, "--json", jpath], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall_s": timeout}
    rec = {"wall_s": round(time.perf_counter() - t0, 2)}
    if r.returncode != 0:
        rec.update(status="failed", rc=r.returncode, error=(r.stderr.strip().splitlines() or [""])[-1][:300])
        return rec
    try:
        d = json.load(open(jpath, encoding="utf-8"))
        rec.update(status="ok", median_ms=d.get("median_ms"))
    except (OSError, ValueError) as exc:
        rec.update(status="failed", error=f"no json: {exc}")
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite")
    ap.add_argument("--tnrt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--paths", help="folder of NAME-TOOL.json path files")
    ap.add_argument("--sweep", action="store_true", help="also the single-step sweep")
    ap.add_argument("--probe", action="store_true", help="also the probe cases (probe_cases)")
    ap.add_argument("--tools", nargs="*", help="only these tools' path files (default: every one)")
    ap.add_argument("--no-suite-paths", action="store_true", help="not the suite's own paths")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--budget", type=float, default=0, help="stop starting runs after this many seconds (0: none)")
    ap.add_argument("--extra", default="", help="more tnrt contract options for every run (e.g. '--split-sums off')")
    ap.add_argument("--tag", default="", help="suffix of every run's file names (e.g. -nosplit)")
    ap.add_argument("--problem", action="append", help="glob of network names (default: every constant-fill one)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = ap.parse_args(argv)

    suite = json.load(open(args.suite, encoding="utf-8"))
    problems = {p["name"]: p for p in suite["problems"] if p["fill"]["kind"] == "constant"
                and (not args.problem or any(fnmatch.fnmatch(p["name"], g) for g in args.problem))}
    jobs = []  # (key, command, csv)
    for name, p in problems.items():
        base = [args.tnrt, "contract", os.path.join(ROOT, p["file"]), "--device", "cuda", "--mode", "compiled",
                "--dtype", p["dtype"], "--fill", repr(p["fill"]["value"]), "--warmup", "1", "--repeat", "3"] + args.extra.split()
        if not args.no_suite_paths:
            jobs.append((f"{name}-suite", base))
        if args.paths:
            for pf in sorted(glob.glob(os.path.join(args.paths, f"{name}-*.json"))):
                tool = os.path.basename(pf)[len(name) + 1:-len(".json")]
                if "-" not in tool and (not args.tools or tool in args.tools):  # NAME-TOOL.json, not a longer network's name
                    jobs.append((f"{name}-{tool}", base + ["--path-file", pf]))
    if args.sweep:
        for c in sweep_cases():
            eq, shapes = expression(c)
            jobs.append((f"sweep/{c['name']}", [args.tnrt, "contract", eq, "--shapes", shapes, "--device", "cuda",
                                                 "--mode", "compiled", "--dtype", "f32", "--warmup", "1", "--repeat", "3"]))
    if args.probe:
        for c in probe_cases():
            eq, shapes = expression(c)
            jobs.append((f"sweep/{c['name']}", [args.tnrt, "contract", eq, "--shapes", shapes, "--device", "cuda",
                                                 "--mode", "compiled", "--dtype", c["dtype"], "--warmup", "1", "--repeat", "3"]))
    if args.dry_run:
        for key, cmd in jobs:
            print(key, " ".join(cmd))
        return 0
    os.makedirs(os.path.join(args.out, "sweep"), exist_ok=True)
    index, start = {}, time.perf_counter()
    for i, (key, cmd) in enumerate(jobs):
        if args.budget and time.perf_counter() - start > args.budget:
            log(f"budget of {args.budget:.0f} s spent: {len(jobs) - i} runs not started")
            break
        key += args.tag
        rec = run(cmd, os.path.join(args.out, key + ".csv"), os.path.join(args.out, key + ".json"), args.timeout)
        rec["command"] = " ".join(cmd)
        index[key] = rec
        log(f"[{i + 1}/{len(jobs)}] {key}: {rec['status']} {rec.get('median_ms', rec.get('error', ''))}")
    json.dump(index, open(os.path.join(args.out, "index.json"), "w", encoding="utf-8"), indent=1)
    failed = [k for k, r in index.items() if r["status"] != "ok"]
    log(f"{len(index) - len(failed)} of {len(jobs)} runs ok" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
