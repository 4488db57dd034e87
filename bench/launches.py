"""The memory-bound networks' compiled times against their launches, from one sitting's harness
records: python3 bench/launches.py FOLDER > FOLDER/launches.md, where FOLDER holds the merged
families/results.csv and the fam-tnrt/ harness folder (from the sitting's raw.txz).

For each network memory-bound at the sitting's copy bandwidth (the merged table's floor_bound, the
-random fills left out): the steps, the launches of the compiled program (its `kernels` counts: one
per fused launch, library step, cuBLAS step or tiled step; a library step can launch more than one
kernel, so these are at least the launches), the byte floor, fam-tnrt's compiled time, and the time
beyond the floor per launch. The last columns take the cheapest launch of the sitting as a lower
limit per launch: floor + launches x that is the least a program of that many launches took there,
and `launches for 1.5x` is how many such launches fit in half the floor."""
import csv
import glob
import json
import os
import sys


def main(folder):
    bw = json.load(open(os.path.join(folder, "fam-tnrt/raw/bandwidth.json")))
    nets = [r["problem"] for r in csv.DictReader(open(os.path.join(folder, "families/results.csv")))
            if r["variant"] == "compiled" and r["floor_bound"] == "memory" and not r["problem"].endswith("-random")]
    rows = []
    for n in nets:
        d = json.load(open(glob.glob(os.path.join(folder, f"fam-tnrt/raw/rep1-{n.lower()}-compiled.json"))[0]))
        floor = d["problem"]["rw_bytes"] / bw["bandwidth_bytes_per_s"] * 1e3
        rows.append((n, d["problem"]["steps"], sum(d["kernels"].values()), floor, d["median_ms"], d["kernels"]))
    per_launch = min((m - f) / L for _, _, L, f, m, _ in rows) * 1e3  # us
    print(f"Copy bandwidth {bw['bandwidth_bytes_per_s'] / 1e9:.0f} GB/s ({bw['gpu']}). Cheapest launch beyond the floor: "
          f"{per_launch:.1f} us.\n")
    print("| network | steps | launches | floor ms | compiled ms | x floor | (compiled - floor) / launch, us "
          "| floor + launches x cheapest, x floor | launches for 1.5x | kernels |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, steps, L, f, m, k in rows:
        kinds = ", ".join(f"{a} {b}" for a, b in k.items())
        print(f"| {n} | {steps} | {L} | {f:.3f} | {m:.3f} | {m / f:.2f} | {(m - f) / L * 1e3:.1f} | "
              f"{(f + L * per_launch / 1e3) / f:.2f} | {int(0.5 * f * 1e3 / per_launch)} | {kinds} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
