"""tnrt's own path (this sitting) against cuTensorNet's own path at its best of this sitting and of
the earlier merged table (the host was slower in this sitting: cuTensorNet's setup and tnrt's
search took 2-4x their earlier times), per network, with the geometric mean.

    python3 bench/results/2026-12-03-h200-own-sitting/against_best_cutensornet.py > .../against-best-cutensornet.md
"""
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))
today = json.load(open(os.path.join(here, "own-paths", "own_paths.json")))["rows"]
earlier = {r["network"]: r for r in json.load(open(os.path.join(here, "..", "2026-12-03-h200-final", "own-paths-merged", "own_paths.json")))["rows"]}
print("| network | tnrt own ms (this sitting) | cuTensorNet own ms, this sitting | cuTensorNet own ms, earlier | best cuTensorNet / tnrt |")
print("|---|---:|---:|---:|---:|")
ratios = []
for r in today:
    t = r["tnrt"]["exec"]["ms"]
    q = r["cutensornet_run"]["ms"]
    qe = earlier[r["network"]]["cutensornet_run"]["ms"]
    ratios.append(min(q, qe) / t)
    print(f"| {r['network']} | {t:.3g} | {q:.3g} | {qe:.3g} | {ratios[-1]:.2f} |")
ahead = sum(x > 1 for x in ratios)
print(f"\ntnrt ahead on {ahead} of {len(ratios)}; geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x.")
