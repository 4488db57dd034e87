#!/usr/bin/env python3
"""Per network, from compiled step profiles (`tnrt contract --step-profile CSV`, the harness's
--roofline jobs): the launches of one call, the fused launch's time, how many launches took under
10 us with their sum (event to event): how launch-bound a memory-bound network is; and the last
launch (the tree's last step: for a closed network the full contraction) with its kernel.

    python3 bench/launch_summary.py RAW_DIR [--variant compiled] [--md OUT.md]

RAW_DIR holds the harness's raw/roofline-<network>-<variant>.csv files.
"""
import argparse
import csv
import glob
import os
import sys

from suite_table import emit


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw")
    ap.add_argument("--variant", default="compiled", help="the variant's file suffix (default compiled)")
    ap.add_argument("--md", help="write the table here too")
    a = ap.parse_args(argv)
    suffix = "-" + a.variant.replace(" ", "-") + ".csv"
    lines = ["| network | launches | fused launch µs | launches under 10 µs | their sum µs | all launches µs | last launch µs (kernel) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for path in sorted(glob.glob(os.path.join(a.raw, "roofline-*" + suffix))):
        name = os.path.basename(path)[len("roofline-"):-len(suffix)]
        rows = list(csv.DictReader(open(path)))
        ms = [float(r["ms"]) for r in rows]
        fused = sum(float(r["ms"]) for r in rows if r["step"] == "fused")
        short = [m for r, m in zip(rows, ms) if r["step"] != "fused" and m < 0.010]
        last = f"{ms[-1] * 1e3:.1f} ({rows[-1]['kernel']})" if rows else "—"
        lines.append(f"| {name} | {len(rows)} | {fused * 1e3:.1f} | {len(short)} | {sum(short) * 1e3:.0f} | {sum(ms) * 1e3:.0f} | {last} |")
    emit(lines, a.md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
