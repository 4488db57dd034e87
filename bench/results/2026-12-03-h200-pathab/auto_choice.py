"""auto-choice.md: the new auto's path of each network (newauto.txt, by newauto.sh) matched by tc and
sc to the two measured paths of path_ab.json, and the measured time of the matching one.

    python3 bench/results/2026-12-03-h200-pathab/auto_choice.py > bench/results/2026-12-03-h200-pathab/auto-choice.md
"""
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))
d = json.load(open(os.path.join(here, "path_ab.json")))
new = {}
for line in open(os.path.join(here, "newauto.txt")):
    f = line.split()
    if len(f) == 5:
        new[f[0]] = (float(f[1]), float(f[2]), float(f[3]))
same = lambda x, y: abs(x - y) < 0.005  # noqa: E731
print("| network | new auto: tc / sc, model ms | same tree as | measured ms (asis) | measured ms (new auto's) | asis / new |")
print("|---|---|---|---:|---:|---:|")
ratios, unmatched = [], []
for r in d["rows"]:
    n, a, o = r["network"], r["asis"], r["other"]
    tc, sc, mm = new[n]
    is_a, is_o = same(tc, a["tc"]) and same(sc, a["sc"]), same(tc, o["tc"]) and same(sc, o["sc"])
    ms = None
    if is_o and not is_a:
        which, ms = "other", o["ms"]
    elif is_a and not is_o:
        which, ms = "asis", a["ms"]
    else:
        which = "both (same tc/sc)" if is_a else "neither (new)"
    if ms:
        ratios.append(a["ms"] / ms)
    else:
        unmatched.append(n)
    tail = f"{ms:.3g} | {a['ms'] / ms:.3f}" if ms else "— | —"
    print(f"| {n} | {tc:.2f} / {sc:.2f}, {mm:.3f} | {which} | {a['ms']:.3g} | {tail} |")
g = math.exp(sum(map(math.log, ratios)) / len(ratios))
print()
print(f"Over the {len(ratios)} networks whose new auto path is one of the two measured ones (matched by tc and sc): "
      f"geometric mean of asis / new auto's {g:.3f}; faster by more than 3% on {sum(x > 1.03 for x in ratios)}, "
      f"slower by more than 3% on {sum(x < 0.97 for x in ratios)}. Not matched to one measured path: {', '.join(unmatched)}.")
