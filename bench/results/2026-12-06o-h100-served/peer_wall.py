"""The peers' job wall time, served (this sitting: harness --peer-server, one process per peer) against
spawned (2026-12-06n: a process per job), and their medians side by side. Run from this folder after
`tar -xJf raw.txz && tar -xJf ../2026-12-06n-h100-final/raw.txz -C /tmp/06n`:
python3 peer_wall.py /tmp/06n > peer-wall.md"""
import json
import statistics as st
import sys

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06n"


def records(path):
    return [r for r in json.load(open(path))["records"] if r.get("status") != "skipped"]


served = records("fam-peers/results.json")
spawned = [r for p in ("fam-peers1", "fam-peers2", "fam-peers3", "fam-peers3b") for r in records(f"{old_dir}/{p}/results.json")]
print("| peers | jobs | wall s | min s | median s | max s | processes |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, recs in (("spawned (2026-12-06n)", spawned), ("served (this sitting)", served)):
    w = [r.get("wall_s") or 0.0 for r in recs]
    procs = len({r.get("served_by_pid") for r in recs}) if name.startswith("served") else len(recs)
    print(f"| {name} | {len(w)} | {sum(w):.1f} | {min(w):.2f} | {st.median(w):.2f} | {max(w):.2f} | {procs} |")
old = {(r["variant"], r["problem"]): r["median_ms"] for r in spawned if r.get("status") == "ok"}
new = {(r["variant"], r["problem"]): r["median_ms"] for r in served if r.get("status") == "ok"}
print()
print("Timed medians, served over spawned (two machines, both H100; each job 1 warm-up + 3 runs):")
print()
print("| peer | networks | geometric mean | median | min | max |")
print("|---|---:|---:|---:|---:|---:|")
for v in ("torch", "torch graph", "cuTensorNet"):
    q = [new[k] / old[k] for k in new if k[0] == v and k in old]
    print(f"| {v} | {len(q)} | {st.geometric_mean(q):.3f} | {st.median(q):.3f} | {min(q):.3f} | {max(q):.3f} |")
