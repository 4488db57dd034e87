# From this folder: python3 summary.py > summary.md (reads chains.tgz).
import json, tarfile, io, csv, re
t = tarfile.open("chains.tgz")
files = {m.name.split("/")[-1]: m for m in t.getmembers() if m.isfile()}
nets = ["reference", "rqc-5x6-c12-amp", "qaoa-zz-n60-p4", "regular3-n130", "lattice-10x10-d4"]
bw_h100 = 3036.0  # GB/s, measured on this H100 model in bench/results/2026-12-07h-h100-final-roof
print("| network | compiled --chains off, ms | --chains auto, ms | auto / off | byte floor ms (3036 GB/s) | off x floor | auto x floor | chains kept | steps in them | chain ops' profile times, us |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for n in nets:
    off = json.load(t.extractfile(files[f"{n}-off-1.json"]))
    on = json.load(t.extractfile(files[f"{n}-auto-2.json"]))
    floor = off["floor_ms"] * off["bandwidth_gbps"] / bw_h100
    k = on.get("kernels", {})
    kept = k.get("chain", 0) if isinstance(k, dict) else 0
    members = k.get("chain member", 0) if isinstance(k, dict) else 0
    rows = list(csv.DictReader(io.TextIOWrapper(t.extractfile(files[f"{n}-steps.csv"]))))
    prof = " ".join("%.0f" % (float(r["ms"]) * 1e3) for r in rows if r["kernel"] == "chain")
    a, b = off["median_ms"], on["median_ms"]
    print(f"| {n} | {a:.3f} | {b:.3f} | {b/a:.3f} | {floor:.3f} | {a/floor:.2f} | {b/floor:.2f} | {kept} | {kept+members} | {prof} |")
