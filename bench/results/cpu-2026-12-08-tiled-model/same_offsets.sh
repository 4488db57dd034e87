# From the repo root: every offset the tiled kernel computes (each slab offset, D entry with its slot and
# Small offset, run_table row and table entry) of every plan compiled would time, hashed per plan, on
# ten networks under a layout each: main's lists (OLD build) against next/tiled-early's merged lists,
# shifts and division-free last digit (NEW build). Any differing plan is counted.
set -e
D=bench/results/cpu-2026-12-08-tiled-model
OLD=${OLD:-build} NEW=${NEW:-../wt-pd/build}
g++ -std=c++20 -O2 -Iinclude -Isrc $D/offsets_hash.cpp $OLD/libtnrt_core.a -o /tmp/oh_old
g++ -std=c++20 -O2 -I${NEW%/build}/include -I${NEW%/build}/src $D/offsets_hash.cpp $NEW/libtnrt_core.a -o /tmp/oh_new
for n in reference:column lattice-10x10-d4:row qaoa-zz-n60-p4:row rqc-5x6-c12-amp:planned qaoa-maxcut-n24-p4:column \
         regular4-n70:row hyper-n90-r3-e3:planned rqc-4x5-c14-amp:column peps-norm-5x5-D4:planned regular3-n130:follow; do
  nm=${n%%:*} l=${n##*:}
  f=bench/suites/families/$nm.json; [[ $nm == reference ]] && f=data/tensornetwork_permutation_optimized.json
  /tmp/oh_old $f $l > /tmp/h_old.txt 2> /tmp/h_old.err
  /tmp/oh_new $f $l > /tmp/h_new.txt 2> /dev/null
  echo "$n: $(cat /tmp/h_old.err), differing $(diff /tmp/h_old.txt /tmp/h_new.txt | grep -c '^<' || true)"
done > $D/same-offsets.txt
