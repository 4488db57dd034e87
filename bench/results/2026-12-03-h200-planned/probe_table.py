#!/usr/bin/env python3
"""The planned layout's probe: per network, compiled (--layout auto: each of the four layouts timed)
and eager (eight warm-ups: its learning) from session-probe.log, beside the tenth session's sitting
(bench/results/2026-12-03-h200-suite-10/families/results.csv, tnrt compiled and eager).
    python3 bench/results/2026-12-03-h200-planned/probe_table.py > bench/results/2026-12-03-h200-planned/probe.md
"""
import csv, gzip, lzma, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
log = lzma.open(os.path.join(here, "session-probe.log.xz"), "rt").read().splitlines()
before = {}
with open(os.path.join(here, "..", "2026-12-03-h200-suite-10", "families", "results.csv")) as f:
    for r in csv.DictReader(f):
        if r.get("variant") in ("compiled", "eager") and r.get("median_ms"):
            before[(r["problem"], r["variant"])] = float(r["median_ms"])
rows, net = {}, None
for line in log:
    if re.match(r"^[a-z][\w.-]+$", line) and not line.startswith(("cuBLAS", "ready")):
        net = line
        continue
    m = re.match(r"^\s+--mode (compiled|eager)\S*\s.*time: median ([\d.]+) ms.*\| layout: (\S+)(.*)$", line)
    if net and m:
        mode, ms, lay, rest = m.group(1), float(m.group(2)), m.group(3), m.group(4)
        rows.setdefault(net, {})[mode] = (ms, lay, dict(re.findall(r"(column|row|follow|planned) ([\d.]+) ms", rest)))
print("| network | compiled before ms | compiled ms | kept | column | row | follow | planned | eager before ms | eager ms | eager learned |")
print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
faster = slower = 0
ratios = []
for n, r in rows.items():
    c, e = r.get("compiled"), r.get("eager")
    if not c:
        continue
    cb, eb = before.get((n, "compiled")), before.get((n, "eager"))
    t = c[2]
    if cb:
        ratios.append(cb / c[0])
        faster += c[0] < 0.97 * cb
        slower += c[0] > 1.03 * cb
    f = lambda x: "%.3f" % x if x else "—"
    print("| %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |" % (n, f(cb), c[0], c[1], t.get("column", "—"), t.get("row", "—"), t.get("follow", "—"),
          t.get("planned", "—"), f(eb), f(e[0]) if e else "—", e[1] if e else "—"))
g = 1.0
for x in ratios:
    g *= x
if ratios:
    print("\nCompiled, before / now, geometric mean over %d networks: %.3fx; faster by 3%%+ on %d, slower by 3%%+ on %d." % (len(ratios), g ** (1 / len(ratios)), faster, slower))
