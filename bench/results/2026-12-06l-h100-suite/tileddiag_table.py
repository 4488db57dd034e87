"""Writes tileddiag.md from call 3's tileddiag folder (raw.txz: tileddiag/NET-{auto,off}.csv).
usage (in a folder where raw.txz is unpacked): python3 tileddiag_table.py > tileddiag.md"""
import csv

BW = 3035e9  # the sitting's copy bandwidth, bytes/s
TOTAL = {'regular4-n70': {'auto': 2.137, 'off': 2.771}, 'rqc-5x6-c12-amp': {'auto': 0.790, 'off': 1.085}}  # 00-diag.log
print("# tileddiag: compiled's step profile under `--layout row`, the tiled kernel timed (auto) and every step on cuTENSOR (off)\n")
print("`bash scripts/gpu-host/session.sh tileddiag` (H100, 2026-12-06 11:39 UTC; binaries of 2d0d287). Per network the whole call, then the six")
print("slowest steps of each run (one replay with an event between launches). Floor: the step's bytes over the sitting's 3035 GB/s.")
print("Made by tileddiag_table.py.\n")
for net in TOTAL:
    print(f"## {net}: compiled {TOTAL[net]['auto']} ms with the kernel timed, {TOTAL[net]['off']} ms with `--tiled off`\n")
    for t in ['auto', 'off']:
        rows = list(csv.DictReader(open(f'tileddiag/{net}-{t}.csv')))
        rows.sort(key=lambda r: -float(r['ms']))
        print(f"`--tiled {t}` (sum of the step profile {sum(float(r['ms']) for r in rows):.3f} ms):\n")
        print("| step | kernel | MB | ms | floor ms | × floor | m | n | k |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows[:6]:
            b = float(r['bytes']); ms = float(r['ms']); fl = b / BW * 1e3
            print(f"| {r['step']} | {r['kernel']} | {b/1e6:.0f} | {ms:.3f} | {fl:.3f} | {ms/fl:.1f} | {r['m']} | {r['n']} | {r['k']} |")
        print()
