"""The figures the README derives from this sitting's records beyond families/table.md. Run from this
folder after `tar -xJf raw.txz && mkdir -p /tmp/06i && tar -xJf ../2026-12-06i-h200-suite/raw.txz -C /tmp/06i`:
python3 summary.py /tmp/06i/h200raw > summary.md"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))  # bench/, for sitting.py
from sitting import medians, print_against_old, print_eager_thinnest, print_jax_against_compiled  # noqa: E402

old_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/06i/h200raw"

tnrt = medians("fam-tnrt/results.json")
# JAX `highest` ran in three harness runs of the sitting: fam-tf32 (4 networks, beside compiled tf32),
# fam-jax1 (8) and fam-jax2 (4), the last two beside tnrt compiled. Each against fam-tnrt's compiled.
print_jax_against_compiled(tnrt, ("fam-tf32", "fam-jax1", "fam-jax2"))

torch = medians("fam-peers/results.json", "torch")
print_eager_thinnest(tnrt, torch, "eager against torch eager: the four thinnest")

old = medians(f"{old_dir}/fam-tnrt/results.json")
print("\n## tnrt, this sitting over 2026-12-06i (both H200; binaries 1a6d487 there, 4b00914 here)\n")
print_against_old(tnrt, old, "2026-12-06i", slowest=3)
