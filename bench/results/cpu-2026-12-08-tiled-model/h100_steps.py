"""The H100 step-profile figures this folder's README quotes, from bench/results/2026-12-07h-h100-final-roof
(fam-roof.txz, unpacked to DIR): each step's time over its own byte floor at the sitting's copy bandwidth.

    mkdir -p /tmp/roof && tar -xJf bench/results/2026-12-07h-h100-final-roof/fam-roof.txz -C /tmp/roof
    python3 bench/results/cpu-2026-12-08-tiled-model/h100_steps.py /tmp/roof/fam-roof > bench/results/cpu-2026-12-08-tiled-model/h100-steps.md
"""
import csv
import json
import os
import sys

d = sys.argv[1]
rate = json.load(open(os.path.join(d, "raw", "bandwidth.json")))["bandwidth_bytes_per_s"]


def rows(net):
    return list(csv.DictReader(open(os.path.join(d, "raw", f"roofline-{net}-compiled.csv"))))


def x_floor(r):
    return float(r["ms"]) / (float(r["bytes"]) / rate * 1e3)


print(f"Copy bandwidth {rate / 1e9:.0f} GB/s. Large steps: 30 MB or more.\n")
print("| network | kernel | steps | bytes (MB) | ms | x own floor |")
print("|---|---|---:|---|---|---|")
for net in ("qaoa-zz-n60-p4", "lattice-10x10-d4"):
    groups = {}
    for r in rows(net):
        if float(r["bytes"]) >= 30e6 and r["step"].isdigit():
            groups.setdefault((r["kernel"].split(" ")[0], r["bytes"]), []).append(r)
    for (kernel, b), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], float(kv[0][1]))):
        ms = [float(r["ms"]) * 1e3 for r in rs]
        xs = [x_floor(r) for r in rs]
        print(f"| {net} | {kernel} | {len(rs)} | {float(b) / 1e6:.1f} | {min(ms):.1f}-{max(ms):.1f} us | {min(xs):.2f}-{max(xs):.2f} |")
print("\nlattice-10x10-d4's 16 x 262144 x 16 steps, each (step: GB/s):\n")
lat = [r for r in rows("lattice-10x10-d4") if (r["m"], r["n"], r["k"]) == ("16", "262144", "16")]
print(", ".join(f"{r['step']}: {float(r['gbps']):.0f}" for r in lat))
