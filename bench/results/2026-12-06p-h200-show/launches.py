"""The memory-bound networks' compiled times against their launches (this sitting's fam-tnrt records).
Run from this folder after `tar -xJf raw.txz`: python3 launches.py > launches.md

For each network memory-bound at this sitting's copy bandwidth (the harness's floor_bound): the steps, the launches
of the compiled program (its `kernels` counts: one per fused launch, library step, cuBLAS step or
tiled step; a library step can launch more than one kernel, so these are at least the launches),
the byte floor, the compiled time, and the time beyond the floor per launch. The last columns take
the cheapest launch this sitting measured as a lower limit per launch: floor + launches x 2.8 us is the least a
program of that many launches took here, and `launches for 1.5x` is how many such launches fit in
half the floor."""
import csv
import glob
import json

BW = json.load(open("fam-tnrt/raw/bandwidth.json"))["bandwidth_bytes_per_s"]
NETS = [r["problem"] for r in csv.DictReader(open("families/results.csv"))
        if r["variant"] == "compiled" and r["floor_bound"] == "memory" and not r["problem"].endswith("-random")]

rows = []
for n in NETS:
    d = json.load(open(glob.glob(f"fam-tnrt/raw/rep1-{n.lower()}-compiled.json")[0]))
    launches = sum(d["kernels"].values())
    floor = d["problem"]["rw_bytes"] / BW * 1e3
    rows.append((n, d["problem"]["steps"], launches, floor, d["median_ms"], d["kernels"]))
per_launch = min((m - f) / L for _, _, L, f, m, _ in rows) * 1e3  # us
print(f"Copy bandwidth {BW / 1e9:.0f} GB/s (NVIDIA H200, 2026-12-06). Cheapest launch beyond the floor: "
      f"{per_launch:.1f} us.\n")
print("| network | steps | launches | floor ms | compiled ms | x floor | (compiled - floor) / launch, us "
      "| floor + launches x cheapest, x floor | launches for 1.5x | kernels |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for n, steps, L, f, m, k in rows:
    limit = f + L * per_launch / 1e3
    fit = int(0.5 * f * 1e3 / per_launch)
    kinds = ", ".join(f"{a} {b}" for a, b in k.items())
    print(f"| {n} | {steps} | {L} | {f:.3f} | {m:.3f} | {m / f:.2f} | {(m - f) / L * 1e3:.1f} | {limit / f:.2f} | {fit} | {kinds} |")
