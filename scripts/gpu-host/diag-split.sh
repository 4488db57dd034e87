set -u
bash .gpu-host/unpack.sh | tail -1
export LD_LIBRARY_PATH=/opt/tnrt-deps/lib:${LD_LIBRARY_PATH:-}
export TNRT_CUBLAS_PATH=$(python3 -c "import site,glob;print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(d+'/nvidia/**/libcublas.so.13', recursive=True))),''))")
bin=/tmp/tnrt-bin; mkdir -p $bin; for f in .gpu-bin/bin*.tar.xz; do [[ -f $f ]] && tar -xJf "$f" -C $bin; done
mkdir -p /tmp/p3 $OUT/diag && tar -xzf bench/results/2026-12-03-h200-calibration/own-paths/paths.tgz -C /tmp/p3
for n in rqc-5x5-c16-amp qaoa-maxcut-n24-p4; do
  for l in column row; do for s in on off; do
    timeout 100 $bin/tnrt contract bench/suites/families/$n.json --dtype c64 --fill 0.6299605249474366 --device cuda --mode compiled \
      --path-file /tmp/p3/paths/$n-cutensornet.json --layout $l --split-sums $s --warmup 1 --repeat 3 \
      --step-profile $OUT/diag/$n-$l-$s.csv --json $OUT/diag/$n-$l-$s.json 2>&1 | grep -E "^time"
    echo "$n $l $s"
  done; done
done
