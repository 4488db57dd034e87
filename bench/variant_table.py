"""An A/B table of tnrt variants from a harness folder's results.csv: per network, the base variant's
median time beside each other variant's, the ratio base / variant (above 1: the variant is faster),
compile times, and each variant's check (verified, absolute error against the reference). Networks
where a variant did not run show a dash; the geometric mean of each ratio is over the networks where
both ran.

    python3 bench/variant_table.py families/results.csv --base compiled \
        --variant "compiled no gemm workspace" --variant "compiled jit" --md ab.md
"""
from __future__ import annotations

import argparse
import csv
import math
import sys

from suite_table import by_problem, emit, fnum


def table(rows: list[dict], base: str, variants: list[str]) -> list[str]:
    by, order = by_problem(rows)
    head = f"| network | {base} ms |"
    rule = "|---|---:|"
    for v in variants:
        head += f" {v} ms | {base} / {v} | {v}: compile ms, check |"
        rule += "---:|---:|---|"
    out = [head, rule]
    ratios: dict[str, list[float]] = {v: [] for v in variants}
    for name in order:
        got = by[name]
        b = got.get(base)
        bm = fnum(b["median_ms"]) if b else None
        if not any(v in got for v in variants):
            continue
        line = f"| {name} | {bm:.3g} |" if bm else f"| {name} | — |"
        for v in variants:
            r = got.get(v)
            vm = fnum(r["median_ms"]) if r else None
            if vm is None:
                line += " — | — | — |"
                continue
            ratio = bm / vm if bm else None
            if ratio:
                ratios[v].append(ratio)
            err = fnum(r.get("abs_err"))
            check = ("pass" if r.get("verified") == "True" else "FAIL") + (f" ({err:.1e})" if err is not None else "")
            cm = fnum(r.get("compile_ms"))
            line += f" {vm:.3g} | {ratio:.3f} |" if ratio else f" {vm:.3g} | — |"
            line += f" {cm:.0f}, {check} |" if cm is not None else f" —, {check} |"
        out.append(line)
    out.append("")
    for v in variants:
        rs = ratios[v]
        if rs:
            g = math.exp(sum(math.log(x) for x in rs) / len(rs))
            out.append(f"- {v}: geometric mean of {base} / {v} {g:.3f} over {len(rs)} networks; "
                       f"faster by more than 3% on {sum(x > 1.03 for x in rs)}, slower by more than 3% on {sum(x < 1 / 1.03 for x in rs)}.")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--base", default="compiled")
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--md", help="also write the table here")
    a = ap.parse_args()
    try:
        with open(a.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"variant_table: {e}", file=sys.stderr)
        return 2
    if not rows or "variant" not in rows[0]:
        print(f"variant_table: {a.csv} is not a harness results.csv", file=sys.stderr)
        return 2
    emit(table(rows, a.base, a.variant), a.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
