"""One line per network from a harness folder's results.csv: tnrt eager and compiled beside the best
full-precision peer, the floor and where the compiled time goes (when --roofline ran), and the
check. JAX at its default precision (TF32 on Ampere and later) is left out of "best" and shown in a
column of its own, with whether its result passed the check.

    python3 bench/suite_table.py bench/results/2026-12-02-h200-suite/families/results.csv [--md OUT.md]
        [--require "torch graph" --require cuTensorNet]

--require PEER: a network on which that peer has no successful run is marked "missing: PEER" and
left out of the geometric mean and the count of networks ahead (its best peer would be a weaker one).
"""
from __future__ import annotations

import argparse
import csv
import math
import sys

REDUCED = ("jax default",)  # variants that are not full precision


def fnum(x: str) -> float | None:
    try:
        v = float(x)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def emit(lines: list[str], md: str | None) -> None:
    """Prints a table (its lines) and, with `md`, writes the same text there: the tail of every
    table script here (variant_table, precision_errors, launch_summary)."""
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if md:
        with open(md, "w", encoding="utf-8") as f:
            f.write(text)


def by_problem(rows: list[dict]) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """results.csv rows as {problem: {variant: row}}, and the problems in their first order."""
    by: dict[str, dict[str, dict]] = {}
    order: list[str] = []
    for r in rows:
        if r["problem"] not in by:
            by[r["problem"]] = {}
            order.append(r["problem"])
        by[r["problem"]][r["variant"]] = r
    return by, order


def table(rows: list[dict], compiled: str = "compiled", require: tuple[str, ...] = ()) -> tuple[list[str], list[float], list[float]]:
    by, order = by_problem(rows)
    out = ["| network | dtype | floor ms (bound) | eager ms | compiled ms | best full-precision peer | peer ms | best peer / compiled | "
           "compiled ×floor | compiled: memory / compute / overhead ms | JAX TF32 ms (check) | tnrt check |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|---|---|---|"]
    ratios: list[float] = []
    eager_vs_torch: list[float] = []
    for name in order:
        v = by[name]
        ok = {k: r for k, r in v.items() if "ok" in (r.get("statuses") or "").split(";") and fnum(r["median_ms"]) is not None}
        e, c = ok.get("eager"), ok.get(compiled)
        any_row = next(iter(v.values()))
        peers = {k: r for k, r in ok.items() if r["kind"] != "tnrt" and not k.startswith(REDUCED) and r.get("verified") == "True"}
        best = min(peers.items(), key=lambda kv: fnum(kv[1]["median_ms"])) if peers else None
        cm = fnum(c["median_ms"]) if c else None
        if e and ok.get("torch") and fnum(e["median_ms"]):
            eager_vs_torch.append(fnum(ok["torch"]["median_ms"]) / fnum(e["median_ms"]))
        ratio = fnum(best[1]["median_ms"]) / cm if best and cm else None
        missing = [k for k in require if k not in ok and not name.endswith("-random")]
        if ratio and not missing:
            ratios.append(ratio)
        tf = next((r for k, r in v.items() if k.startswith(REDUCED)), None)
        tf_txt = "—"
        if tf is not None:
            tf_txt = (f"{fnum(tf['median_ms']):.3g} ({'pass' if tf.get('verified') == 'True' else 'FAIL'})"
                      if fnum(tf["median_ms"]) is not None else tf.get("statuses", "—"))
        roof = "—"
        if c and fnum(c.get("roofline_memory_ms", "")) is not None:
            roof = f"{fnum(c['roofline_memory_ms']):.3g} / {fnum(c['roofline_compute_ms']):.3g} / {fnum(c['roofline_overhead_ms']):.3g}"
        checks = [r.get("verified") for r in (e, c) if r]
        check = "pass" if checks and all(x == "True" for x in checks) else ("FAIL" if checks else "—")
        fl = fnum(any_row.get("floor_ms", ""))
        g = lambda x: f"{x:.3g}" if x is not None else "—"  # noqa: E731
        out.append(f"| {name} | {any_row['dtype']} | {g(fl)} ({any_row.get('floor_bound') or '?'}) | "
                   f"{g(fnum(e['median_ms'])) if e else '—'} | {g(cm)} | "
                   f"{(best[0] if best else '—') + (' (missing: ' + ', '.join(missing) + ')' if missing else '')} | "
                   f"{g(fnum(best[1]['median_ms'])) if best else '—'} | {f'{ratio:.2f}' if ratio else '—'} | "
                   f"{g(fnum(c['x_floor'])) if c else '—'} | {roof} | {tf_txt} | {check} |")
    return out, ratios, eager_vs_torch


def memory_bound(rows: list[dict], compiled: str = "compiled", within: float = 1.5) -> tuple[int, list[tuple[str, float]]]:
    """The issue-15 target on memory-bound networks: of the networks whose floor is the byte floor
    (a seeded '-random' twin counts with its constant fill, so it is left out), how many the compiled
    variant runs within `within` times that floor, and every such network's multiple, worst last."""
    by, order = by_problem(rows)
    xs: list[tuple[str, float]] = []
    for name in order:
        if name.endswith("-random"):
            continue
        c = by[name].get(compiled)
        if c is None or c.get("floor_bound") != "memory" or "ok" not in (c.get("statuses") or "").split(";"):
            continue
        x = fnum(c.get("x_floor", ""))
        if x is not None:
            xs.append((name, x))
    xs.sort(key=lambda t: t[1])
    return sum(x <= within for _, x in xs), xs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--md", help="write the table here too")
    ap.add_argument("--compiled", default="compiled", metavar="VARIANT",
                    help="the tnrt variant of the compiled column (e.g. 'compiled static': inputs in the program's own buffers)")
    ap.add_argument("--require", action="append", default=[], metavar="PEER",
                    help="leave a network out of the geometric mean when this peer did not run on it (repeatable)")
    args = ap.parse_args(argv)
    try:
        rows = list(csv.DictReader(open(args.csv, encoding="utf-8")))
    except OSError as e:
        print(f"suite_table: {e}", file=sys.stderr)
        return 1
    lines, ratios, eager_vs_torch = table(rows, args.compiled, tuple(args.require))
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append("")
        lines.append(f"Geometric mean of best full-precision peer / tnrt {args.compiled} over {len(ratios)} networks: {g:.2f}×; "
                     f"compiled ahead on {sum(x > 1 for x in ratios)} of {len(ratios)}."
                     + (f" Networks without {' or '.join(args.require)} are left out." if args.require else ""))
    if eager_vs_torch:
        g = math.exp(sum(math.log(x) for x in eager_vs_torch) / len(eager_vs_torch))
        lines.append("")
        lines.append(f"tnrt eager ahead of torch eager on {sum(x > 1 for x in eager_vs_torch)} of {len(eager_vs_torch)}; "
                     f"geometric mean of torch eager / tnrt eager {g:.2f}×.")
    within, mem = memory_bound(rows, args.compiled)
    if mem:
        lines.append("")
        lines.append(f"tnrt {args.compiled} within 1.5× of its floor on {within} of {len(mem)} memory-bound networks; "
                     "the others: " + (", ".join(f"{n} {x:.2f}×" for n, x in mem if x > 1.5) or "none") + ".")
    emit(lines, args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
