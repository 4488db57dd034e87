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
# The Python package (tests/python): the extension is built into this build tree (-DTNRT_PYTHON=ON;
# the libraries above are reused: they are built position-independent from the start) and imported from
# $build/python, so no second full build through pip. `pip install .` is the user's way in (README).
# TNRT_PYTHON_TESTS=0 skips this step.
if [[ ${TNRT_PYTHON_TESTS:-1} != 0 ]]; then
  echo "test: Python package (tests/python)" >&2
  py_need=()
  for m in nanobind pytest opt_einsum cotengra quimb atheris; do
    python3 -c "import $m" 2>/dev/null || py_need+=("$m")
  done
  if ((${#py_need[@]})); then
    echo "test: pip installing ${py_need[*]}" >&2
    # atheris (the fuzz smoke run) and quimb (its test) are optional: their tests skip without them.
    python3 -m pip install -q nanobind pytest 2>&1 | grep -v -i "warning: running pip as" >&2 || true
    python3 -m pip install -q "${py_need[@]}" 2>&1 | grep -v -i "warning: running pip as" >&2 || true
  fi
  cmake -S . -B "$build" -DTNRT_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
  cmake --build "$build" -j "$jobs" --target _tnrt
  PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q tests/python
  if python3 -c "import atheris" 2>/dev/null; then
    PYTHONPATH="$PWD/$build/python" python3 tests/python/fuzz/fuzz_entry_points.py -max_total_time=20 -rss_limit_mb=4096 \
      -artifact_prefix="$PWD/$build/"
  else
    echo "test: atheris not installed: the Python fuzz run is skipped" >&2
  fi
fi
echo "test: done in $((SECONDS - start)) s" >&2
