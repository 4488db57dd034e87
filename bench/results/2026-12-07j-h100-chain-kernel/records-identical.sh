# From the repo root after `cmake --build build` (host only): plan_chains' records under the review mend
# (the working tree's src/core/chain*) against 6264e11's, on the reference and eight memory-bound suite
# networks. Prints "identical" when every record is byte for byte the same. Output: records.txt
set -e
D=bench/results/2026-12-07j-h100-chain-kernel
N="data/tensornetwork_permutation_optimized.json $(for n in rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 lattice-10x10-d4 peps-norm-5x5-D4; do echo bench/suites/families/$n.json; done)"
g++ -std=c++20 -O1 -Iinclude -Isrc $D/record_hash.cpp build/libtnrt_core.a -o /tmp/record-hash-new
W=/tmp/records-6264e11 && rm -rf $W && mkdir -p $W && git archive 6264e11 src/core/chain.cpp src/core/chain.hpp src/core/chain_index.hpp | tar -x -C $W
g++ -std=c++20 -O1 -I$W/src -Iinclude -Isrc -c $W/src/core/chain.cpp -o /tmp/chain-6264e11.o
g++ -std=c++20 -O1 -I$W/src -Iinclude -Isrc $D/record_hash.cpp /tmp/chain-6264e11.o build/libtnrt_core.a -o /tmp/record-hash-old
/tmp/record-hash-new $N > $D/records.txt
/tmp/record-hash-old $N | diff - $D/records.txt && echo "identical: $(awk '{s+=$4} END {print s}' $D/records.txt) chains in $(wc -l < $D/records.txt) plans"
