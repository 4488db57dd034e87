# From this folder: python3 ab_summary.py ab-d676561.tgz > summary-ab.md
# 'old' is the tnrt of this session's code with e08b2a0's chain kernel (chain.cu compiled from a72cc0b~2,
# relinked into the same tool); 'new' the same code with d676561's unrolled kernel. Compiled medians in
# the order old new new old, then each build's --step-profile: every chain's time, matched by its
# last step where both builds kept that chain.
import csv, io, json, re, sys, tarfile

t = tarfile.open(sys.argv[1])
files = {m.name.split("/")[-1]: m for m in t.getmembers() if m.isfile()}
nets = []
for name in sorted(files):
    m = re.match(r"(.+)-(old|new)-\d+\.json$", name)
    if m and m.group(1) not in nets:
        nets.append(m.group(1))
runs = lambda n, v: [json.load(t.extractfile(files[f])) for f in sorted(files) if re.fullmatch(re.escape(n) + rf"-{v}-\d+\.json", f)]
def chains(n, v):
    f = files.get(f"{n}-{v}-steps.csv")
    if f is None:
        return {}
    return {int(r["step"]): float(r["ms"]) * 1000 for r in csv.DictReader(io.TextIOWrapper(t.extractfile(f))) if r["kernel"] == "chain"}
print("| network | old ms (runs 1, 4) | new ms (runs 2, 3) | new / old | chains kept old | new |")
print("|---|---:|---:|---:|---:|---:|")
per = []
for n in nets:
    o, w = runs(n, "old"), runs(n, "new")
    mo, mw = min(x["median_ms"] for x in o), min(x["median_ms"] for x in w)
    k = lambda r: (r[0].get("kernels", {}) or {}).get("chain", 0)
    print(f"| {n} | {' / '.join('%.3f' % x['median_ms'] for x in o)} | {' / '.join('%.3f' % x['median_ms'] for x in w)} | {mw / mo:.2f} | {k(o)} | {k(w)} |")
    co, cw = chains(n, "old"), chains(n, "new")
    for s in sorted(set(co) & set(cw)):
        per.append((n, s, co[s], cw[s]))
print()
print("Chains both builds kept in their step profiles (--warmup 3 --repeat 10), matched by last step:")
print()
print("| network | last step | old us | new us | new / old |")
print("|---|---:|---:|---:|---:|")
for n, s, a, b in per:
    print(f"| {n} | {s} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
