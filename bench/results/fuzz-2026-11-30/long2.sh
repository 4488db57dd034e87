#!/bin/bash
cd /work/main/fuzz
while pgrep -f 'artifacts/long.sh' >/dev/null; do sleep 5; done
run() { t=$1; s=$(date -u +%FT%TZ); ./build/fuzz_$t -max_total_time=600 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=artifacts/$t- work/$t > artifacts/long2_$t.log 2>&1; echo "rc=$? start=$s end=$(date -u +%FT%TZ)" >> artifacts/long2_$t.log; }
run tree_json & run einsum_json & wait
