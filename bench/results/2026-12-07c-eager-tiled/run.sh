# The sitting's measuring call (from the repo root on the GPU host, binaries in /tmp/tnrt-bin after
# the unpack calls and `session.sh tests`): eager with its tiled steps timed against cuTENSOR (the
# default since e82f8c2) beside `--tiled on` (every tiled step on the kernel, untimed: eager before
# e82f8c2) and torch eager, on every network of the suite; then the reference network.
set -f
S=scripts/gpu-host/session.sh
D=${OUT:-.}
EAGER_PROBLEMS="*" EAGER_TORCH=1 EAGER_VARIANTS="--mode eager;--mode eager --tiled on" bash $S eagerdiag 2>&1 | tee $D/eager-tiled.log | grep -v "^ready\|^cuBLAS:"
bash $S ref 2>&1 | tail -6
