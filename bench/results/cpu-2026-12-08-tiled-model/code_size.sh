# From the repo root (host only; nvcc and cuobjdump, CUOBJDUMP names the latter): the tiled kernel's
# object at each revision, compiled alone with the build's flags (sm_90, -O3): its size, the SASS
# instructions before the first LDGSTS (median over the 156 instantiations; MUFU.RCP, the divisions,
# among them), and registers and stack frames (cuobjdump -res-usage). Revisions:
#   96e80a0  main's kernel (unchanged on main since)
#   15f214f  first copies issued before D's entries (lists merged, index functions inlined)
#   c4b0e4b  shifts for power-of-two extents too, both index paths inlined
#   d0cf4c4  the index functions out of line
#   c59dde0  the review mends (mode_list, next_digit, 32-bit shifts)
set -e
D=bench/results/cpu-2026-12-08-tiled-model
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
CUTENSOR_INC=${CUTENSOR_INC:-$(sed -n "s/^Cutensor_INCLUDE_DIR:PATH=//p" build/CMakeCache.txt)}  # the build's cuTENSOR headers
for rev in ${REVS:-96e80a0 15f214f c4b0e4b d0cf4c4 c59dde0}; do
  t=/tmp/tiled-rev-$rev; rm -rf $t; mkdir -p $t
  git archive $rev src include | tar -x -C $t
  /usr/local/cuda/bin/nvcc -DTNRT_HAVE_CUDA=1 -I$t/include -I$t/src -isystem=$CUTENSOR_INC -isystem=/usr/local/cuda/include -O3 -DNDEBUG \
    --generate-code=arch=compute_90,code=[compute_90,sm_90] -Xcompiler=-fPIC --expt-relaxed-constexpr -lineinfo -std=c++17 \
    -x cu -c $t/src/cuda/tiled.cu -o $t/tiled.cu.o
  $CUOBJDUMP -sass $t/tiled.cu.o > $t/sass.txt
  res=$($CUOBJDUMP -res-usage $t/tiled.cu.o 2>&1 | grep -o "REG:[0-9]* STACK:[0-9]*" |
        awk -F'[: ]' '{r+=$2; if ($4 > 0) s++; st+=$4; n++} END {printf "registers mean %.1f; stack frames in %d of %d (mean %.1f bytes)", r/n, s, n, st/n}')
  echo "$rev: object $(stat -c %s $t/tiled.cu.o) bytes; $(python3 $D/sass_first.py $t/sass.txt zzz | tail -1); $res"
done > $D/code-size.txt
cat $D/code-size.txt
