"""suite-mixed-results.csv: the seventh session's suite results (peers and every tnrt variant but
`compiled`, bench/results/2026-12-03-h200-suite-ab/families/results.csv) with this sitting's tnrt
compiled rows (compiled-suite-results.csv) in place of its own, each given the older row's floors.
Two sittings: not a same-sitting comparison.

    python3 bench/results/2026-12-03-h200-final/mix_sittings.py
    python3 bench/suite_table.py bench/results/2026-12-03-h200-final/suite-mixed-results.csv --md bench/results/2026-12-03-h200-final/suite-mixed-sittings.md
"""
import csv
import os

here = os.path.dirname(os.path.abspath(__file__))
old = list(csv.DictReader(open(os.path.join(here, "..", "2026-12-03-h200-suite-ab", "families", "results.csv"))))
new = list(csv.DictReader(open(os.path.join(here, "compiled-suite-results.csv"))))
fields = list(old[0].keys())
floor = {r["problem"]: r for r in old if r["floor_ms"]}
rows = [r for r in old if not (r["kind"] == "tnrt" and r["variant"] == "compiled")]
for r in new:
    f = floor.get(r["problem"])
    if f:
        for k in ("floor_ms", "byte_floor_ms", "flop_floor_ms", "floor_bound"):
            r[k] = f[k]
        if r["floor_ms"]:
            r["x_floor"] = str(float(r["median_ms"]) / float(r["floor_ms"]))
    rows.append(r)
with open(os.path.join(here, "suite-mixed-results.csv"), "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in fields})
