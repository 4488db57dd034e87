# From the repo root: per memory-bound network, under the layout its compiled program ran under on the
# H100 (bench/results/2026-12-07h-h100-final-roof), the integer divisions each thread of the tiled
# kernel does before its loop (slab offsets and D entries), for every step eager's rule puts on the
# kernel with at least 0.5 MB of D: before (main's lists, a division per mode) and after merging
# (next/tiled-early: merge_tiled_modes, the division-free last digit, shifts where every extent is a power of two).
# OLD: a build dir of main; NEW: a build dir of the branch (both `cmake --build`, host only).
set -e
D=bench/results/cpu-2026-12-08-tiled-model
OLD=${OLD:-build} NEW=${NEW:-../wt-pd/build}
g++ -std=c++20 -O1 -Iinclude -Isrc $D/tiled_divisions.cpp $OLD/libtnrt_core.a -o /tmp/div_old
g++ -std=c++20 -O1 -DTNRT_AFTER -I${NEW%/build}/include -I${NEW%/build}/src $D/tiled_divisions.cpp $NEW/libtnrt_core.a -o /tmp/div_new
F=bench/suites/families
{
echo "| network | layout | tiled steps (D of 0.5 MB or more) | divisions a thread before its loop, main: median, max | next/tiled-early: median, max |"
echo "|---|---|---:|---:|---:|"
for nl in reference:column rqc-4x5-c14-amp:column rqc-5x6-c12-amp:planned qaoa-maxcut-n24-p4:column qaoa-zz-n60-p4:row \
          regular4-n70:row hyper-n90-r3-e3:planned lattice-10x10-d4:row peps-norm-5x5-D4:planned; do
  n=${nl%%:*} l=${nl##*:}
  f=$F/$n.json; [[ $n == reference ]] && f=data/tensornetwork_permutation_optimized.json
  /tmp/div_old $f $l 1 > /tmp/div_o.txt
  /tmp/div_new $f $l 1 > /tmp/div_n.txt
  python3 - "$n" "$l" <<'PY'
import re, statistics, sys
def divs(p):
    return [int(m) for m in re.findall(r"divisions ~(\d+)", open(p).read())]
o, n = divs("/tmp/div_o.txt"), divs("/tmp/div_n.txt")
f = lambda v: f"{statistics.median(v):.0f}, {max(v)}" if v else "-"
print(f"| {sys.argv[1]} | {sys.argv[2]} | {len(o)} | {f(o)} | {f(n)} |")
PY
done
} > $D/divisions.md
