"""The figures the README derives from this sitting's records beyond families/table.md. Run from this
folder after `tar -xJf raw.txz && mkdir -p /tmp/06p && tar -xJf ../2026-12-06p-h200-show/raw.txz -C /tmp/06p`:
python3 summary.py /tmp/06p > summary.md"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))  # bench/, for sitting.py
from sitting import medians, print_against_old, print_eager_thinnest, print_jax_against_compiled  # noqa: E402

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06p"

tnrt = medians("fam-tnrt/results.json")
# JAX `highest` ran in three harness runs of the sitting: fam-tf32 (4 networks, beside compiled tf32),
# fam-jax1 (8) and fam-jax2 (4), the last two beside tnrt compiled. Each against fam-tnrt's compiled.
print_jax_against_compiled(tnrt, ("fam-tf32", "fam-jax1", "fam-jax2"))

torch = medians("fam-peers/results.json", "torch")
print_eager_thinnest(tnrt, torch, "eager against torch eager: the four thinnest")

old = medians(f"{old_dir}/fam-tnrt/results.json")
print("\n## tnrt, this sitting over 2026-12-06p (both H200; binaries 4b00914 there, bddc15d here)\n")
print_against_old(tnrt, old, "2026-12-06p", slowest=3)

# The host of this sitting ran the harness's fixed CPU workload in 26.5-36.2 ms a rep against 17.3-19.6 in
# 2026-12-06p's (the "host speed" lines of the logs): host-bound peers moved with it.
old_peers = medians(f"{old_dir}/fam-peers/results.json")
new_peers = medians("fam-peers/results.json")
print("\n## The peers, this sitting over 2026-12-06p (same wheels, slower host here)\n")
print_against_old(new_peers, old_peers, "2026-12-06p", variants=("torch", "torch graph", "cuTensorNet"))
