#!/usr/bin/env python3
"""Which steps hold a memory-bound network above its byte floor, and why: from a fam-roof harness folder
(session.sh fam-roof: compiled with a step profile, each step timed alone after the program's replays).

    python3 bench/holdback.py FAM_ROOF_DIR [--large-us US] [--top N] > holdback.md

For each network over 1.5x its byte floor: the program's time and floor, then its steps' time in the profile
split two ways, each step's excess being its time alone less its own bytes over the copy bandwidth:
- large steps, whose bytes take at least --large-us (default 10 us) at the copy bandwidth: their time alone
  is the GPU's, far more than a launch or a library's host cost, and their excess is bandwidth the kernel
  leaves unused (the table gives their time over their own floor);
- the rest: latency, a launch and a kernel's ramp (and, see below, the host's enqueue), more than bytes;
and the large steps with the largest excess (kernel, GEMM shape, bytes, rate). The profile replays the ops on one
stream with an event between them as the host enqueues them: where the GPU catches up with the host, a
step's time holds the host's enqueue of it (cuTENSOR's host cost for a small step is often more than the
kernel). A graph replay pays none of that, and overlaps concurrent lanes, so the profile's sum exceeds the
program's time and the small steps' excess is an upper bound: the split says where the excess may lie,
not its size in the replay.
"""
import argparse
import csv
import json
import os
import sys

from roofline import read_step_profile  # bench/roofline.py: tnrt's --step-profile CSV, typed


def load(d):
    bw = json.load(open(os.path.join(d, "raw", "bandwidth.json")))
    rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
    return bw, [r for r in rows if r["variant"] == "compiled"]


def profile_of(d, problem):
    path = os.path.join(d, "raw", f"roofline-{problem.lower()}-compiled.csv")
    return read_step_profile(path) if os.path.exists(path) else None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--large-us", type=float, default=10.0, help="a step is large when its bytes take this many "
                    "microseconds at the copy bandwidth")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--limit", type=float, default=1.5, help="the target, times the byte floor")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.dir):
        sys.exit(f"holdback: {a.dir}: not a folder")
    try:
        bw, rows = load(a.dir)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"holdback: {a.dir} is not a fam-roof harness folder ({e})")
    rate = bw["bandwidth_bytes_per_s"]
    large_bytes = a.large_us * 1e-6 * rate
    floor = lambda ss: sum(s["bytes"] for s in ss) / rate * 1e3  # noqa: E731
    ms = lambda ss: sum(s["ms"] for s in ss)  # noqa: E731
    excess = lambda s: s["ms"] - s["bytes"] / rate * 1e3  # noqa: E731  (one step's time alone over its floor)
    print(f"Copy bandwidth {rate / 1e9:.0f} GB/s ({bw.get('gpu')}); large steps: {a.large_us:g} us of bytes or more "
          f"({large_bytes / 1e6:.1f} MB).\n")
    print("| network | compiled ms | floor ms | x floor | profile ms | large steps: n, ms alone, their floor ms, x | "
          "the rest: n, ms alone | excess in large | excess in the rest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    detail = []
    for r in rows:
        if not r.get("x_floor") or not r.get("median_ms"):
            continue  # a job that failed or timed out: no time, no ratio
        x = float(r["x_floor"])
        try:
            steps = profile_of(a.dir, r["problem"])
        except ValueError as e:
            sys.exit(f"holdback: {e}")
        if x <= a.limit or steps is None:
            continue
        small = [s for s in steps if s["bytes"] < large_bytes]
        large = [s for s in steps if s["bytes"] >= large_bytes]
        ex_small, ex_large = sum(map(excess, small)), sum(map(excess, large))
        total_ex = ex_small + ex_large
        x_large = f"{ms(large) / floor(large):.2f}" if large else "-"
        print(f"| {r['problem']} | {float(r['median_ms']):.3f} | {float(r['floor_ms']):.3f} | {x:.2f} | {ms(steps):.3f} | "
              f"{len(large)}, {ms(large):.3f}, {floor(large):.3f}, {x_large} | {len(small)}, {ms(small):.3f} | "
              f"{ex_large / total_ex:.0%} | {ex_small / total_ex:.0%} |")
        kinds = {}
        for s in steps:
            k = kinds.setdefault(s["kernel"], [0, 0.0, 0.0])
            k[0] += 1
            k[1] += s["ms"]
            k[2] += excess(s)
        worst = sorted(large, key=excess, reverse=True)[: a.top]
        detail.append((r["problem"], kinds, worst))
    for name, kinds, worst in detail:
        print(f"\n### {name}\n")
        print("By kernel (steps, ms alone, excess ms): " + "; ".join(
            f"{k} {v[0]}, {v[1]:.3f}, {v[2]:.3f}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1][2])))
        if not worst:
            print("\nNo large steps.")
            continue
        print("\nThe large steps with the most excess:")
        print("\n| step | kernel | batch x m x n x k | bytes | ms alone | GB/s | excess ms |")
        print("|---:|---|---|---:|---:|---:|---:|")
        for s in worst:
            shape = " x ".join(f"{v:.0f}" for v in s["shape"]) if s["shape"] else "-"
            print(f"| {s['step']} | {s['kernel']} | {shape} | {s['bytes'] / 1e6:.2f} MB | {s['ms']:.4f} | "
                  f"{s['gbps']:.0f} | {excess(s):.4f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
