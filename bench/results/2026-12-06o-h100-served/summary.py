"""The figures the README derives from this sitting's records beyond families/table.md. Run from this
folder after `tar -xJf raw.txz && mkdir -p /tmp/06n && tar -xJf ../2026-12-06n-h100-final/raw.txz -C /tmp/06n`:
python3 summary.py /tmp/06n > summary.md"""
import json
import statistics as st
import sys

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06n"


def medians(path, variant=None):
    return {(r["variant"], r["problem"]): r["median_ms"] for r in json.load(open(path))["records"]
            if r.get("status") == "ok" and (variant is None or r["variant"] == variant)}


def spread(q):
    return f"geometric mean {st.geometric_mean(q):.3f}, min {min(q):.3f}, max {max(q):.3f} ({len(q)} networks)"


jax = medians("fam-jax/results.json")
nets = [p for v, p in jax if v == "jax highest"]
print("## JAX `highest` beside tnrt compiled (fam-jax, one harness run)\n")
print("| network | tnrt compiled ms | JAX `highest` ms | JAX / tnrt |\n|---|---:|---:|---:|")
q = []
for p in nets:
    c, j = jax[("compiled", p)], jax[("jax highest", p)]
    q.append(j / c)
    print(f"| {p} | {c:.3f} | {j:.3f} | {j / c:.2f} |")
print(f"\nJAX / tnrt: {spread(q)}; tnrt ahead on {sum(x > 1 for x in q)} of {len(q)}.\n")

tnrt = medians("fam-tnrt/results.json")
static = medians("fams/results.json")
q = [static[k] / tnrt[("compiled", k[1])] for k in static if ("compiled", k[1]) in tnrt]
print(f"## compiled static (fams) over compiled (fam-tnrt)\n\n{spread(q)}.\n")

torch = medians("fam-peers/results.json", "torch")
rows = sorted((torch[("torch", p)] / e, p, e, torch[("torch", p)]) for (v, p), e in tnrt.items()
              if v == "eager" and ("torch", p) in torch)
print("## eager against torch eager: the four thinnest leads\n\n| network | eager ms | torch eager ms | torch / eager |\n|---|---:|---:|---:|")
for r, p, e, t in rows[:4]:
    print(f"| {p} | {e:.3f} | {t:.3f} | {r:.3f} |")

old = medians(f"{old_dir}/fam-tnrt/results.json")
print("\n## tnrt, this sitting over 2026-12-06n (two H100 machines, the same binaries, both spawned)\n")
for v in ("eager", "compiled"):
    q = [tnrt[k] / old[k] for k in tnrt if k[0] == v and k in old]
    print(f"- {v}: {spread(q)}")

print("\n## compiled in fam-tnrt and in fam-jax (two harness runs of this sitting), where they differ by over 5%\n")
for (v, p), j in jax.items():
    if v == "compiled" and abs(j / tnrt[("compiled", p)] - 1) > 0.05:
        print(f"- {p}: {tnrt[('compiled', p)]:.3f} ms in fam-tnrt, {j:.3f} in fam-jax")
