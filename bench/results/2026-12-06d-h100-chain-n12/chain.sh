set -u
bash scripts/gpu-host/session.sh env > /dev/null 2>&1
export LD_LIBRARY_PATH=/opt/tnrt-deps/lib:${LD_LIBRARY_PATH:-}
export TNRT_CUBLAS_PATH=$(python3 -c "import site,glob;print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(d+'/nvidia/**/libcublas.so.13', recursive=True))),''))")
bin=/tmp/tnrt-bin; F=bench/suites/families/chain-n12-d200-1500.json
fill=$(python3 -c "import json;s=json.load(open('bench/suites/families.json'));print(next(repr(p['fill']['value']) for p in s['problems'] if p['name']=='chain-n12-d200-1500'))")
i=0
for v in "" "--gemm on" "--gemm off" "--algo-timing off" "--layout row" "--layout column" "--no-graph"; do
  i=$((i+1)); echo "--- compiled $v"
  $bin/tnrt contract $F --device cuda --fill $fill --mode compiled $v --warmup 5 --repeat 30 --step-profile $OUT/chain-$i.csv --json $OUT/chain-$i.json 2>&1 | grep -E "^time|^kernels|^layout"
done
python3 - <<'PY'
import json, torch, time
s=json.load(open('bench/suites/families/chain-n12-d200-1500.json'))
fill=float(__import__('os').popen("true").read() or 0) or None
ts=[torch.full(sh, 0.5, device='cuda', dtype=torch.float32) for sh in s['shapes']]
a,b=ts[6],ts[7]  # not used
# step 0 of the path: inputs 5 and 6: (1047x1160) x (1160x344)
x=torch.rand(1047,1160,device='cuda'); y=torch.rand(1160,344,device='cuda')
for _ in range(10): z=x@y
torch.cuda.synchronize()
e0,e1=torch.cuda.Event(enable_timing=True),torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range(100): z=x@y
e1.record(); torch.cuda.synchronize()
print("torch step-0 GEMM (1047x1160 @ 1160x344) alone: %.4f ms" % (e0.elapsed_time(e1)/100))
PY
