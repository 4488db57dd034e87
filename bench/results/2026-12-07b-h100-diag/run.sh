# The sitting's diagnosis calls (from the repo root on the GPU host, binaries in /tmp/tnrt-bin after
# the unpack calls): `bash run.sh one` (eager's switches on lm-sliding-d2 beside torch eager,
# compiled's layout rule on the thin leads, fuse-max on the memory-bound misses), `bash run.sh two`
# (eager and eager --algo patient across the suite beside torch eager).
set -f
S=scripts/gpu-host/session.sh
D=${OUT:-.}
case $1 in
one)
bash $S env 2>&1 | tail -4
EAGER_PROBLEMS="lm-sliding-d2-h8-o64-b256" EAGER_TORCH=1 EAGER_VARIANTS="--mode eager;--mode eager --gemm off;--mode eager --gemm on --gemm-copies on;--mode eager --algo patient;--mode eager --algo patient --gemm off;--mode compiled" bash $S eagerdiag 2>&1 | tee $D/diag-lm.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="regular3-n160 chain-n12-d200-1500 chain-n8-d800-2000 hyper-n100-r3-e4" EAGER_VARIANTS="--mode compiled" bash $S eagerdiag 2>&1 | tee $D/diag-compiled.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="rqc-4x5-c14-amp rqc-5x6-c12-amp regular3-n130 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4 qaoa-zz-n60-p4" EAGER_VARIANTS="--mode compiled;--mode compiled --fuse-max 4096;--mode compiled --fuse-max 16384;--mode compiled --fuse-max 65536" bash $S eagerdiag 2>&1 | tee $D/diag-fuse.log | grep -v "^ready\|^cuBLAS:"
;;
two)
EAGER_PROBLEMS="*" EAGER_TORCH=1 EAGER_VARIANTS="--mode eager;--mode eager --algo patient" bash $S eagerdiag 2>&1 | tee $D/diag-patient.log | grep -v "^ready\|^cuBLAS:"
;;
esac
