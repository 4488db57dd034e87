# The sitting's measuring call (from the repo root on the GPU host, binaries in /tmp/tnrt-bin after
# the unpack calls and `session.sh tests`): eager with its tiled steps timed against cuTENSOR (the
# default since e82f8c2) beside `--tiled on` (every tiled step on the kernel, untimed: eager before
# e82f8c2) on every network of the suite; torch eager beside both on lm-sliding-d2; the reference.
set -f
S=scripts/gpu-host/session.sh
D=${OUT:-.}
EAGER_PROBLEMS="lm-sliding-d2-h8-o64-b256" EAGER_TORCH=1 EAGER_VARIANTS="--mode eager;--mode eager --tiled on;--mode compiled" bash $S eagerdiag 2>&1 | tee $D/eager-lm.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="*" EAGER_VARIANTS="--mode eager;--mode eager --tiled on" bash $S eagerdiag 2>&1 | tee $D/eager-tiled.log | grep -v "^ready\|^cuBLAS:"
bash $S ref 2>&1 | grep -E "^time|^layout|cuBLAS route"
