# From the repo root, here (no GPU; nvcc 13.0, cuobjdump from the nvidia-cuda-cuobjdump wheel in $CUOBJDUMP):
# d676561's chain.cu (the unrolled kernel, reverted by 6264e11) compiled alone as the build compiles it,
# its time and each kernel's registers and stack. Output: d676561-chain-cu.txt
set -e
D=bench/results/2026-12-07j-h100-chain-kernel
W=/tmp/d676561-src && rm -rf $W && mkdir -p $W && git archive d676561 src include | tar -x -C $W
start=$(date +%s)
/usr/local/cuda/bin/nvcc -DTNRT_HAVE_CUDA=1 -I$W/include -I$W/src -isystem=/usr/local/cuda/include -O3 -DNDEBUG \
  "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC --expt-relaxed-constexpr -lineinfo -std=c++17 \
  -x cu -c $W/src/cuda/chain.cu -o /tmp/d676561-chain.o
end=$(date +%s)
{ echo "nvcc chain.cu (d676561): $((end - start)) s"
  ${CUOBJDUMP:-cuobjdump} -res-usage /tmp/d676561-chain.o 2>&1 | grep -B1 "REG:" | grep -o "chain_kernelI[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*" | paste - - - \
    | sed 's/EEEvNS_12chain_recordENS0_14chain_pointersE//'; } > $D/d676561-chain-cu.txt
# The rows' loop of chain_kernel<complex<float>, K_MAX 4, V 2, P 8> (rqc-5x6's chains), from 90
# instructions before its first FFMA to 60 after, in d676561 and in the build's chain.cu.o (the final code's
# kernel): indexed constant loads are `LDC Rx, c[0x0][Ry+...]`. Run after `cmake --build build`.
excerpt() {
  ${CUOBJDUMP:-cuobjdump} -sass "$1" > /tmp/chain.sass
  a=$(grep -n "Function :.*device_complexIfEELi4ELi2ELi8" /tmp/chain.sass | cut -d: -f1)
  b=$(grep -n "Function :.*device_complexIfEELi2ELi2ELi8" /tmp/chain.sass | cut -d: -f1)
  sed -n "${a},${b}p" /tmp/chain.sass > /tmp/kernel.sass
  l=$(grep -n FFMA /tmp/kernel.sass | head -1 | cut -d: -f1)
  echo "whole kernel: $(grep -cE 'LDC(\.[0-9]+)? R[0-9]+, c\[0x0\]\[R' /tmp/kernel.sass) indexed LDC, $(grep -c FFMA /tmp/kernel.sass) FFMA, $(grep -c FMUL /tmp/kernel.sass) FMUL, $(grep -c FADD /tmp/kernel.sass) FADD"
  sed -n "$((l - 180)),$((l + 120))p" /tmp/kernel.sass | sed 's#/\* 0x[0-9a-f]* \*/##; s#^\s*/\*\([0-9a-f]*\)\*/#\1#' | grep -v "^\s*$"
}
excerpt /tmp/d676561-chain.o > $D/d676561-rows-loop.sass.txt
excerpt build/CMakeFiles/tnrt_cuda.dir/src/cuda/chain.cu.o > $D/final-rows-loop.sass.txt
