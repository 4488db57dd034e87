"""The memory-bound networks' compiled times against their byte floors and launches, from a fam-roof harness
folder (session.sh fam-roof): python3 table.py FAM_ROOF_DIR > table.md"""
import csv, glob, json, sys

d = sys.argv[1]
bw = json.load(open(f"{d}/raw/bandwidth.json"))
print(f"Copy bandwidth {bw['bandwidth_bytes_per_s'] / 1e9:.0f} GB/s ({bw.get('gpu')}).\n")
print("| network | compiled ms | byte floor ms | x floor | launches |")
print("|---|---:|---:|---:|---:|")
within = 0
rows = list(csv.DictReader(open(f"{d}/results.csv")))
for r in rows:
    j = json.load(open(glob.glob(f"{d}/raw/rep1-{r['problem'].lower()}-compiled.json")[0]))
    x = float(r["x_floor"])
    within += x <= 1.5
    print(f"| {r['problem']} | {float(r['median_ms']):.4f} | {float(r['floor_ms']):.4f} | {x:.2f} | {sum(j['kernels'].values())} |")
print(f"\nWithin 1.5x of the floor: {within} of {len(rows)}.")
