"""Plots for a harness run: one PNG bar chart per problem (median time of every tnrt variant and peer,
min..max as an error bar, the floor (the larger of the byte and flop floors) as a dashed line, the
smaller one dotted) and, where the reports carry
counters.profile.gaps_us (tnrt contract --profile; the harness's "profile" suite/variant key or its
--profile flag), a histogram of the gaps between kernels per variant. Profiled variants' bars are
hatched and labelled "(profiled)": their times carry CUPTI's overhead.

    python3 bench/report.py bench/results/<run>/results.json      (re-draws the plots beside it)

matplotlib only; without it the plots are skipped with a message and nothing else changes.
"""
from __future__ import annotations

import json
import os
import re
import sys


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def _gaps(record: dict):
    rep = record.get("report") or {}
    prof = (rep.get("counters") or {}).get("profile") or rep.get("profile") or {}
    g = prof.get("gaps_us")
    if isinstance(g, dict):  # a summary ({"values": [...]}, or percentiles only: nothing to draw)
        g = g.get("values")
    if isinstance(g, list) and g and all(isinstance(x, (int, float)) for x in g):
        return [float(x) for x in g]
    return None


def make_plots(doc: dict, out_dir: str) -> tuple[list[str], str]:
    """Returns (paths written, note). Never raises for a missing matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "plots skipped: matplotlib is not installed"
    paths: list[str] = []
    rows = doc.get("rows") or []
    gpu = ((doc.get("environment") or {}).get("gpu") or {}).get("name") or doc.get("device", "")
    for p in doc.get("problems") or []:
        prow = [r for r in rows if r.get("problem") == p["name"] and r.get("median_ms") is not None]
        if not prow:
            continue
        names = [r["variant"] + (" (profiled)" if r.get("profiled") else "") for r in prow]
        med = [r["median_ms"] for r in prow]
        lo = [max(0.0, r["median_ms"] - (r.get("min_ms") or r["median_ms"])) for r in prow]
        hi = [max(0.0, (r.get("max_ms") or r["median_ms"]) - r["median_ms"]) for r in prow]
        colors = ["tab:blue" if r.get("kind") == "tnrt" else "tab:orange" for r in prow]
        fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(names) + 2), 4.5))
        bars = ax.bar(range(len(names)), med, yerr=[lo, hi], color=colors, capsize=3)
        for bar, r in zip(bars, prow):
            if r.get("profiled"):
                bar.set_hatch("//")
        for i, r in enumerate(prow):
            label = f"{med[i]:.3g}" + (f"\n×{r['x_floor']:.1f}" if r.get("x_floor") else "")
            if r.get("verified") is False:
                label += "\nFAIL"
            ax.annotate(label, (i, med[i]), ha="center", va="bottom", fontsize=7,
                        color="red" if r.get("verified") is False else "black",
                        xytext=(0, 2), textcoords="offset points")
        floor = prow[0].get("floor_ms")
        if floor:  # the larger of the byte and flop floors (harness.py); the smaller one dotted
            which = {"memory": "byte", "compute": "flop"}.get(prow[0].get("floor_bound"), "")
            ax.axhline(floor, color="black", linestyle="--", linewidth=1)
            ax.annotate(f"{which + ' ' if which else ''}floor {floor:.3g} ms", (len(names) - 0.5, floor),
                        ha="right", va="bottom", fontsize=8)
            other = prow[0].get("flop_floor_ms" if which == "byte" else "byte_floor_ms") if which else None
            if other and other < floor and other > floor * 1e-3:
                ax.axhline(other, color="gray", linestyle=":", linewidth=1)
                ax.annotate(f"{'flop' if which == 'byte' else 'byte'} floor {other:.3g} ms", (len(names) - 0.5, other),
                            ha="right", va="bottom", fontsize=7, color="gray")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("median ms (bars: min..max)")
        ax.set_title(f"{p['name']} ({p.get('dtype')}) on {gpu}: tnrt (blue), peers (orange)", fontsize=9)
        ax.set_ylim(bottom=0)
        fig.tight_layout()
        path = os.path.join(out_dir, f"times-{_slug(p['name'])}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)

        # gap histograms: the last successful record of each variant that has them
        gaps = {}
        for rec in doc.get("records") or []:
            if rec.get("problem") == p["name"] and rec.get("status") == "ok":
                g = _gaps(rec)
                if g:
                    gaps[rec["variant"]] = g
        if gaps:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            allg = [x for g in gaps.values() for x in g if x > 0]
            top = max(allg) if allg else 1.0
            bins = [10 ** (k / 10) for k in range(-10, int(10 * __import__("math").log10(max(top, 1.0))) + 11)]
            for name, g in gaps.items():
                ax.hist([max(x, bins[0]) for x in g], bins=bins, histtype="step", label=f"{name} (n={len(g)})")
            ax.set_xscale("log")
            ax.set_xlabel("gap between kernels, µs")
            ax.set_ylabel("count")
            ax.set_title(f"{p['name']}: kernel gaps on {gpu}", fontsize=9)
            ax.legend(fontsize=7)
            fig.tight_layout()
            path = os.path.join(out_dir, f"gaps-{_slug(p['name'])}.png")
            fig.savefig(path, dpi=120)
            plt.close(fig)
            paths.append(path)
    note = "" if any("gaps-" in x for x in paths) else "no gap histogram: no report carried counters.profile.gaps_us"
    return paths, note


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        doc = json.load(f)
    paths, note = make_plots(doc, os.path.dirname(os.path.abspath(argv[0])))
    for x in paths:
        print(x)
    if note:
        print(note, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
