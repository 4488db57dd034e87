# The full dot micro-benchmark (dot_micro.cu), from the repo root after `cmake --build build`:
# the previous kernel is git's 1fd4450 src/cuda/full_dot.cu in a namespace of its own.
set -e
D=bench/results/2026-12-07g-h100-full-dot
mkdir -p /tmp/dm
git show 1fd4450:src/cuda/full_dot.cu | sed 's/^namespace tnrt::cuda {/namespace tnrt::cuda_old {\nusing namespace tnrt::cuda;/' > /tmp/dm/old_full_dot.cu
CUTENSOR_INC=$(python3 -c "import cutensor;print(list(cutensor.__path__)[0])")/include
nvcc -std=c++20 -O3 -arch=sm_90 -Iinclude -Isrc -I/tmp/dm -I"$CUTENSOR_INC" $D/dot_micro.cu build/libtnrt_cuda.a build/libtnrt_core.a -ldl -o /tmp/dm/dot_micro
mkdir -p .gpu-bin && cp /tmp/dm/dot_micro .gpu-bin/
# then on the GPU host (device run, carry [".gpu-bin"]): .gpu-bin/dot_micro > micro.txt
