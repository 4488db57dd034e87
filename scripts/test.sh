#!/usr/bin/env bash
# Installs what is missing and builds tnrt (scripts/setup.sh), then runs every test with CTest:
# unit and CLI tests everywhere; GPU tests are built too and skip with a reason where there is no GPU.
#
# Sanitizers: with TNRT_SANITIZE=1 (and by default when CI=true; TNRT_SANITIZE=0 turns it off) it
# also builds build-asan (Debug, AddressSanitizer + UndefinedBehaviorSanitizer, no CUDA backend)
# and runs the unit and CLI tests there, except the full reference-network contractions (tc 2^33,
# 1 GiB intermediates: many minutes unoptimized under ASan; the same kernels run in the small
# differential tests, and the Release build runs them in full) and the fuzz smoke run (its targets
# carry their own ASan/UBSan). TNRT_ASAN_EXCLUDE overrides that
# regex ("" excludes nothing). TNRT_CMAKE_ARGS (extra CMake arguments) applies to both builds.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TNRT_BUILD_DIR:-build}
jobs=${TNRT_JOBS:-2}
start=$SECONDS

bash scripts/setup.sh
echo "test: built in $((SECONDS - start)) s; running ctest in $build" >&2
ctest --test-dir "$build" --output-on-failure -j"$jobs"

sanitize=${TNRT_SANITIZE:-}
if [[ -z $sanitize && ${CI:-} == true ]]; then
  sanitize=1
fi
if [[ $sanitize == 1 ]]; then
  echo "test: AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan" >&2
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTNRT_CUDA=OFF \
        -DTNRT_SANITIZE=address,undefined ${TNRT_CMAKE_ARGS:-} >/dev/null
  cmake --build build-asan -j "$jobs"
  exclude=${TNRT_ASAN_EXCLUDE-unit\.test_cpu_reference|cli\.reference|cli\.fuzz_smoke}
  exclude_args=()
  [[ -z $exclude ]] || exclude_args=(-E "$exclude")
  # allocator_may_return_null: the out-of-memory tests need a refused allocation to be an error the
  # code handles, not an abort. log_path: ASan's reports go to files, so that its warning about
  # such a refusal does not break the one-line stderr contract the CLI tests check; any real report
  # is printed below and fails the run (the process exits non-zero too). halt_on_error: a UBSan
  # finding fails its test.
  logs=$PWD/build-asan/sanitizer-logs
  rm -rf "$logs" && mkdir -p "$logs"
  asan_rc=0
  ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_stack_use_after_return=1:log_path=$logs/asan} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    ctest --test-dir build-asan -L "unit|cli" "${exclude_args[@]}" --output-on-failure -j"$jobs" || asan_rc=$?
  reports=$(grep -l -E "ERROR: (AddressSanitizer|LeakSanitizer)" "$logs"/asan.* 2>/dev/null || true)
  if [[ -n $reports ]]; then
    echo "test: sanitizer reports:" >&2
    for r in $reports; do echo "--- $r" >&2; cat "$r" >&2; done
    asan_rc=1
  fi
  if [[ $asan_rc != 0 ]]; then
    echo "test: the sanitizer build failed (build-asan)" >&2
    exit "$asan_rc"
  fi
fi
echo "test: done in $((SECONDS - start)) s" >&2
