#!/usr/bin/env bash
# A short libFuzzer run of each fuzz target (fuzz/*.cpp): builds them with fuzz/build.sh (clang,
# -fsanitize=fuzzer,address,undefined; incremental in fuzz/build or $TNRT_FUZZ_BUILD_DIR), then runs
# each for $TNRT_FUZZ_SECONDS (default 25) seconds from a scratch copy of fuzz/corpus/<target>.
# A crash, a sanitizer report, a leak, a timeout (10 s per input) or an exception other than
# tnrt::error fails the target; the reproducer is kept in the scratch directory, named on stderr.
# Skipped (exit 77, CTest's SKIP_RETURN_CODE, saying why) where clang or libFuzzer is not installed.
# Usage: bash tests/cli/fuzz_smoke.sh TNRT_BINARY REPO_ROOT   (the binary is not used)
# Ends with: fuzz_smoke: N passed, M failed
set -uo pipefail
root=${2:?usage: $0 TNRT_BINARY REPO_ROOT}
[[ $root == /* ]] || root=$PWD/$root
seconds=${TNRT_FUZZ_SECONDS:-25}
out=${TNRT_FUZZ_BUILD_DIR:-$root/fuzz/build}
targets=(tree_json einsum_json expression npy)

log=$(mktemp)
bash "$root/fuzz/build.sh" "$out" >"$log" 2>&1
rc=$?
if [[ $rc == 3 ]]; then
  echo "fuzz_smoke: SKIPPED: $(tail -n 1 "$log")"
  echo "fuzz_smoke: 0 passed, 0 failed, ${#targets[@]} skipped"
  rm -f "$log"
  exit 77
elif [[ $rc != 0 ]]; then
  cat "$log" >&2
  echo "fuzz_smoke: build of the fuzz targets failed (fuzz/build.sh exit $rc)" >&2
  echo "fuzz_smoke: 0 passed, ${#targets[@]} failed"
  rm -f "$log"
  exit 1
fi
rm -f "$log"

work=$(mktemp -d "${TMPDIR:-/tmp}/tnrt_fuzz_smoke.XXXXXX")
passed=0
failed=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  cp "$root/fuzz/corpus/$t/"* "$work/$t/corpus/" 2>/dev/null
  if (cd "$work/$t" && "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/$t/artifacts/" corpus >"$work/$t/log" 2>&1); then
    runs=$(grep -o 'number_of_executed_units: *[0-9]*' "$work/$t/log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$work/$t/log" | tail -n 1)
    echo "ok   fuzz_$t: ${runs:-?} runs in ${seconds}s, ${cov:-cov: ?}"
    passed=$((passed + 1))
  else
    echo "FAIL fuzz_$t: see $work/$t/log; reproducer(s): $(ls "$work/$t/artifacts" | tr '\n' ' ')" >&2
    grep -m 3 -E 'ERROR|finding|runtime error|exception' "$work/$t/log" >&2
    failed=$((failed + 1))
  fi
done
if [[ $failed == 0 ]]; then rm -rf "$work"; fi
echo "fuzz_smoke: $passed passed, $failed failed"
[[ $failed == 0 ]]
