"""The memory-bound networks' compiled times against their launches (this sitting's fam-tnrt records).
Run from this folder after `tar -xJf raw.txz`: python3 launches.py > launches.md

For each of the 15 networks memory-bound at this sitting's copy bandwidth: the steps, the launches
of the compiled program (its `kernels` counts: one per fused launch, library step, cuBLAS step or
tiled step; a library step can launch more than one kernel, so these are at least the launches),
the byte floor, the compiled time, and the time beyond the floor per launch. The last columns take
the cheapest launch this sitting measured (mpo-heis-L40-D64-f64: 119 launches of tiny f64 steps,
2.8 us each beyond its floor) as a lower limit per launch: floor + launches x 2.8 us is the least a
program of that many launches took here, and `launches for 1.5x` is how many such launches fit in
half the floor."""
import glob
import json

BW = json.load(open("fam-tnrt/raw/bandwidth.json"))["bandwidth_bytes_per_s"]
NETS = ["reference-tree-f32-const", "qaoa-maxcut-n24-p4", "regular4-n70", "rqc-5x6-c12-amp", "qaoa-zz-n60-p4",
        "regular3-n130", "regular3-n160", "rqc-4x5-c14-amp", "lattice-10x10-d4", "hyper-n100-r3-e4",
        "peps-norm-5x5-D4", "hyper-n90-r3-e3", "lm-sliding-d3-h4-o16-b128", "lm-first-last-d2-h8-o64",
        "mpo-heis-L40-D64-f64"]

rows = []
for n in NETS:
    d = json.load(open(glob.glob(f"fam-tnrt/raw/rep1-{n.lower()}-compiled.json")[0]))
    launches = sum(d["kernels"].values())
    floor = d["problem"]["rw_bytes"] / BW * 1e3
    rows.append((n, d["problem"]["steps"], launches, floor, d["median_ms"], d["kernels"]))
per_launch = min((m - f) / L for _, _, L, f, m, _ in rows) * 1e3  # us
print(f"Copy bandwidth {BW / 1e9:.0f} GB/s (NVIDIA H100 80GB HBM3, 2026-12-06). Cheapest launch beyond the floor: "
      f"{per_launch:.1f} us.\n")
print("| network | steps | launches | floor ms | compiled ms | x floor | (compiled - floor) / launch, us "
      "| floor + launches x cheapest, x floor | launches for 1.5x | kernels |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for n, steps, L, f, m, k in rows:
    limit = f + L * per_launch / 1e3
    fit = int(0.5 * f * 1e3 / per_launch)
    kinds = ", ".join(f"{a} {b}" for a, b in k.items())
    print(f"| {n} | {steps} | {L} | {f:.3f} | {m:.3f} | {m / f:.2f} | {(m - f) / L * 1e3:.1f} | {limit / f:.2f} | {fit} | {kinds} |")
