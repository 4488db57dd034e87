"""Summary of session.sh gridtune (compiled with --grid-steps off, and on under other limits and block
counts): python3 tune_summary.py DIR, DIR holding gridtune/*.json (gridtune.tgz unpacked). Markdown: per
network, each setting's median, its ratio to off, and the steps in grid runs."""
import glob
import json
import os
import sys

root = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(root, "gridtune", "*.json"))):
    net, tag = os.path.basename(f)[:-5].rsplit("-", 1)
    try:
        d = json.load(open(f))
    except Exception:
        continue
    rows.setdefault(net, {})[tag] = d
order = ["off", "on_1048576_0", "on_65536_0", "on_16384_0", "on_4096_0", "on_65536_16", "on_16384_8", "on_4096_4", "on_65536_0_4096"]
label = {"off": "off", "on_1048576_0": "2^20", "on_65536_0": "2^16", "on_16384_0": "2^14", "on_4096_0": "2^12",
         "on_65536_16": "2^16, 16 blocks", "on_16384_8": "2^14, 8 blocks", "on_4096_4": "2^12, 4 blocks", "on_65536_0_4096": "2^16, 4096 terms"}
print("Each cell: median ms (over off), steps in grid runs. Settings: largest result of a grid step, blocks (default: one a thread"
      " per element of the widest step, at most one a multiprocessor), terms a result element (default 512).\n")
print("| network | layout (off) | " + " | ".join(label[t] for t in order) + " |")
print("|---|---|" + "---:|" * len(order))
for net, r in rows.items():
    off = r.get("off", {}).get("median_ms")
    cells = []
    for t in order:
        d = r.get(t)
        if d is None or "median_ms" not in d:
            cells.append("-")
            continue
        g = d.get("kernels", {}).get("grid", 0)
        cells.append(f"{d['median_ms']:.3f}" if t == "off" else f"{d['median_ms']:.3f} ({d['median_ms'] / off:.3f}), {g}")
    print(f"| {net} | {r.get('off', {}).get('layout', '')} | " + " | ".join(cells) + " |")
