"""Eager learning its layout against eager fixed at column-major, steady state (six warm-ups, median
of 10 runs), from session.sh eagerdiag logs: eager-ab-1.log (f26ebbd, every constant-fill suite
network) and eager-ab-2.log (4cb6d86, three networks, with the plan cache at 64 too).

    python3 bench/results/2026-12-03-h200-eager-learn/eager_ab.py > bench/results/2026-12-03-h200-eager-learn/eager-ab.md
"""
import math
import os
import re

here = os.path.dirname(os.path.abspath(__file__))


def parse(name):
    t, cur = {}, None
    for line in open(os.path.join(here, name), encoding="utf-8"):
        m = re.match(r"\s+--mode eager (.*?)--warmup 6\s+time: median ([\d.]+)", line)
        if m:
            key = m.group(1).strip() or "learned"
            t[cur][key] = float(m.group(2))
            c = re.search(r"layout: (\w+)", line)
            if c:
                t[cur]["choice"] = c.group(1)
        elif line.strip() and not line.startswith((" ", "=", "ready", "cuBLAS")):
            cur = line.strip()
            t[cur] = {}
    return t


for log, title in (("eager-ab-1.log", "f26ebbd: one round of warm calls, then one timed round"),
                   ("eager-ab-2.log", "4cb6d86: the same rounds, plan cache 512 entries")):
    t = parse(log)
    print(f"## {title} ({log})\n")
    cols = [k for k in next(iter(t.values())) if k not in ("learned", "choice")]
    print("| network | learned layout | learned ms | " + " | ".join(f"{c} ms" for c in cols) + " | column / learned |")
    print("|---|---|---:|" + "---:|" * len(cols) + "---:|")
    ratios = []
    for n, v in t.items():
        r = v["--layout column"] / v["learned"]
        ratios.append(r)
        print(f"| {n} | {v.get('choice', '?')} | {v['learned']:.3f} | " + " | ".join(f"{v[c]:.3f}" for c in cols) + f" | {r:.2f} |")
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\n{len(ratios)} networks: column / learned {g:.3f}x in geometric mean; learned faster by 3%+ on "
          f"{sum(x > 1.03 for x in ratios)}, slower by 3%+ on {sum(x < 0.97 for x in ratios)}.\n")
