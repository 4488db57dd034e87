"""Wall time of the sitting's peer jobs (each job a process: start, imports, CUDA context, then the
timed work). Run from this folder after `tar -xJf raw.txz`: python3 peer_wall.py > peer-wall.md"""
import json
import statistics

rows, every = [], []
for part in ("fam-peers1", "fam-peers2", "fam-peers3", "fam-peers3b"):
    recs = [r for r in json.load(open(f"{part}/results.json"))["records"] if r.get("status") != "skipped"]
    walls = [r.get("wall_s") or 0.0 for r in recs]
    # the timed work inside a job: its warm-up and timed runs (1 + 3), median each
    timed = [4 * (r.get("median_ms") or 0.0) / 1e3 for r in recs]
    every += walls
    rows.append((part, len(walls), sum(walls), min(walls), statistics.median(walls), max(walls), sum(timed)))
rows.append(("all", len(every), sum(every), min(every), statistics.median(every), max(every), sum(r[6] for r in rows)))
print("| part | jobs | wall s | min s | median s | max s | timed work s (4 runs a job) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for p, n, s, lo, med, hi, t in rows:
    print(f"| {p} | {n} | {s:.1f} | {lo:.1f} | {med:.1f} | {hi:.1f} | {t:.2f} |")
