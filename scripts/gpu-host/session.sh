#!/usr/bin/env bash
# On the GPU host, from the repo root: unpack cuTENSOR (all parts must have arrived) and the
# binaries, then run the named steps, logging under $OUT (or /tmp/out).
#   usage: bash scripts/gpu-host/session.sh STEP...   steps: env api tests final python cotengra gridsteps gridtune dotab ab fam fam-tnrt fam-peers1..3 fam-roof fam-tf32 fam-jax fam-miss tileddiag levels own nccl ref soak sanitize cupti ...
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
# cuTENSOR's parts arrive in several calls (.gpu-host, .gpu-host-1, ... each with unpack.sh; parts
# gather in /tmp/tnrt-stage and stay there while the machine is warm): whichever folders this call carried.
unpack=$(ls .gpu-host/unpack.sh .gpu-host-*/unpack.sh 2>/dev/null | head -1)
if [[ -n $unpack ]]; then bash "$unpack" .gpu-host .gpu-host-* | tail -1
elif [[ -e /opt/tnrt-deps/lib/libcutensor.so.2 ]]; then echo "ready /opt/tnrt-deps/lib (staged by an earlier call)"
else echo "cuTENSOR not staged: carry .gpu-host (or .gpu-host-N folders) with pack.sh's parts and unpack.sh"; fi
export LD_LIBRARY_PATH=/opt/tnrt-deps/lib:${LD_LIBRARY_PATH:-}
# cuBLAS (compiled programs time GEMM-shaped steps through it): the host's Python wheels hold it.
if [[ -z ${TNRT_CUBLAS_PATH:-} ]]; then
  TNRT_CUBLAS_PATH=$(python3 -c "import site,glob;print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(d+'/nvidia/**/libcublas.so.13', recursive=True))),''))" 2>/dev/null)
  [[ -n $TNRT_CUBLAS_PATH ]] || TNRT_CUBLAS_PATH=$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null)
  export TNRT_CUBLAS_PATH
