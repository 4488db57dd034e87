set -f
S=scripts/gpu-host/session.sh
bash $S env 2>&1 | tail -4
EAGER_PROBLEMS="lm-sliding-d2-h8-o64-b256" EAGER_VARIANTS="--mode eager;--mode eager --gemm off;--mode eager --gemm on --gemm-copies on;--mode eager --layout follow;--mode eager --layout follow --gemm on --gemm-copies on;--mode eager --algo patient;--mode eager --algo patient --gemm on --gemm-copies on;--mode compiled;--mode compiled --branches off;--mode compiled --gemm off --gemm-copies off;--mode compiled --algo-timing off;--mode compiled --algo-timing off --algo patient" bash $S eagerdiag 2>&1 | tee $OUT/diag-lm.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="regular3-n160 chain-n12-d200-1500 chain-n8-d800-2000 hyper-n100-r3-e4" EAGER_VARIANTS="--mode compiled" bash $S eagerdiag 2>&1 | tee $OUT/diag-compiled.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="rqc-5x6-c12-amp regular3-n130 lattice-10x10-d4 peps-norm-5x5-D4" EAGER_VARIANTS="--mode compiled;--mode compiled --fuse-max 4096;--mode compiled --fuse-max 16384" bash $S eagerdiag 2>&1 | tee $OUT/diag-fuse.log | grep -v "^ready\|^cuBLAS:"
EAGER_PROBLEMS="lattice-5x5-d16 lattice-7x7-d8 mps-overlap-n24-D256 mps-overlap-n40-D384 chain-n8-d800-2000 lm-sliding-d3-h4-o16-b128 mpo-heis-L32-D128 regular3-n160 hyper-n100-r3-e4 qaoa-zz-n60-p4" EAGER_VARIANTS="--mode eager;--mode eager --algo patient" bash $S eagerdiag 2>&1 | tee $OUT/diag-patient.log | grep -v "^ready\|^cuBLAS:"
bash $S python 2>&1 | tee $OUT/python.log | tail -25
