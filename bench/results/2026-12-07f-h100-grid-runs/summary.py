"""Summary of session.sh gridsteps (compiled --grid-steps off and auto, in the order off auto auto off,
per network): python3 summary.py DIR, DIR holding gridsteps/*.json (gridsteps.tgz unpacked). Prints
Markdown: each setting's two medians, their mean, auto over off, the steps in grid runs, the floor,
compile time, and the layout of the first auto run ("+branches": concurrent lanes, which never try
grid runs)."""
import glob
import json
import os
import statistics
import sys

root = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(root, "gridsteps", "*.json"))):
    base = os.path.basename(f)[:-5]
    net, setting, k = base.rsplit("-", 2)
    try:
        d = json.load(open(f))
    except Exception:
        continue
    runs.setdefault(net, {}).setdefault(setting, []).append(d)

print("| network | floor ms at 4250 GB/s | off ms (2 runs) | auto ms (2 runs) | auto / off | steps in grid runs | off x floor | auto x floor | compile ms off / auto | layout (auto) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
ratios = []
for net, s in runs.items():
    off, auto = s.get("off", []), s.get("auto", [])
    if not off or not auto:
        continue
    mo = statistics.mean(d["median_ms"] for d in off)
    ma = statistics.mean(d["median_ms"] for d in auto)
    floor = off[0].get("floor_ms") or 0
    grid = [d.get("kernels", {}).get("grid", 0) for d in auto]
    ratios.append(ma / mo)
    fmt = lambda ds: " / ".join(f"{d['median_ms']:.3f}" for d in ds)
    print(f"| {net} | {floor:.3f} | {fmt(off)} | {fmt(auto)} | {ma / mo:.3f} | {', '.join(map(str, grid))} | "
          f"{mo / floor if floor else 0:.2f} | {ma / floor if floor else 0:.2f} | "
          f"{statistics.mean(d.get('compile_ms', 0) for d in off):.0f} / {statistics.mean(d.get('compile_ms', 0) for d in auto):.0f} | "
          f"{auto[0].get('layout', '')} |")
if ratios:
    g = statistics.geometric_mean(ratios)
    print(f"\nauto / off: geometric mean {g:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f} ({len(ratios)} networks)")
