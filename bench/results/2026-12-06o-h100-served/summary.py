"""The figures the README derives from this sitting's records beyond families/table.md. Run from this
folder after `tar -xJf raw.txz && mkdir -p /tmp/06n && tar -xJf ../2026-12-06n-h100-final/raw.txz -C /tmp/06n`:
python3 summary.py /tmp/06n > summary.md"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))  # bench/, for sitting.py
from sitting import medians, print_against_old, print_eager_thinnest, spread  # noqa: E402

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06n"


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
print_eager_thinnest(tnrt, torch, "eager against torch eager: the four thinnest leads")

old = medians(f"{old_dir}/fam-tnrt/results.json")
print("\n## tnrt, this sitting over 2026-12-06n (two H100 machines, the same binaries, both spawned)\n")
print_against_old(tnrt, old, "2026-12-06n")

print("\n## compiled in fam-tnrt and in fam-jax (two harness runs of this sitting), where they differ by over 5%\n")
for (v, p), j in jax.items():
    if v == "compiled" and abs(j / tnrt[("compiled", p)] - 1) > 0.05:
        print(f"- {p}: {tnrt[('compiled', p)]:.3f} ms in fam-tnrt, {j:.3f} in fam-jax")
