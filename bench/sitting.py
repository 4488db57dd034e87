"""Helpers for a sitting's summary.py (bench/results/<sitting>/summary.py): the harness records'
medians, the spread of a list of ratios, eager's thinnest leads over torch eager, and tnrt's times
against an earlier sitting's. A summary puts bench/ (two folders above
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
