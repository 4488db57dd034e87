"""levels.md from the `session.sh levels` step's folder (raw.txz: levels.tgz, one `tnrt contract --json`
and one `--step-profile` CSV per network, setting and rep):
    mkdir -p /tmp/lv && tar -xJf raw.txz -C /tmp/lv && tar -xzf /tmp/lv/levels.tgz -C /tmp/lv
    python3 levels_table.py /tmp/lv/levels > levels.md
"""
import csv
import glob
import json
import os
import statistics as st
import sys

ORDER = ["reference", "rqc-4x5-c14-amp", "rqc-5x5-c16-amp", "rqc-5x6-c12-amp", "rqc-4x5-c16-open4",
         "qaoa-maxcut-n24-p3", "hyper-n90-r3-e3", "regular3-n130", "hyper-n100-r3-e4"]


def main(folder: str) -> None:
    rows: dict = {}
    for j in sorted(glob.glob(os.path.join(folder, "*.json"))):
        net, lv, _rep = os.path.basename(j)[:-5].rsplit("-", 2)
        with open(j, encoding="utf-8") as f:
            d = json.load(f)
        with open(j[:-5] + ".csv", encoding="utf-8") as f:
            fused = next(float(r["ms"]) * 1000 for r in csv.DictReader(f) if r["step"] == "fused")
        rows.setdefault(net, {}).setdefault(lv, []).append((d["median_ms"], fused, d["floor_ms"]))
    print("# Fused launch: levels off against on (H100, 2026-12-06, one sitting; compiled, 5 warm-ups, 30 runs each, "
          "two reps interleaved off/on)\n")
    print("Floor: `tnrt contract`'s own floor line (4250 GB/s, the H200's bandwidth; this H100 measured 3035 GB/s in the "
          "2026-12-06e sitting).")
    print("Fused launch: one replay of the step profile (`--step-profile`), op `fused`, so single samples.\n")
    print("| network | floor ms | compiled off ms (rep 1, 2) | compiled on ms (rep 1, 2) | on/off (mean) | "
          "fused launch off µs | fused launch on µs |")
    print("|---|---:|---|---|---:|---|---|")
    for n in ORDER:
        v = rows[n]
        off, on = [x[0] for x in v["off"]], [x[0] for x in v["on"]]
        print(f"| {n} | {v['on'][0][2]:.3g} | {off[0]:.4g}, {off[1]:.4g} | {on[0]:.4g}, {on[1]:.4g} | "
              f"{st.mean(on) / st.mean(off):.3f} | {v['off'][0][1]:.1f}, {v['off'][1][1]:.1f} | "
              f"{v['on'][0][1]:.1f}, {v['on'][1][1]:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
