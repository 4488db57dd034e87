"""The step-timing A/B of this sitting as a table. Run from this folder after `tar -xJf raw.txz`:
python3 summary.py > summary.md
In fam-timing the variant 'compiled' timed each step by the GPU's time (--step-timing device, the
default of the binaries that ran, 9485295) and 'compiled enqueue timing' by events around the enqueue
(--step-timing enqueue, the default since)."""
import glob
import json
import os
import statistics as st

recs = [r for r in json.load(open("fam-timing/results.json"))["records"] if r.get("status") == "ok"]
runs = {}
for r in recs:
    v = "device" if r["variant"] == "compiled" else "enqueue"
    runs.setdefault(r["problem"], {}).setdefault(v, []).append(r["median_ms"])
# raw file names are lower-cased problem names; match them back
lower = {p.lower(): p for p in runs}
comp = {}
for f in glob.glob("fam-timing/raw/rep*-compiled*.json"):
    b = os.path.basename(f)[5:]
    v = "enqueue" if "enqueue" in b else "device"
    name = lower[b.replace("-compiled-enqueue-timing.json", "").replace("-compiled.json", "")]
    comp.setdefault(name, {}).setdefault(v, []).append(json.load(open(f))["compile_ms"])
print("| network | device ms (each compile) | enqueue ms (each compile) | device / enqueue | compile device / enqueue |")
print("|---|---|---|---:|---:|")
q, c = [], []
for p, v in runs.items():
    if "device" not in v or "enqueue" not in v:
        continue
    r = st.median(v["device"]) / st.median(v["enqueue"])
    k = st.median(comp[p]["device"]) / st.median(comp[p]["enqueue"])
    q.append(r)
    c.append(k)
    print(f"| {p} | {', '.join(f'{x:.4g}' for x in v['device'])} | {', '.join(f'{x:.4g}' for x in v['enqueue'])} | {r:.3f} | {k:.2f} |")
print(f"\nReplay time, device over enqueue: geometric mean {st.geometric_mean(q):.3f}, min {min(q):.3f}, max {max(q):.3f} ({len(q)} networks).")
print(f"Compile time, device over enqueue: geometric mean {st.geometric_mean(c):.2f}, min {min(c):.2f}, max {max(c):.2f}.")
