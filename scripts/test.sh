#!/usr/bin/env bash
# Installs what is missing and builds tnrt (scripts/setup.sh), then runs every test with CTest:
# unit and CLI tests everywhere; GPU tests are built too and skip with a reason where there is no GPU.
#
# Sanitizers: with TNRT_SANITIZE=1 (and by default when CI=true; TNRT_SANITIZE=0 turns it off) it
# also builds build-asan (Debug, AddressSanitizer + UndefinedBehaviorSanitizer, no CUDA backend)
# and runs the unit tests there.
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
        -DTNRT_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j "$jobs"
  # halt_on_error: a UBSan finding fails the test instead of scrolling past in the log.
  ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    ctest --test-dir build-asan -L unit --output-on-failure -j"$jobs"
fi
echo "test: done in $((SECONDS - start)) s" >&2
