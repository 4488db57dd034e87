# From the repo root, here (no GPU; nvcc 13.0, cuobjdump from the nvidia-cuda-cuobjdump wheel in $CUOBJDUMP):
# chain.cu of each commit compiled alone with the build's flags for sm_90, then each chain_kernel
# instantiation's SASS instructions (code_size.py) and registers and stack (cuobjdump -res-usage).
#   cd56b13: the final code's kernel (the same chain.cu as e08b2a0's)
#   d676561: the unrolled kernel, measured against it in this folder and reverted
#   985a6dc: branch next/chain-noinline, the general list decode out of line (not run on a GPU); it
#            re-makes 2b35b66 (next/chain-decode-noinline), lost with the machine's clone, whose figures were the same
# Output: code-size.txt
set -e
D=bench/results/2026-12-07k-h200-chain-kernel-ab
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
for c in cd56b13 d676561 985a6dc; do
  W=/tmp/code-size-$c && rm -rf $W && mkdir -p $W && git archive $c src include | tar -x -C $W
  /usr/local/cuda/bin/nvcc -DTNRT_HAVE_CUDA=1 -I$W/include -I$W/src -isystem=/usr/local/cuda/include -O3 -DNDEBUG \
    "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC --expt-relaxed-constexpr -lineinfo -std=c++17 \
    -x cu -c $W/src/cuda/chain.cu -o $W/chain.o
  $CUOBJDUMP -sass $W/chain.o > $W/chain.sass
  regs=$($CUOBJDUMP -res-usage $W/chain.o 2>&1 | grep -A1 "chain_kernel" | grep -o "REG:[0-9]*" | cut -d: -f2 | sort -n)
  stack=$($CUOBJDUMP -res-usage $W/chain.o 2>&1 | grep -A1 "chain_kernel" | grep -o "STACK:[0-9]*" | cut -d: -f2 | sort -n | uniq | tr '\n' ' ')
  echo "# chain.cu of $c ($(git log -1 --format=%s $c | cut -c1-80))"
  echo "registers $(echo "$regs" | head -1)-$(echo "$regs" | tail -1); stack bytes: $stack"
  python3 $D/code_size.py $W/chain.sass
  echo
done > $D/code-size.txt
