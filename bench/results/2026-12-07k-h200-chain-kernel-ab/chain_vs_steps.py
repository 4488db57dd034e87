# From this folder: python3 chain_vs_steps.py chains-cd56b13.tgz > chain-vs-steps.md
# Each chain kept under --chains auto (its step profile) against the same steps under --chains off:
# the chain's time, and the sum of its member steps' times. A chain's members are the ops marked
# "chain member" since the previous chain op in the profile's order (other ops may run between them);
# this holds where one chain ends before the next begins, as in the three networks profiled here.
import csv, io, sys, tarfile

t = tarfile.open(sys.argv[1])
files = {m.name.split("/")[-1]: m for m in t.getmembers() if m.isfile()}
rows = lambda f: list(csv.DictReader(io.TextIOWrapper(t.extractfile(files[f]))))
print("| network | chain's last step | member steps | chain us (auto) | steps us (off) |")
print("|---|---:|---|---:|---:|")
for name in sorted(files):
    if not name.endswith("-steps-auto.csv") or name.replace("-auto", "-off") not in files:
        continue
    net = name.removesuffix("-steps-auto.csv")
    auto, off = rows(name), rows(name.replace("-auto", "-off"))
    off_ms = {r["step"]: float(r["ms"]) for r in off}
    members = []
    for r in auto:
        if r["kernel"] == "chain member":
            members.append(r["step"])
        elif r["kernel"] == "chain":
            members.append(r["step"])
            steps_us = sum(off_ms[s] for s in members) * 1000
            print(f"| {net} | {r['step']} | {' '.join(members)} | {float(r['ms']) * 1000:.1f} | {steps_us:.1f} |")
            members = []