fi
echo "cuBLAS: ${TNRT_CUBLAS_PATH:-none found}"
bin=/tmp/tnrt-bin
# Whichever archives this call carried, in .gpu-bin or .gpu-bin-N folders (pack-bin.sh: bin-tools and
# bin-tests-a/-b, which do not fit one call together); what earlier calls unpacked stays in $bin. The
# test programs this call brought are the ones `tests` runs (all of $bin when it brought none).
carried_tests=()
for f in .gpu-bin/bin*.tar.xz .gpu-bin-*/bin*.tar.xz; do
  [[ -f $f ]] || continue
  mkdir -p $bin && tar -xJf "$f" -C $bin
  mapfile -t -O ${#carried_tests[@]} carried_tests < <(tar -tJf "$f" | grep -E '^(\./)?test_cuda_' | sed 's|^\./||')
done
# A file that may come in .gpu-bin or in any .gpu-bin-N folder (py.tar.xz, old-tools.tar.xz).
carried() { ls .gpu-bin/"$1" .gpu-bin-*/"$1" 2>/dev/null | head -1; }
# The tnrt extension built here for the host's Python (py.tar.xz, pack-bin.sh) into /tmp/tnrt-py, if carried.
unpack_py() { local py; py=$(carried py.tar.xz); [[ -z $py ]] || { mkdir -p /tmp/tnrt-py && tar -xJf "$py" -C /tmp/tnrt-py; }; }
export TNRT_CUPTI_DIR=$bin  # pack-bin.sh bundles libcupti.so.13 there (--profile, test_cuda_profiler)
export TNRT_SOURCE_DIR=$PWD PYTHONUNBUFFERED=1
ref=data/tensornetwork_permutation_optimized.json
# Eager's warm-ups in the steps that time it (eagerdiag, eagerprof, ref): its layout (eight calls) and
# cuBLAS route (five) learned first (src/cuda/eager.cpp); EAGER_WARMUP overrides.
export EAGER_WARMUP=${EAGER_WARMUP:-13}
# The peers' Python packages (wheels in .whl and .whl-cq), the tnrt extension (.gpu-bin/py.tar.xz),
# and a CUDA_HOME where cuda.pathfinder finds libcutensornet.so.2 beside libcutensor.so.2.
peer_env() {
  [[ -d /tmp/site/cuquantum && -d /tmp/site/cotengra ]] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl-cq/*.whl 2>&1 | tail -2
  unpack_py
  mkdir -p /tmp/cq/lib64; ln -sf /opt/tnrt-deps/lib/libcutensor.so.2 /tmp/cq/lib64/
  ln -sf "$(find /tmp/site -name 'libcutensornet.so*' | head -1)" /tmp/cq/lib64/libcutensornet.so.2
  export CUDA_HOME=/tmp/cq PYTHONPATH=/tmp/tnrt-py:/tmp/site:${PYTHONPATH:-}
}
# The families suite's peers (fam-peers, fam-peers1..3), and the same run one process per peer.
peer_names="torch torch?graph cuTensorNet"
peer_only() { local a="--skip-tnrt --skip-peak --no-bandwidth --timeout 60" g; for g in $1; do a="$a --only=$g"; done; echo "$a"; }
peer_server() { local a="" g; for g in $1; do a="$a --peer-server=$g"; done; echo "$a"; }
peer_args=$(peer_only "$peer_names")
peer_served=$(peer_server "$peer_names")
# The families suite's constant fill of network $1.
fill_of() { python3 -c "import json;s=json.load(open('bench/suites/families.json'));print(next(repr(p['fill']['value']) for p in s['problems'] if p['name']=='$1'))"; }
# One '--problem=NAME' a line for each network of the families suite that its peer $1 runs (its problems,
# less its skip_problems), for a step that runs a variant beside that peer on the peer's own networks.
problems_of() { python3 -c "import fnmatch as f,json,sys;s=json.load(open('bench/suites/families.json'));v=next(v for v in s['peers'] if v['name']==sys.argv[1])
m=lambda n,k:any(f.fnmatch(n,g) for g in v.get(k,[]))
print('\n'.join('--problem='+p['name'] for p in s['problems'] if m(p['name'],'problems') and not m(p['name'],'skip_problems')))" "$1"; }
# The families suite through the harness into /tmp/$1 and $out/$1.tgz: $2 its budget, the rest more options.
run_fam() {
  local name=$1 budget=$2; shift 2
  peer_env
  python3 bench/harness.py bench/suites/families.json --tnrt $bin/tnrt --reps 1 --warmups 1 --runs 3 --timeout 90 --budget $budget "$@" \
    --out /tmp/$name 2>&1 | tail -60
  tar -czf $out/$name.tgz -C /tmp $name
}
for s in "$@"; do
  echo "=== $s ($(date -u +%H:%M:%S))"
  case $s in
    env) nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; ldd $bin/tnrt; $bin/tnrt --version ;;
    tests) # Each program's exit status decides, and the failed ones are named at the end: gtest's brief
           # mode lists no failures in its summary ("PASSED 20 tests" after 22 ran once read as a pass).
           # A skipped test counts as failed: without cuTENSOR unpacked the programs skip and exit 0.
           # The programs this call carried (bin-tests-a in one call, -b in the next), else all in $bin.
           # Each program's last result stays in /tmp/tests-status while the machine is warm, and the
           # tally across calls is printed at the end ("TESTS: 13 of 13 programs passed").
           failed=""
           [[ -e /opt/tnrt-deps/lib/libcutensor.so.2 ]] || failed=" (cuTENSOR not unpacked)"
           compgen -G "$bin/test_cuda_*" > /dev/null || failed="$failed (no test programs: carry bin-tests-a.tar.xz and -b, a call each)"
           progs=()
           if (( ${#carried_tests[@]} )); then for t in "${carried_tests[@]}"; do progs+=("$bin/$t"); done
           else progs=($bin/test_cuda_*); fi
           # The logs go back as one archive: a call returns at most eight files of $OUT.
           tl=/tmp/tests-logs; rm -rf $tl; mkdir -p $tl /tmp/tests-status
           for t in "${progs[@]}"; do
             [[ -x $t ]] || continue
             echo "--- $t"; timeout 300 $t --gtest_brief=1 > /tmp/t.log 2>&1; rc=$?
             tail -25 /tmp/t.log; grep -E "^\[  FAILED  \]|^\[  SKIPPED \]" /tmp/t.log; echo "rc=$rc"
             cp /tmp/t.log $tl/$(basename $t).log  # whole, with what each test prints
             grep -qE "^\[  SKIPPED \]" /tmp/t.log && rc=skipped
             [[ $rc == 0 ]] || failed="$failed $(basename $t)($rc)"
             echo "$rc" > /tmp/tests-status/$(basename $t)
           done
           tar -cJf $out/tests-logs.txz -C /tmp tests-logs
           if [[ -z $failed ]]; then echo "TESTS: every program run here passed"; else echo "TESTS FAILED:$failed"; fi
           passed=$(grep -lx 0 /tmp/tests-status/* 2>/dev/null | wc -l); known=$(ls /tmp/tests-status | wc -l)
           echo "TESTS: $passed of $known programs passed on this machine so far:" $(cd /tmp/tests-status && for f in *; do echo "$f=$(cat $f)"; done) ;;
    api) echo "--- test_cuda_api"; timeout 400 $bin/test_cuda_api 2>&1 | grep -E "^\[api\]|OK|FAILED|Failure|Expected|Which is|error|PASSED" | head -40
         echo "--- api overhead"; timeout 120 $bin/tnrt_api_overhead $ref --calls 300 2>&1 | tail -10 ;;
    python) # the extension built here for 3.12 (.gpu-bin/py.tar.xz: build-py312/python/tnrt), wheels in .whl
            if [[ -d .whl ]]; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>&1 | tail -2; fi
            unpack_py
            export PYTHONPATH=/tmp/tnrt-py:/tmp/site:${PYTHONPATH:-}
            python3 -c "import tnrt, sys; print('tnrt', tnrt.__file__, sys.version)"
            timeout 400 python3 -X faulthandler -m pytest -q tests/python 2>&1 | tail -40
            timeout 200 python3 examples/quantum_circuit_amplitude.py 2>&1 | tail -8
            timeout 200 python3 bench/python/api_bench.py $ref --json $out/python-api.json 2>&1 | tail -6
            timeout 120 $bin/tnrt contract $ref --device cuda --mode compiled 2>&1 | grep -E "^time" ;;
    cotengra) # cotengra's contractors on one tree: tnrt, cuTensorNet (wheels in .whl-cq), torch
            peer_env
            timeout 400 python3 bench/python/cotengra_bench.py --json $out/cotengra.json 2>&1 | tail -8 ;;
    fam)    # the public multi-family suite (bench/suites/families.json): tnrt and every peer, one rep,
            # the roofline of tnrt compiled (FAM_ROOFLINE= turns it off); FAM_BUDGET seconds at most (default 360)
            # FAM_ARGS: more harness options, e.g. --problem 'mpo*' to run a part of the suite
            run_fam fam ${FAM_BUDGET:-360} ${FAM_ROOFLINE---roofline} ${FAM_ARGS:-} ;;
    fam-peers) # every peer of the suite in one harness run, each peer's jobs in one process (--peer-server).
            # On an H100 on 2026-12-06 its 90 jobs took 31 s and the call 44 s, against 625 s of jobs in
            # fam-peers1..3 (bench/results/2026-12-06o-h100-served/peer-wall.md); torch graph's times agreed
            # within 3% with the spawned run's. FAM_BUDGET default 500. FAM_PEERS (peer names or globs,
            # space-separated; default every peer): only those, into fam-peers-$FAM_PEERS_TAG (default fam-peers)
            # e.g. torch's two in a call that stages cuTENSOR, cuTensorNet (which needs it) in a later one
            fp=${FAM_PEERS:-$peer_names}
            run_fam fam-peers${FAM_PEERS_TAG:+-$FAM_PEERS_TAG} ${FAM_BUDGET:-500} $(peer_only "$fp") $(peer_server "$fp") ;;
    fam-tnrt|fam-peers1|fam-peers2|fam-peers3)
            # The suite in one sitting in four calls of under 600 s (tnrt's three variants, then the peers
            # in three parts; merge the four fam.tgz with bench/harness.py --merge). On 2026-12-04 tnrt
            # took 248 s, the chain/lm/mpo/mps peers 244 s, and the other peers did not finish in 300 s.
            # On an H100 on 2026-12-06 fam-peers1 took 255 s, fam-peers2 182 s (the log's step times)
            # and fam-peers3's jobs 197 s (bench/results/2026-12-06n-h100-final/peer-wall.md): the three
            # together can pass a call's 600 s; run peers1 and peers2 in one call and peers3 in the next.
            # FAM_PEER_SERVER=1: each peer's jobs in one long-lived process (harness --peer-server,
            # bench/peers/serve.py): a job then pays no Python start, imports or CUDA context (the 90
            # jobs took 4.9-10.6 s each for 2.2 s of timed runs in all, peer-wall.md); served, the 90 took
            # 31 s (fam-peers above)
            fa_peers=$peer_args; [[ -n ${FAM_PEER_SERVER:-} ]] && fa_peers="$peer_args $peer_served"
            case $s in
              fam-tnrt) fa="--skip-peers --only=eager --only=compiled --timeout 60"; fb=240  # FAM_TNRT_STATIC=0: no 'compiled static'
                        [[ ${FAM_TNRT_STATIC:-1} == 0 ]] || fa="$fa --only=compiled?static" ;;
              fam-peers1) fa="$fa_peers --problem=chain* --problem=lm* --problem=mpo* --problem=mps*"; fb=280 ;;
              fam-peers2) fa="$fa_peers --problem=lattice* --problem=peps* --problem=hyper* --problem=regular*"; fb=400 ;;
              fam-peers3) fa="$fa_peers --problem=reference* --problem=rqc* --problem=qaoa*"; fb=400 ;;
            esac
            run_fam $s ${FAM_BUDGET:-$fb} $fa ;;
    fam-roof) # where compiled's time goes on the suite's eleven memory-bound networks (a step profile each,
            # bench/roofline.py); its own folder, not merged into the table's times
            # beside it the A/Bs of the full-contraction kernel (variant "compiled dot off": the last step on
            # cuTENSOR) and of the fused launch's staging (variant "compiled stage": off by default since 2026-12-05)
            # FAM_ROOF_COMPILED_ONLY=1: compiled alone (about a third of the time)
            roof_only=(--only=compiled --only="compiled dot off" --only="compiled stage")
            [[ ${FAM_ROOF_COMPILED_ONLY:-0} == 1 ]] && roof_only=(--only=compiled)
            run_fam fam-roof ${FAM_BUDGET:-300} --skip-peers "${roof_only[@]}" --roofline --timeout 60 \
              --problem='reference*' --problem='rqc-4x5-c14-amp' --problem='rqc-5x6*' --problem='qaoa-maxcut-n24-p4' \
              --problem='qaoa-zz*' --problem='regular3-n130' --problem='regular4*' --problem='hyper-n90*' \
              --problem='lattice-10x10-d4' --problem='peps*' --problem='mpo-heis-L40*' ;;
    fam-tf32) # the reduced-precision row: tnrt compiled at --precision tf32 beside JAX's default precision
            # (TF32 on the H200) and JAX at 'highest', on the networks the suite gives JAX's default
            # FAM_TF32_JAX: which JAX variants (default 'jax*'; 'jax default*' after fam-jax in the same sitting)
            mapfile -t tf32_nets < <(problems_of 'jax default (TF32)')
            (( ${#tf32_nets[@]} )) || { echo "fam-tf32: the suite has no peer 'jax default (TF32)'"; continue; }
            run_fam fam-tf32 ${FAM_BUDGET:-240} --only='compiled tf32' --only="${FAM_TF32_JAX:-jax*}" --skip-peak --no-bandwidth --timeout 90 "${tf32_nets[@]}" ;;
    fam-jax) # JAX jit at 'highest' (full precision) on the networks the suite gives it, beside tnrt compiled
            # in the same sitting (the four-call suite leaves JAX out: its compiles do not fit the budgets)
            # FAM_JAX_PROBLEMS (names, space-separated): only those networks
            if [[ -n ${FAM_JAX_PROBLEMS:-} ]]; then jax_nets=(); for n in $FAM_JAX_PROBLEMS; do jax_nets+=("--problem=$n"); done
            else mapfile -t jax_nets < <(problems_of 'jax highest'); fi
            (( ${#jax_nets[@]} )) || { echo "fam-jax: the suite has no peer 'jax highest'"; continue; }
            run_fam fam-jax ${FAM_BUDGET:-420} --only=compiled --only='jax highest' --timeout 90 "${jax_nets[@]}" ;;
    tileddiag) # the memory-bound networks' slowest tiled steps: compiled's step profile under one layout with the
            # tiled kernel timed against cuTENSOR (auto), and with every step on cuTENSOR (off); TILEDDIAG_NETS
            # (suite names), TILEDDIAG_LAYOUT (default row)
            td=/tmp/tileddiag; mkdir -p $td
            for f in ${TILEDDIAG_NETS:-regular4-n70 rqc-5x6-c12-amp}; do
              F=$(fill_of $f)
              for t in auto off; do
                echo "--- $f --tiled $t --layout ${TILEDDIAG_LAYOUT:-row}"
                timeout 120 $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode compiled --layout ${TILEDDIAG_LAYOUT:-row} \
                  --tiled $t --warmup 3 --repeat 10 --step-profile $td/$f-$t.csv --json $td/$f-$t.json 2>&1 | grep -E "^time|^kernels|tiled|tnrt:"
              done
            done
            tar -czf $out/tileddiag.tgz -C /tmp tileddiag ;;
    fam-eager) # eager beside torch eager on every network of the suite, and eager without its cuBLAS route
            # (variant "eager no route") on the networks whose steps are GEMMs
            run_fam fam-eager ${FAM_BUDGET:-330} --only=eager --only="eager no route" --only=torch --timeout 60 ;;
    eagerprof) # where eager's time goes against compiled's under the same layout (lm-sliding-d2: eager
            # 2.27 ms, compiled 1.73 under row, H100): CUPTI's busy time, span and gaps of both, and
            # compiled's step profile; EAGERPROF_NETS (suite names) and EAGERPROF_LAYOUT (default row)
            for f in ${EAGERPROF_NETS:-lm-sliding-d2-h8-o64-b256}; do
              F=$(fill_of $f)
              for m in eager compiled; do
                extra=""; [[ $m == compiled ]] && extra="--step-profile $out/eagerprof-$f-steps.csv"
                echo "--- $f $m --layout ${EAGERPROF_LAYOUT:-row}"
                timeout 150 $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode $m --layout ${EAGERPROF_LAYOUT:-row} \
                  --warmup $EAGER_WARMUP --repeat 10 --profile $extra --json $out/eagerprof-$f-$m.json 2>&1 | grep -E "^time|^layout|^kernels|profile|busy|gaps|cuBLAS|tnrt:"
              done
            done ;;
    fam-miss) # the suite's two missed targets again, with tnrt's step profile: chain-n12 (compiled behind
            # torch's graph) and lm-sliding-d2 (eager behind torch eager)
            run_fam fam-miss ${FAM_BUDGET:-150} --only=eager --only=compiled --only=torch --only='torch?graph' --roofline \
              --timeout 60 --problem=chain-n12-d200-1500 --problem=lm-sliding-d2-h8-o64-b256 ;;
    fam-timing) # compiled's step timing A/B (options::step_timing): the enqueue's time (the default) against the
            # GPU's, each compiled twice (--reps 2) where the budget allows, on every network of the suite
            # (bench/results/2026-12-07e-h100-step-timing ran it with the names the other way round)
            run_fam fam-timing ${FAM_BUDGET:-300} --skip-peers --only=compiled '--only=compiled device timing' --timeout 60 --reps 2 ;;
    gridsteps) # grid runs (options::grid_steps, CLI --grid-steps; off by default) off and auto, in the order off auto auto off, on
            # the memory-bound networks of the suite and three compute-bound ones (GRID_NETS overrides; suite
            # names or 'reference'): compiled's median and its kernels line, which counts the "grid" steps
            mkdir -p /tmp/gridsteps
            for n in ${GRID_NETS:-reference rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4 mpo-heis-L40-D64-f64 lm-sliding-d3-h4-o16-b128 lm-first-last-d2-h8-o64 lattice-5x5-d16 chain-n12-d200-1500 mps-overlap-n24-D256}; do
              if [[ $n == reference ]]; then f=$ref; fill=(); else f=bench/suites/families/$n.json; fill=("--fill=$(fill_of $n)"); fi
              k=0
              for g in off auto auto off; do
                k=$((k + 1))
                echo "--- $n compiled --grid-steps $g ($k)"
                timeout 120 $bin/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --grid-steps $g --warmup 5 --repeat 30 \
                  --json /tmp/gridsteps/$n-$g-$k.json 2>&1 | grep -E "^time|^kernels|^result|rror"
              done
            done
            tar -czf $out/gridsteps.tgz -C /tmp gridsteps ;;
    dotab|ab) # an older build (.gpu-bin/old-tools.tar.xz, its bin-tools archive) against this one: compiled in the order
            # old new new old (--warmup 5 --repeat 30, JSON) on AB_NETS (dotab: DOT_NETS, the closed networks whose
            # last step is a full dot), then each build's --step-profile and its ops of kernel AB_KERNEL (dotab: dot;
            # ab: fused; AB_NETS may name "reference"); raw in $out/$s.tgz
            old=/tmp/tnrt-old; mkdir -p $old /tmp/$s
            ot=$(carried old-tools.tar.xz); [[ -n $ot ]] && tar -xJf "$ot" -C $old
            [[ -x $old/tnrt ]] || { echo "$s: no older build (carry old-tools.tar.xz in .gpu-bin or .gpu-bin-N)"; continue; }
            if [[ $s == dotab ]]; then nets=${DOT_NETS:-regular3-n130 hyper-n90-r3-e3 rqc-5x6-c12-amp rqc-4x5-c14-amp peps-norm-5x5-D4 regular4-n70}; kern=dot
            else nets=${AB_NETS:-rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-zz-n60-p4 qaoa-maxcut-n24-p4 regular3-n130 hyper-n90-r3-e3}; kern=${AB_KERNEL:-fused}; fi
            for n in $nets; do
              if [[ $n == reference ]]; then f=$ref; fill=(); else f=bench/suites/families/$n.json; fill=("--fill=$(fill_of $n)"); fi
              k=0
              for v in old new new old; do
                k=$((k + 1)); b=$bin; [[ $v == old ]] && b=$old
                echo "--- $n $v ($k)"
                timeout 120 $b/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --warmup 5 --repeat 30 \
                  --json /tmp/$s/$n-$v-$k.json 2>&1 | grep -E "^time|^kernels|^result|rror" | cut -c1-160
              done
              for v in old new; do
                b=$bin; [[ $v == old ]] && b=$old
                timeout 120 $b/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --warmup 3 --repeat 10 \
                  --step-profile /tmp/$s/$n-$v-steps.csv > /dev/null 2>&1
                echo "    $v $kern op: $(grep ",$kern," /tmp/$s/$n-$v-steps.csv | cut -d, -f2,6,7,8 | tr '\n' ' ')"
              done
            done
            tar -czf $out/$s.tgz -C /tmp $s ;;
    chains) # chains of large x small steps in one launch (options::chain_steps, CLI --chains): compiled off and
            # auto in the order off auto auto off (CHAIN_ORDER overrides; --warmup 5 --repeat 30, JSON) on CHAIN_NETS (suite names or
            # 'reference'), then auto's step profile; raw in $out/chains.tgz
            mkdir -p /tmp/chains
            for n in ${CHAIN_NETS:-reference rqc-4x5-c14-amp rqc-5x6-c12-amp qaoa-maxcut-n24-p4 qaoa-zz-n60-p4 regular3-n130 regular4-n70 hyper-n90-r3-e3 lattice-10x10-d4 peps-norm-5x5-D4}; do
              if [[ $n == reference ]]; then f=$ref; fill=(); else f=bench/suites/families/$n.json; fill=("--fill=$(fill_of $n)"); fi
              k=0
              for c in ${CHAIN_ORDER:-off auto auto off}; do
                k=$((k + 1))
                echo "--- $n --chains $c ($k)"
                timeout 120 $bin/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --chains $c --warmup 5 --repeat 30 \
                  --json /tmp/chains/$n-$c-$k.json 2>&1 | grep -E "^time|^kernels|^result|rror" | cut -c1-200
              done
              for c in ${CHAIN_PROFILE:-auto}; do
                timeout 120 $bin/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --chains $c --warmup 3 --repeat 10 \
                  --step-profile /tmp/chains/$n-steps-$c.csv > /dev/null 2>&1
              done
            done
            tar -czf $out/chains.tgz -C /tmp chains ;;
    ncu-chain) # Nsight Compute on the chain kernel, compiled with --chains on: NCU_NET (suite name, default
            # rqc-5x6-c12-amp), NCU_COUNT launches (3); the summary lines here, the report in $out
            f=${NCU_NET:-rqc-5x6-c12-amp}; F=$(fill_of $f)
            timeout 300 ncu --kernel-name regex:chain_kernel --launch-count ${NCU_COUNT:-3} \
              --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
              --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --import-source no \
              $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode compiled --chains on \
              --warmup 0 --repeat 1 > /tmp/ncu-chain.txt 2>&1
            xz -c /tmp/ncu-chain.txt > $out/ncu-chain.txt.xz
            grep -E "chain_kernel<|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Block Limit|Stall|No Eligible|Grid Size|Mem Busy|Executed Ipc|Dynamic Shared" /tmp/ncu-chain.txt | head -120 ;;
    tests-chain) # the chain kernel's GPU tests alone (test_cuda_differential, CompiledChainsMatchCpu)
            timeout 400 $bin/test_cuda_differential --gtest_filter='*Chain*' 2>&1 | grep -E "^\[chains\]|OK|FAILED|Failure|Expected|Which is|error|PASSED|rel" | head -60 ;;
    gridtune) # grid runs kept untimed (--grid-steps on) under other limits and block counts, against off, on the
            # networks with the most candidate steps (GRID_NETS overrides): compiled's median and its kernels line
            mkdir -p /tmp/gridtune
            for n in ${GRID_NETS:-qaoa-zz-n60-p4 rqc-5x6-c12-amp lattice-10x10-d4 peps-norm-5x5-D4 hyper-n90-r3-e3 regular4-n70 lm-sliding-d3-h4-o16-b128 mpo-heis-L40-D64-f64}; do
              f=bench/suites/families/$n.json
              for cfg in "off" "on 1048576 0" "on 65536 0" "on 16384 0" "on 4096 0" "on 65536 16" "on 16384 8" "on 4096 4" "on 65536 0 4096"; do
                set -- $cfg
                args=(--grid-steps $1)
                [[ -n ${2:-} ]] && args+=(--grid-max-outputs $2 --grid-blocks $3)
                [[ -n ${4:-} ]] && args+=(--grid-max-sum $4)
                tag=$(echo "$cfg" | tr ' ' '_')
                echo "--- $n ${args[*]}"
                timeout 60 $bin/tnrt contract $f --device cuda --mode compiled --fill="$(fill_of $n)" "${args[@]}" --warmup 5 --repeat 30 \
                  --json /tmp/gridtune/$n-$tag.json 2>&1 | grep -E "^time|^kernels|rror" | cut -c1-120
              done
            done
            tar -czf $out/gridtune.tgz -C /tmp gridtune ;;
    gemmcheck) # compiled's whole-program GEMM check (options::gemm_check) on and off, on the networks whose
            # cuBLAS steps it was made for: the kernels line says how many steps it took back
            mkdir -p /tmp/gemmcheck
            for n in chain-n12-d200-1500 mpo-rand-L24-D96-w8 chain-n8-d800-2000 lm-sliding-d2-h8-o64-b256; do
              for c in auto off; do
                echo "--- $n --gemm-check $c"
                timeout 120 $bin/tnrt contract bench/suites/families/$n.json --device cuda --mode compiled --fill="$(fill_of $n)" \
                  --gemm-check $c --warmup 5 --repeat 30 --json /tmp/gemmcheck/$n-$c.json 2>&1 | grep -E "^time|^kernels|^layout|rror"
              done
            done
            tar -czf $out/gemmcheck.tgz -C /tmp gemmcheck ;;
    levels) # the fused launch's levels (options::fuse_levels, CLI --fuse-levels) off and on, twice each, on the
            # networks with the most absorbed steps: compiled's median and its fused launch (step profile, one
            # replay), then eager; LEVELS_NETS (suite names, or 'reference') overrides the list
            mkdir -p /tmp/levels
            for n in ${LEVELS_NETS:-reference rqc-4x5-c14-amp rqc-5x5-c16-amp rqc-5x6-c12-amp rqc-4x5-c16-open4 qaoa-maxcut-n24-p3 hyper-n90-r3-e3 regular3-n130 hyper-n100-r3-e4}; do
              if [[ $n == reference ]]; then f=$ref; fill=(); else f=bench/suites/families/$n.json; fill=("--fill=$(fill_of $n)"); fi
              for rep in 1 2; do
                for lv in off on; do
                  echo "--- $n compiled --fuse-levels $lv (rep $rep)"
                  timeout 120 $bin/tnrt contract $f --device cuda --mode compiled "${fill[@]}" --fuse-levels $lv --warmup 5 --repeat 30 \
                    --step-profile /tmp/levels/$n-$lv-$rep.csv --json /tmp/levels/$n-$lv-$rep.json 2>&1 | grep -E "^time|^result|rror"
                  awk -F, '$2=="fused"{printf "fused launch %.1f us\n", $7*1000}' /tmp/levels/$n-$lv-$rep.csv 2>/dev/null
                done
              done
              for lv in off on; do
                echo "--- $n eager --fuse-levels $lv"
                timeout 120 $bin/tnrt contract $f --device cuda --mode eager "${fill[@]}" --fuse-levels $lv --warmup $EAGER_WARMUP --repeat 30 \
                  2>&1 | grep -E "^time|^result|rror"
              done
            done
            tar -czf $out/levels.tgz -C /tmp levels ;;
    fam-static) # tnrt compiled with its inputs in the program's own buffers (variant 'compiled static'), every
            # network of the families suite, no peers (FAM_BUDGET seconds, default 240)
            run_fam fams ${FAM_BUDGET:-240} --skip-peers --only "compiled static" ;;
    hugepath) # a path whose intermediates no device holds (cotengra's one-trial path on the QAOA network): one
            # out-of-memory line and exit 8 in both modes, no crash
            mkdir -p /tmp/hp && tar -xzf bench/results/2026-12-02-h200-branches/own-paths/paths.tgz -C /tmp/hp paths/qaoa-maxcut-n24-p4-cotengra.json
            for m in compiled eager; do
              timeout 120 $bin/tnrt contract bench/suites/families/qaoa-maxcut-n24-p4.json --device cuda --mode $m --path-file /tmp/hp/paths/qaoa-maxcut-n24-p4-cotengra.json; echo "rc=$? ($m)"
            done ;;
    sliced) # slicing (bench/suites/sliced): tiny and small sliced against unsliced; big (256 GiB unsliced
            # peak) under a 40 GB limit with the file's cotengra slices and with tnrt's own; one slice alone
            # (per-slice overhead); cuTensorNet with the same path and slices
            peer_env
            sd=bench/suites/sliced; F=0.35355339059327373
            echo "--- test_cuda_sliced"; timeout 300 $bin/test_cuda_sliced 2>&1 | grep -E "^\[sliced\]|OK|FAILED|Failure|Expected|Which is|error|PASSED" | head -30
            timeout 200 $bin/tnrt inspect $sd/big-regular3-n228.json --memory-limit 40GB --device cuda 2>&1 | tail -8
            for f in tiny-regular3-n90 small-regular3-n180; do
              for v in "--no-slice --mode compiled" "" "--parallel-slices 1" "--memory-limit 400MB" "--slice-range 0:1"; do
                echo "--- $f $v"; timeout 200 $bin/tnrt contract $sd/$f.json --device cuda --fill $F $v --warmup 1 --repeat 5 --json "$out/sl-$f${v// /}.json" 2>&1 | grep -E "^result|^time|^slicing|^memory|^compile|tnrt:"
              done
            done
            for v in "" "--parallel-slices 1" "--slice-range 0:1"; do
              echo "--- big $v"; timeout 280 $bin/tnrt contract $sd/big-regular3-n228.json --device cuda --fill $F --memory-limit 40GB $v --warmup 1 --repeat 3 --json "$out/sl-big${v// /}.json" 2>&1 | grep -E "^result|^time|^slicing|^memory|^compile|tnrt:"
            done
            echo "--- big, tnrt's own slices under 40 GB"; timeout 280 $bin/tnrt contract $sd/big-regular3-n228.json --device cuda --fill $F --memory-limit 40GB --slice auto --warmup 0 --repeat 1 2>&1 | grep -E "^time|^slicing|^memory|tnrt:"
            for f in small-regular3-n180 big-regular3-n228; do
              echo "--- cuTensorNet $f"; timeout 280 python3 bench/peers/cutensornet_sliced.py $sd/$f.json --device cuda --warmups 1 --runs 3 --memory-limit 40000000000 --json $out/cq-$f.json 2>&1 | tail -3
            done ;;
    algos)  # compiled with and without timing cuTENSOR's algorithms per step, on the families suite's
            # networks (their constant fills): ALGO_PROBLEMS globs (default: every constant-fill network)
            python3 - "$bin/tnrt" ${ALGO_PROBLEMS:-'*'} <<'PY'
import fnmatch, json, subprocess, sys
tnrt, globs = sys.argv[1], sys.argv[2:]
suite = json.load(open("bench/suites/families.json"))
for p in suite["problems"]:
    if p["fill"]["kind"] != "constant" or not any(fnmatch.fnmatch(p["name"], g) for g in globs):
        continue
    row = [p["name"]]
    for v in ("auto", "off"):
        cmd = [tnrt, "contract", p["file"], "--device", "cuda", "--mode", "compiled", "--dtype", p["dtype"], "--fill", repr(p["fill"]["value"]),
               "--warmup", "2", "--repeat", "10", "--algo-timing", v]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        t = [l for l in r.stdout.splitlines() if l.startswith("time:") or l.startswith("result:")]
        row.append(v + ": " + (" | ".join(t) if r.returncode == 0 else "rc %d %s" % (r.returncode, r.stderr.strip()[:200])))
    print("  ".join(row), flush=True)
PY
            ;;
    gemm)   # compiled with cuBLAS's GEMM lowering timed (auto), off, and under other intermediate
            # layouts, on the families suite's networks (their constant fills): GEMM_PROBLEMS globs
            # (default every constant-fill network), GEMM_VARIANTS (';'-separated option sets)
            python3 - "$bin/tnrt" ${GEMM_PROBLEMS:-'*'} <<'PY'
import fnmatch, json, os, subprocess, sys
tnrt, globs = sys.argv[1], sys.argv[2:]
variants = os.environ.get("GEMM_VARIANTS", "--gemm off;--gemm auto;--gemm auto --layout row;--gemm auto --layout follow").split(";")
suite = json.load(open("bench/suites/families.json"))
for p in suite["problems"]:
    if p["fill"]["kind"] != "constant" or not any(fnmatch.fnmatch(p["name"], g) for g in globs):
        continue
    print(p["name"], flush=True)
    for v in variants:
        cmd = [tnrt, "contract", p["file"], "--device", "cuda", "--mode", "compiled", "--dtype", p["dtype"], "--fill", repr(p["fill"]["value"]),
               "--warmup", "2", "--repeat", "10"] + v.split()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        t = [l for l in r.stdout.splitlines() if l.startswith(("time:", "result:", "kernels:"))]
        print("  %-32s " % v + (" | ".join(t) if r.returncode == 0 else "rc %d %s" % (r.returncode, r.stderr.strip()[:200])), flush=True)
PY
            ;;
    precision) # compiled at full precision, TF32 and 3xTF32 (opt-in) on the suite's compute-bound networks and
            # the reference (their constant fills: exact scalar results are 1): PREC_PROBLEMS globs
            python3 - "$bin/tnrt" ${PREC_PROBLEMS:-'reference*' 'rqc-5x5-c16*' 'regular3-n160' 'lattice-5x5*' 'lattice-7x7*' 'peps*' 'mps-overlap-n24-D256' 'mps-overlap-n40*' 'chain-n8*' 'lm-sliding-d2-h8-o64-b256' 'lm-first*' 'mpo-heis-L32-D128' 'mpo-rand*'} <<'PY'
import fnmatch, json, subprocess, sys
tnrt, globs = sys.argv[1], sys.argv[2:]
suite = json.load(open("bench/suites/families.json"))
for p in suite["problems"]:
    if p["fill"]["kind"] != "constant" or not any(fnmatch.fnmatch(p["name"], g) for g in globs):
        continue
    print(p["name"], flush=True)
    for v in ("full", "tf32", "tf32x3"):
        cmd = [tnrt, "contract", p["file"], "--device", "cuda", "--mode", "compiled", "--dtype", p["dtype"], "--fill", repr(p["fill"]["value"]),
               "--warmup", "2", "--repeat", "10", "--precision", v]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        t = [l for l in r.stdout.splitlines() if l.startswith(("time:", "result:", "layout:"))]
        print("  %-7s " % v + (" | ".join(t) if r.returncode == 0 else "rc %d %s" % (r.returncode, r.stderr.strip()[:200])), flush=True)
PY
            ;;
    kprof)  # each GPU kernel of one call: tnrt compiled (--step-profile), cuTensorNet (same path, autotuned)
            # and torch's CUDA graph (torch.profiler), on KPROF_PROBLEMS globs (constant fills): CSVs in $out/kprof
            peer_env; set -f; mkdir -p $out/kprof
            python3 - "$bin/tnrt" "$out/kprof" ${KPROF_PROBLEMS:-'hyper-n100*' 'regular3-n160' 'chain-n8*' 'chain-n12*'} <<'PY'
import fnmatch, json, subprocess, sys
tnrt, dest, globs = sys.argv[1], sys.argv[2], sys.argv[3:]
suite = json.load(open("bench/suites/families.json"))
for p in suite["problems"]:
    if p["fill"]["kind"] != "constant" or not any(fnmatch.fnmatch(p["name"], g) for g in globs):
        continue
    n, v = p["name"], repr(p["fill"]["value"])
    peer = [p["file"], "--dtype", p["dtype"], "--fill", "constant", "--value", v, "--warmups", "3", "--runs", "10"]
    jobs = [("tnrt", [tnrt, "contract", p["file"], "--device", "cuda", "--mode", "compiled", "--dtype", p["dtype"], "--fill", v,
                      "--warmup", "2", "--repeat", "10", "--step-profile", f"{dest}/{n}-tnrt.csv"]),
            ("cutensornet", ["python3", "bench/peers/cutensornet_tree.py"] + peer + ["--kernels", f"{dest}/{n}-cutensornet.csv"]),
            ("torch-graph", ["python3", "bench/peers/torch_tree.py"] + peer + ["--graph", "--kernels", f"{dest}/{n}-torch-graph.csv"])]
    print(n, flush=True)
    for tool, cmd in jobs:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        t = [l for l in r.stdout.splitlines() if l.startswith(("time:", "kernels:"))] + [l for l in r.stderr.splitlines() if l.startswith("kernels:")]
        if tool != "tnrt" and r.returncode == 0:
            t.append("median %.4g ms" % json.loads(r.stdout)["median_ms"])
        print("  %-12s " % tool + (" | ".join(t) if r.returncode == 0 else "rc %d %s" % (r.returncode, (r.stderr.strip() or r.stdout.strip())[-300:])), flush=True)
PY
            set +f
            ;;
    eagerdiag) # eager and compiled under tnrt's kernel switches, on the networks where eager trails
            # torch eager (EAGER_PROBLEMS globs; EAGER_VARIANTS: ';'-separated option sets instead of the default seven;
            # EAGER_TORCH set: torch eager on the same networks too)
            set -f  # EAGER_PROBLEMS' globs are the networks', not files of the working directory
            eager_nets=(${EAGER_PROBLEMS:-regular3-n160 hyper-n100* lattice-7x7* lm-sliding-d2* chain-n8*})
            python3 - "$bin/tnrt" "${eager_nets[@]}" <<'PY'
import fnmatch, json, os, subprocess, sys
tnrt, globs = sys.argv[1], sys.argv[2:]
suite = json.load(open("bench/suites/families.json"))
variants = ["--mode eager", "--mode eager --tiled off", "--mode eager --layout row", "--mode eager --layout follow", "--mode eager --no-fuse",
            "--mode compiled", "--mode compiled --tiled off"]
if os.environ.get("EAGER_VARIANTS"):
    variants = [v.strip() for v in os.environ["EAGER_VARIANTS"].split(";") if v.strip()]
for p in suite["problems"]:
    if p["fill"]["kind"] != "constant" or not any(fnmatch.fnmatch(p["name"], g) for g in globs):
        continue
    print(p["name"], flush=True)
    for v in variants:
        cmd = [tnrt, "contract", p["file"], "--device", "cuda", "--dtype", p["dtype"], "--fill", repr(p["fill"]["value"]),
               "--warmup", os.environ["EAGER_WARMUP"], "--repeat", "10"] + v.split()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        t = [l for l in r.stdout.splitlines() if l.startswith(("time:", "layout:", "cuBLAS route"))]
        print("  %-28s " % v + (" | ".join(t) if r.returncode == 0 else "rc %d %s" % (r.returncode, r.stderr.strip()[:200])), flush=True)
PY
            if [[ -n ${EAGER_TORCH:-} ]]; then  # torch eager on the same networks, same sitting
              python3 - "${eager_nets[@]}" <<'PY'
import fnmatch, json, subprocess, sys
suite = json.load(open("bench/suites/families.json"))
for p in suite["problems"]:
    if p["fill"]["kind"] == "constant" and any(fnmatch.fnmatch(p["name"], g) for g in sys.argv[1:]):
        r = subprocess.run(["python3", "bench/peers/torch_tree.py", p["file"], "--dtype", p["dtype"], "--fill", "constant", "--value",
                            repr(p["fill"]["value"]), "--warmups", "3", "--runs", "10"], capture_output=True, text=True, timeout=180)
        print("  torch eager %s: " % p["name"] + ("median %.4g ms" % json.loads(r.stdout)["median_ms"] if r.returncode == 0 else "rc %d %s" % (r.returncode, r.stderr.strip()[-200:])), flush=True)
PY
            fi
            set +f
            ;;
    hypercopies) # hyper-n100 compiled: the four layouts timed (default), and planned alone with its GEMM-with-copies
            # steps forced on and automatic, each with its step profile (issue 15: the copies' cap of the arena)
            f=bench/suites/families/hyper-n100-r3-e4.json; F=0.4931163522466796
            for v in "--mode compiled" "--mode compiled --layout planned --gemm-copies on" "--mode compiled --layout planned" "--mode compiled --layout follow"; do
              tag=$(echo "$v" | tr -c 'a-z0-9\n' '-' | tr -s '-'); echo "--- $v"
              timeout 120 $bin/tnrt contract $f --device cuda --fill $F $v --warmup 1 --repeat 5 --json $out/hyper$tag.json --step-profile $out/hyper-steps$tag.csv 2>&1 \
                | grep -E "^time|^layout|^memory|^kernels|^result|tnrt:"
            done ;;
    inplace) # compiled on the networks whose runs gathered the most beside their steps: inputs read in place
            # (the default once the same pointers come back) against --static-inputs, 3 warm-ups, 20 runs
            for f in chain-n12-d200-1500 chain-n8-d800-2000 chain-n30-d100-1000-shuf mps-overlap-n16-D512 lm-sliding-d2-h8-o64-b256; do
              F=$(fill_of $f)
              for v in "" "--static-inputs"; do
                echo "--- $f compiled $v"
                timeout 120 $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode compiled $v --warmup 3 --repeat 20 --json $out/inplace-$f${v:+-static}.json 2>&1 | grep -E "^time|^layout|tnrt:"
              done
            done ;;
    gemmalgos) # compiled with cuBLASLt's algorithms timed against none, on the networks whose steps are
            # GEMMs, each variant twice in turn (3 warm-ups, 20 runs each). GA_VARIANTS: "gemm-algos:min-ms ..."
            for f in ${GA_NETS:-chain-n8-d800-2000 chain-n12-d200-1500 chain-n30-d100-1000-shuf mps-overlap-n40-D384 mps-overlap-n16-D512 lattice-5x5-d16 lm-sliding-d2-h8-o64-b256 mpo-heis-L32-D128 hyper-n100-r3-e4 regular3-n160}; do
              F=$(fill_of $f)
              for r in 1 2; do
                for v in ${GA_VARIANTS:-0:0.05 8:0.05}; do
                  g=${v%%:*}; m=${v#*:}
                  echo "--- $f gemm-algos $g min-ms $m run $r"
                  timeout 150 $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode compiled --gemm-algos $g --gemm-algo-min-ms $m --warmup 3 --repeat 20 --json $out/ga-$f-$g-$m-$r.json 2>&1 | grep -E "^time|^kernels|^compile|tnrt:"
                done
              done
            done ;;
    apidbg) # an unstripped test_cuda_api (.gpu-dbg/test_cuda_api.xz): each test alone, then a backtrace
            mkdir -p /tmp/dbg && xz -dc .gpu-dbg/test_cuda_api.xz > /tmp/dbg/test_cuda_api && chmod +x /tmp/dbg/test_cuda_api
            for t in EagerAndCompiledOnUserStreamsAnyLayout ProgramThousandRunsNewPointersAndValues FourStreamsThousandContractionsEach BadViewsAreTypedErrors; do
              echo "--- $t"; timeout 300 stdbuf -oL -eL /tmp/dbg/test_cuda_api --gtest_filter="*$t" 2>&1 | grep -E "^\[api\]|OK|FAILED|Failure|Expected|Which is|error|PASSED|Segm" | head -20; echo "rc=${PIPESTATUS[0]}"
            done
            timeout 200 cuda-gdb -batch -ex run -ex bt --args /tmp/dbg/test_cuda_api 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -40 ;;
    tests-tiled) for t in $bin/test_cuda_tiled $bin/test_cuda_reference; do echo "--- $t"; timeout 300 $t --gtest_brief=1 2>&1 | tail -12; done ;;
    ref) # eager after $EAGER_WARMUP warm-ups: its layout and cuBLAS route learned
         for m in eager compiled; do timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --warmup $EAGER_WARMUP --json $out/ref-$m.json 2>&1 | tail -30; done ;;
    refverify) for m in eager compiled; do timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --random 7 --verify 2>&1 | tail -8; done ;;
    torch) timeout 300 python3 bench/peers/torch_tree.py $ref --json $out/torch.json 2>&1 | tail -5
           timeout 300 python3 bench/peers/torch_tree.py $ref --graph --json $out/torch-graph.json 2>&1 | tail -5
           python3 -c "import json;[print(f, json.load(open('$out/'+f)).get('median_ms')) for f in ['torch.json','torch-graph.json']]" ;;
    suite-a) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-const --reps 3 --budget 560 --out /tmp/ref-a 2>&1 | tail -45
             tar -czf $out/ref-a.tgz -C /tmp ref-a ;;
    suite-b) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-random --problem ref-f64-const --reps 3 --budget 560 --out /tmp/ref-b 2>&1 | tail -30
             tar -czf $out/ref-b.tgz -C /tmp ref-b ;;
    sanitize) cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
              for tool in memcheck racecheck synccheck; do
                for t in test_cuda_plan_cache test_cuda_faults test_cuda_kernels test_cuda_replay; do
                  echo "--- $tool $t"; timeout 240 $cs --tool $tool --error-exitcode 99 $bin/$t --gtest_brief=1 > $out/cs-$tool-$t.log 2>&1; echo "rc=$?"; tail -3 $out/cs-$tool-$t.log
                done
              done
              echo "--- memcheck tnrt compiled+eager on the reference"
              for m in compiled eager; do timeout 240 $cs --tool memcheck --error-exitcode 99 $bin/tnrt contract $ref --device cuda --mode $m --warmup 0 --repeat 1 > $out/cs-memcheck-ref-$m.log 2>&1; echo "rc=$?"; tail -4 $out/cs-memcheck-ref-$m.log; done ;;
    soak) timeout 300 $bin/tnrt_soak --count 10000 --seed 1 2>&1 | tail -5; echo "rc=${PIPESTATUS[0]}"
          timeout 300 $bin/tnrt_soak --count 10000 --seed 2 --fuse on --layout follow 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"
          cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
          for tool in racecheck synccheck; do echo "--- $tool soak"; timeout 200 $cs --tool $tool --error-exitcode 99 $bin/tnrt_soak --count 200 --seed 3 --fuse on 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"; done ;;
    final) for m in eager compiled; do echo "--- $m"; timeout 120 $bin/tnrt contract $ref --device cuda --mode $m --json $out/final-$m.json 2>&1 | grep -E "^time|^result|plan cache|syncs"; done
           python3 -c "import json,statistics;print('enqueue ms',statistics.median(json.load(open('$out/final-eager.json'))['enqueue_ms']))" ;;
    suite-c) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-const --problem ref-f64-const --only eager --only compiled --only torch --only "torch graph" --reps 3 --budget 500 --out /tmp/ref-c 2>&1 | tail -22
             tar -czf $out/ref-c.tgz -C /tmp ref-c ;;
    suite-h) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-const --problem ref-f32-random --problem ref-f64-const --only eager --only compiled --only torch --only "torch graph" --reps 3 --budget 540 --out /tmp/ref-h 2>&1 | tail -30
             tar -czf $out/ref-h.tgz -C /tmp ref-h ;;
    suite-r) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-const --only eager --only compiled --only "eager unfused*" --only torch --only cupy --runs 100 --reps 3 --budget 200 --out /tmp/ref-r 2>&1 | tail -20
             tar -czf $out/ref-r.tgz -C /tmp ref-r ;;
    suite-p) python3 bench/harness.py bench/suites/reference.json --tnrt $bin/tnrt --problem ref-f32-const --skip-peers --profile --reps 3 --budget 540 --out /tmp/ref-p 2>&1 | tail -30
             tar -czf $out/ref-p.tgz -C /tmp ref-p ;;
    tiled) for m in compiled eager; do for v in "--tiled off" "--tiled on" "--tiled auto"; do
             echo "--- $m $v"; timeout 120 $bin/tnrt contract $ref --device cuda --mode $m $v 2>&1 | grep -E "^time|^result"; done; done
           for m in compiled eager; do echo "--- verify $m"; timeout 300 $bin/tnrt contract $ref --device cuda --mode $m --random 7 --verify 2>&1 | grep -E "^time|^result|verif"; done
           for dt in f64 c64; do echo "--- verify $dt"; timeout 300 $bin/tnrt contract $ref --device cuda --mode compiled --dtype $dt --random 3 --verify 2>&1 | grep -E "^time|^result|verif"; done
           for dt in f32 f64; do timeout 120 $bin/tnrt contract $ref --device cuda --mode compiled --dtype $dt --warmup 1 --repeat 2 --step-profile $out/steps-tiled-$dt.csv >/dev/null 2>&1; done ;;
    ncu-tiled) ncu --kernel-name regex:tiled_kernel --launch-skip 8 --launch-count 7 --set full --import-source no \
                 $bin/tnrt contract $ref --device cuda --mode eager --warmup 0 --repeat 1 > $out/ncu-tiled.txt 2>&1
               grep -E "tiled_kernel<|DRAM Throughput|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|Achieved Occupancy|Executed Ipc A|No Eligible" $out/ncu-tiled.txt | head -80 ;;
    tableab) # the tiled kernel's table plans (options::tiled_table, CLI --tiled-table) on and off, compiled,
            # with its step profile: TABLEAB_NETS (suite names), TABLEAB_ARGS (more CLI options, e.g. --layout row)
            ta=/tmp/tableab; mkdir -p $ta
            for f in ${TABLEAB_NETS:-regular4-n70 lattice-10x10-d4}; do
              F=$(fill_of $f)
              for t in ${TABLEAB_ORDER:-on off}; do
                echo "--- $f --tiled-table $t ${TABLEAB_ARGS:-}"
                timeout 120 $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode compiled --tiled-table $t ${TABLEAB_ARGS:-} \
                  --warmup 3 --repeat 20 --step-profile $ta/$f-$t.csv --json $ta/$f-$t.json 2>&1 | grep -E "^time|^kernels|^result|tnrt:"
              done
            done
            tar -czf $out/tableab.tgz -C /tmp tableab ;;
    ncu-steps) # Nsight Compute on the slowest tiled steps of a memory-bound network, eager under one layout
            # (eager runs every tiled candidate with the rule's record): NCU_NET (suite name, default
            # regular4-n70), NCU_LAYOUT (row), NCU_SKIP/NCU_COUNT (tiled launches; under row, regular4-n70's
            # 18..23 are steps 30-34 and 39, the 268 MB ones); the summary lines here, the report in $out
            f=${NCU_NET:-regular4-n70}; F=$(fill_of $f)
            timeout 300 ncu --kernel-name regex:tiled_kernel --launch-skip ${NCU_SKIP:-18} --launch-count ${NCU_COUNT:-6} \
              --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
              --section SchedulerStats --section WarpStateStats --import-source no \
              $bin/tnrt contract bench/suites/families/$f.json --device cuda --fill $F --mode eager --layout ${NCU_LAYOUT:-row} \
              --warmup 0 --repeat 1 > /tmp/ncu-steps.txt 2>&1
            xz -c /tmp/ncu-steps.txt > $out/ncu-steps.txt.xz
            grep -E "tiled_kernel<|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Shared Memory Config|Block Limit|Stall|No Eligible|Grid Size|Mem Busy|Max Bandwidth" /tmp/ncu-steps.txt | head -150 ;;
    eager3) for i in 1 2 3; do timeout 60 $bin/tnrt contract $ref --device cuda --mode eager 2>&1 | grep -E "^time"; done ;;
    cupti) $bin/tnrt --version | grep profiler
           echo "--- test_cuda_profiler"; timeout 300 $bin/test_cuda_profiler 2>&1 | grep -E "^\[profiler\]|OK|FAILED|SKIPPED|Failure|Expected|Which is|actual" | head -60
           echo "--- tests/cli/profile.sh"; timeout 300 bash tests/cli/profile.sh $bin/tnrt . 2>&1 | tail -25
           for m in eager compiled; do for v in "" "--no-fuse"; do
             echo "--- $m $v --profile"; timeout 120 $bin/tnrt contract $ref --device cuda --mode $m $v --profile --json $out/profile-$m${v:+-nofuse}.json 2>&1 | grep -E "^time|^profile|^  "
           done; done
           python3 bench/harness.py bench/suites/smoke.json --tnrt $bin/tnrt --profile --skip-peers --reps 1 --out /tmp/smoke-profile 2>&1 | tail -6
           ls /tmp/smoke-profile; tar -czf $out/smoke-profile.tgz -C /tmp smoke-profile ;;
    pathab) # auto's paths under today's cost model against those under the overlap fit (both written by
            # bench/paths/model_paths.cpp, bench/results/2026-12-03-cpu-model-overlap/paths.tgz), tnrt compiled in
            # turns (PATHAB_BUDGET seconds, default 300; PATHAB_ARGS: e.g. --problem 'qaoa*')
            mkdir -p /tmp/mp && tar -xzf bench/results/2026-12-03-cpu-model-overlap/paths.tgz -C /tmp/mp
            timeout 560 python3 bench/paths/path_ab.py bench/suites/families.json --tnrt $bin/tnrt --paths /tmp/mp --out /tmp/pathab \
              --warmups 2 --runs 10 --budget ${PATHAB_BUDGET:-300} ${PATHAB_ARGS:-} 2>&1 | tail -45
            tar -czf $out/pathab.tgz -C /tmp pathab ;;
    own)    # each tool's own path (issue 16): tnrt's search, cotengra at equal time, cuTensorNet's
            # contract_path; every path executed by tnrt compiled (OWN_BUDGET seconds, default 300;
            # OWN_ARGS: more options, e.g. --problem 'mps*')
            peer_env
            timeout 560 python3 bench/paths/own_paths.py bench/suites/families.json --tnrt $bin/tnrt --out /tmp/own --warmups 1 --runs 5 \
              --budget ${OWN_BUDGET:-300} ${OWN_ARGS:-} 2>&1 | tail -45
            tar -czf $out/own.tgz -C /tmp own ;;
    prof)   # per-step times beside the cost model's (issue 16's calibration): every constant-fill network of
            # the families suite on its own path and on each tool's own path of the last own-paths run
            # (bench/paths/step_profiles.py; PROF_BUDGET seconds, default 420; PROF_ARGS: e.g. --problem)
            mkdir -p /tmp/pp && tar -xzf bench/results/2026-12-02-h200-branches/own-paths/paths.tgz -C /tmp/pp
            timeout 590 python3 bench/paths/step_profiles.py bench/suites/families.json --tnrt $bin/tnrt --paths /tmp/pp/paths \
              --budget ${PROF_BUDGET:-420} ${PROF_ARGS:-} --out /tmp/prof 2>&1 | tail -12
            tar -czf $out/prof.tgz -C /tmp prof ;;
    sweep)  # the single-step sweep of step_profiles.py (GEMM shapes as extent-2 modes and as matrices)
            timeout 590 python3 bench/paths/step_profiles.py bench/suites/families.json --tnrt $bin/tnrt --sweep --no-suite-paths \
              --budget ${PROF_BUDGET:-420} --out /tmp/sweep 2>&1 | tail -8
            tar -czf $out/sweep.tgz -C /tmp sweep ;;
    probe)  # step_profiles.py --probe: the slowest steps' shapes (huge tensors, long sums into small results with
            # and without split-K), one compiled step each
            timeout 590 python3 bench/paths/step_profiles.py bench/suites/families.json --tnrt $bin/tnrt --probe --no-suite-paths \
              --budget ${PROF_BUDGET:-300} --out /tmp/probe 2>&1 | tail -40
            tar -czf $out/probe.tgz -C /tmp probe ;;
    split)  # split-K by labels (options::split_sums) off and auto on the networks and paths whose profiles had long
            # sums into small results (2026-12-03 calibration): tnrt's and cuTensorNet's own paths of 2026-12-03
            mkdir -p /tmp/p3 && tar -xzf bench/results/2026-12-03-h200-calibration/own-paths/paths.tgz -C /tmp/p3
            for v in "off:-nosplit" "auto:"; do
              timeout 290 python3 bench/paths/step_profiles.py bench/suites/families.json --tnrt $bin/tnrt --paths /tmp/p3/paths \
                --tools tnrt cutensornet --no-suite-paths --extra="--split-sums ${v%%:*}" --tag="${v#*:}" \
                --problem 'reference*' --problem rqc-5x5-c16-amp --problem 'qaoa-maxcut-n24-p[34]' --problem regular3-n130 \
                --problem rqc-5x6-c12-amp --problem hyper-n100-r3-e4 --budget ${PROF_BUDGET:-150} --out /tmp/split 2>&1 | tail -16
            done
            tar -czf $out/split.tgz -C /tmp split ;;
    nccl)   OUT=$out bash scripts/gpu-host/nccl.sh bench/suites/sliced/small-regular3-n180.json 2>&1 | tail -30 ;;
    bw) timeout 120 python3 bench/bandwidth.py 2>&1 | tail -3 ;;
    micro) timeout 120 $bin/tnrt_retire_bench 2>&1 | tail -20 ;;
    *) echo "unknown step $s" ;;
  esac
done
