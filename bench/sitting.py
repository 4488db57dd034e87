"""Helpers for a sitting's summary.py (bench/results/<sitting>/summary.py): the harness records'
medians, the spread of a list of ratios, JAX `highest` against tnrt compiled, eager's thinnest leads
over torch eager, and tnrt's times against an earlier sitting's. A summary puts bench/ (two folders above
its own) on sys.path and imports this module."""
import json
import statistics as st


def medians(path, variant=None):
    """{(variant, problem): median ms} of a harness results.json's successful records."""
    return {(r["variant"], r["problem"]): r["median_ms"] for r in json.load(open(path))["records"]
            if r.get("status") == "ok" and (variant is None or r["variant"] == variant)}


def spread(q):
    return f"geometric mean {st.geometric_mean(q):.3f}, min {min(q):.3f}, max {max(q):.3f} ({len(q)} networks)"


def print_eager_thinnest(tnrt, torch, title, n=4):
    """The n networks where torch eager's time over tnrt eager's is smallest, as a Markdown table."""
    rows = sorted((torch[("torch", p)] / e, p, e, torch[("torch", p)]) for (v, p), e in tnrt.items()
                  if v == "eager" and ("torch", p) in torch)
    print(f"## {title}\n\n| network | eager ms | torch eager ms | torch / eager |\n|---|---:|---:|---:|")
    for r, p, e, t in rows[:n]:
        print(f"| {p} | {e:.3f} | {t:.3f} | {r:.3f} |")


def ratios_against(tnrt, old, variant):
    """[(this sitting's time over the old one's, problem)] for tnrt's `variant` where both ran."""
    return [(tnrt[k] / old[k], k[1]) for k in tnrt if k[0] == variant and k in old]


def print_jax_against_compiled(tnrt, runs):
    """JAX `highest`'s medians in each harness run of `runs` (folders) against tnrt compiled's in
    `tnrt` (another run's medians), as a Markdown table and the ratios' spread."""
    print("## JAX `highest` against tnrt compiled (fam-tnrt's run)\n")
    print("| network | JAX run | tnrt compiled ms | JAX `highest` ms | JAX / tnrt |\n|---|---|---:|---:|---:|")
    q = []
    for run in runs:
        for (_, p), j in medians(f"{run}/results.json", "jax highest").items():
            c = tnrt[("compiled", p)]
            q.append(j / c)
            print(f"| {p} | {run} | {c:.3f} | {j:.3f} | {j / c:.2f} |")
    print(f"\nJAX / tnrt: {spread(q)}; tnrt ahead on {sum(x > 1 for x in q)} of {len(q)}.\n")


def print_against_old(tnrt, old, old_name, variants=("eager", "compiled"), slowest=0):
    """For each variant, the spread of this sitting's times over `old`'s (sitting `old_name`), and the
    `slowest` networks by that ratio when asked."""
    for v in variants:
        q = ratios_against(tnrt, old, v)
        print(f"- {v}: {spread([r for r, _ in q])}")
        if slowest:
            worst = sorted(q, reverse=True)[:slowest]
            print(f"  - slowest against {old_name}: " + ", ".join(f"{p} {r:.3f}" for r, p in worst))
