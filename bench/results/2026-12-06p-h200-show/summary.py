"""The figures the README derives from this sitting's records beyond families/table.md. Run from this
folder after `tar -xJf raw.txz && mkdir -p /tmp/06i && tar -xJf ../2026-12-06i-h200-suite/raw.txz -C /tmp/06i`:
python3 summary.py /tmp/06i/h200raw > summary.md"""
import json
import statistics as st
import sys

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06i/h200raw"


def medians(path, variant=None):
    return {(r["variant"], r["problem"]): r["median_ms"] for r in json.load(open(path))["records"]
            if r.get("status") == "ok" and (variant is None or r["variant"] == variant)}


def spread(q):
    return f"geometric mean {st.geometric_mean(q):.3f}, min {min(q):.3f}, max {max(q):.3f} ({len(q)} networks)"


tnrt = medians("fam-tnrt/results.json")
# JAX `highest` ran in three harness runs of the sitting: fam-tf32 (4 networks, beside compiled tf32),
# fam-jax1 (8) and fam-jax2 (4), the last two beside tnrt compiled. Each against fam-tnrt's compiled.
print("## JAX `highest` against tnrt compiled (fam-tnrt's run)\n")
print("| network | JAX run | tnrt compiled ms | JAX `highest` ms | JAX / tnrt |\n|---|---|---:|---:|---:|")
q = []
for run in ("fam-tf32", "fam-jax1", "fam-jax2"):
    m = medians(f"{run}/results.json", "jax highest")
    for (_, p), j in m.items():
        c = tnrt[("compiled", p)]
        q.append(j / c)
        print(f"| {p} | {run} | {c:.3f} | {j:.3f} | {j / c:.2f} |")
print(f"\nJAX / tnrt: {spread(q)}; tnrt ahead on {sum(x > 1 for x in q)} of {len(q)}.\n")

torch = medians("fam-peers/results.json", "torch")
rows = sorted((torch[("torch", p)] / e, p, e, torch[("torch", p)]) for (v, p), e in tnrt.items()
              if v == "eager" and ("torch", p) in torch)
print("## eager against torch eager: the four thinnest\n\n| network | eager ms | torch eager ms | torch / eager |\n|---|---:|---:|---:|")
for r, p, e, t in rows[:4]:
    print(f"| {p} | {e:.3f} | {t:.3f} | {r:.3f} |")

old = medians(f"{old_dir}/fam-tnrt/results.json")
print("\n## tnrt, this sitting over 2026-12-06i (both H200; binaries 1a6d487 there, 4b00914 here)\n")
for v in ("eager", "compiled"):
    q = [tnrt[k] / old[k] for k in tnrt if k[0] == v and k in old]
    print(f"- {v}: {spread(q)}")
    worst = sorted(((tnrt[k] / old[k], k[1]) for k in tnrt if k[0] == v and k in old), reverse=True)[:3]
    print("  - slowest against 2026-12-06i: " + ", ".join(f"{p} {r:.3f}" for r, p in worst))
