"""Summary of session.sh dotab or ab (python3 summary.py DIR [KERNEL]): each network's compiled medians under the
older build and this one (order old new new old), the programs' layouts, and the KERNEL op (default dot) of each
build's step profile beside its byte floor at the H100's copy bandwidth (3035 GB/s, bench/results/2026-12-06e-h100-suite)."""
import csv, glob, json, os, statistics, sys

d = sys.argv[1]
kern = sys.argv[2] if len(sys.argv) > 2 else "dot"
bw = 3035e9
nets = sorted({os.path.basename(f).rsplit("-", 2)[0] for f in glob.glob(f"{d}/*-old-1.json")})
print("| network | old ms (1, 4) | new ms (2, 3) | new / old | layouts (1, 2, 3, 4) | " + kern + " op old us | " + kern + " op new us | " + kern + " floor us |")
print("|---|---|---|---:|---|---:|---:|---:|")
for n in nets:
    t = {k: json.load(open(f"{d}/{n}-{v}-{k}.json")) for k, v in ((1, "old"), (2, "new"), (3, "new"), (4, "old"))}
    med = {k: t[k]["median_ms"] for k in t}
    old, new = statistics.mean([med[1], med[4]]), statistics.mean([med[2], med[3]])
    dot = {}
    for v in ("old", "new"):
        rows = [r for r in csv.DictReader(open(f"{d}/{n}-{v}-steps.csv")) if r["kernel"] == kern]
        dot[v] = rows[0] if rows else None
    fl = int(dot["new"]["bytes"]) / bw * 1e6 if dot["new"] else float("nan")
    f = lambda r: "%.1f" % (float(r["ms"]) * 1000) if r else "-"
    print(f"| {n} | {med[1]:.4f}, {med[4]:.4f} | {med[2]:.4f}, {med[3]:.4f} | {new / old:.3f} | {', '.join(t[k].get('layout', '?').split(' (')[0].replace('+branches', '+b') for k in (1, 2, 3, 4))} | {f(dot['old'])} | {f(dot['new'])} | {fl:.1f} |")
