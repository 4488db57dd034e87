"""Eager under each intermediate layout (session-eager-layouts.log.xz, this sitting), beside torch
eager of bench/results/2026-12-03-h200-suite-ab (another sitting, same day, same machine kind).

    python3 bench/results/2026-12-03-h200-own-sitting/eager_layouts.py > .../eager-layouts.md
"""
import gzip
import json
import lzma
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
torch = {}
with gzip.open(os.path.join(here, "..", "2026-12-03-h200-suite-ab", "families", "results.json.gz"), "rt") as f:
    for r in json.load(f)["records"]:
        if r["status"] == "ok" and r["variant"] == "torch":
            torch[r["problem"]] = r["median_ms"]
times, cur = {}, None
for line in lzma.open(os.path.join(here, "session-eager-layouts.log.xz"), "rt"):
    m = re.match(r"\s+--mode eager( --layout (\w+))?\s+time: median ([\d.]+)", line)
    if m:
        times[cur][m.group(2) or "column"] = float(m.group(3))
    elif line.strip() and not line.startswith((" ", "=", "ready", "cuBLAS")):
        cur = line.strip()
        times[cur] = {}
print("| network | eager column (default) ms | row ms | follow ms | best | best / column | torch eager ms (other sitting) | default ahead | best ahead |")
print("|---|---:|---:|---:|---|---:|---:|---|---|")
ahead_default = ahead_best = 0
for n, v in times.items():
    best = min(v, key=v.get)
    te = torch.get(n)
    a, b = te is not None and v["column"] < te, te is not None and v[best] < te
    ahead_default += a
    ahead_best += b
    print(f"| {n} | {v['column']:.3f} | {v['row']:.3f} | {v['follow']:.3f} | {best} | {v[best] / v['column']:.2f} | "
          f"{te if te is None else format(te, '.3f')} | {'yes' if a else 'no'} | {'yes' if b else 'no'} |")
print(f"\nEager ahead of torch eager on {ahead_default} of {len(times)} under the default layout, on {ahead_best} of "
      f"{len(times)} under each network's best layout (torch from another sitting).")
