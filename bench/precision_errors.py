#!/usr/bin/env python3
"""Relative errors of each job of a harness run against the problem's reference, beside its time:
the reduced-precision row (issue 15) next to the full-precision ones.

    python3 bench/precision_errors.py RESULTS.json [--md OUT.md]

A scalar's error is |x - r| / |r|; a tensor's (checked by its norm and sum) is the larger of
|norm(x) - norm(r)| / norm(r) and |sum(x) - sum(r)| / |sum(r)|. The reference is the harness's:
exact for the constant fills, NumPy in float64 for the random ones.
"""
import argparse
import json
import os
import sys

from suite_table import emit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from common import as_complex  # noqa: E402  (the harness's reading of results: [re, im], {"re", "im"}, numbers)


def relative_error(result, reference):
    if result is None or reference is None:
        return None
    if not isinstance(reference, dict):
        reference = {"scalar": reference}
    if "scalar" in result and "scalar" in reference:
        r = as_complex(reference["scalar"])
        return abs(as_complex(result["scalar"]) - r) / abs(r) if r != 0 else None
    if "norm" in result and "norm" in reference:
        errs = [abs(float(result["norm"]) - float(reference["norm"])) / abs(float(reference["norm"]))]
        if "sum" in result and "sum" in reference and as_complex(reference["sum"]) != 0:
            errs.append(abs(as_complex(result["sum"]) - as_complex(reference["sum"])) / abs(as_complex(reference["sum"])))
        return max(errs)
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--md", help="write the table here too")
    a = ap.parse_args(argv)
    doc = json.load(open(a.results))
    refs = {p["name"]: p.get("reference_value", p.get("reference")) for p in doc["problems"]}
    lines = ["| network | variant | median ms | relative error | passes the FP32 check |", "|---|---|---:|---:|---|"]
    for r in doc["records"]:
        if r.get("median_ms") is None or r.get("result") is None:
            continue
        err = relative_error(r["result"], refs.get(r["problem"]))
        lines.append(f"| {r['problem']} | {r['variant']} | {r['median_ms']:.3f} | "
                     f"{'—' if err is None else f'{err:.1e}'} | {'yes' if r.get('verified') else 'no'} |")
    emit(lines, a.md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
