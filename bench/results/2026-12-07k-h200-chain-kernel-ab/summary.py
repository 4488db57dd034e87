# From this folder: python3 summary.py BANDWIDTH_GBPS CHAINS_TGZ > summary-X.md (each chain
# bytes moved once from ../cpu-2026-12-07-chains/chains.txt, matched by the chain's last step).
import csv, io, json, re, sys, tarfile

bw = float(sys.argv[1])  # copy bandwidth of this GPU model, GB/s
t = tarfile.open(sys.argv[2])
files = {m.name.split("/")[-1]: m for m in t.getmembers() if m.isfile()}
once = {}  # (network file stem, last step) -> MB moved once
net = None
for line in open("../cpu-2026-12-07-chains/chains.txt"):
    m = re.match(r"(\S+) \(", line)
    if m:
        net = "reference" if "tensornetwork_permutation" in m.group(1) else m.group(1).split("/")[-1].removesuffix(".json")
        continue
    m = re.match(r"\s+steps (\d+)\.\.(\d+) \(\d+\): ([\d.]+) MB once", line)
    if m and net:
        once[(net, int(m.group(2)))] = float(m.group(3))
nets = []
for name in files:
    m = re.match(r"(.+)-off-\d+\.json$", name)
    if m and m.group(1) not in nets:
        nets.append(m.group(1))
runs = lambda n, c: [json.load(t.extractfile(files[f])) for f in sorted(files) if re.fullmatch(re.escape(n) + rf"-{c}-\d+\.json", f)]
print(f"| network | --chains off, ms | auto, ms | on, ms | byte floor ms ({bw:.0f} GB/s) | off x floor | auto x floor | on x floor | chains kept (auto) | chains (on) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
per_chain = []
for n in nets:
    r = {c: runs(n, c) for c in ("off", "auto", "on")}
    if not r["off"]:
        continue
    floor = r["off"][0]["floor_ms"] * r["off"][0]["bandwidth_gbps"] / bw
    med = {c: (min(x["median_ms"] for x in r[c]) if r[c] else float("nan")) for c in r}
    kept = lambda c: (r[c][0].get("kernels", {}) or {}).get("chain", 0) if r[c] else 0
    print(f"| {n} | {med['off']:.3f} | {med['auto']:.3f} | {med['on']:.3f} | {floor:.3f} | {med['off']/floor:.2f} | {med['auto']/floor:.2f} | {med['on']/floor:.2f} | {kept('auto')} | {kept('on')} |")
    prof = files.get(f"{n}-steps-on.csv")
    if prof is None:
        continue
    for row in csv.DictReader(io.TextIOWrapper(t.extractfile(prof))):
        if row["kernel"] != "chain":
            continue
        mb = once.get((n, int(row["step"])))
        us = float(row["ms"]) * 1e3
        per_chain.append((n, int(row["step"]), us, mb))
print()
print(f"Each chain under `--chains on` (step profile): its time against its bytes moved once (X_0 read, X_m written) at {bw:.0f} GB/s.")
print()
print("| network | last step | chain us | MB once | floor us | x own floor |")
print("|---|---:|---:|---:|---:|---:|")
for n, s, us, mb in per_chain:
    if mb is None:
        print(f"| {n} | {s} | {us:.0f} | - | - | - |")
    else:
        fl = mb * 1e6 / (bw * 1e9) * 1e6
        print(f"| {n} | {s} | {us:.0f} | {mb:.1f} | {fl:.1f} | {us/fl:.2f} |")
