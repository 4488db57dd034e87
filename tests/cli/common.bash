# Shared by the tests/cli/*.sh end-to-end tests (sourced; not a test itself).
# Each test is run as: bash tests/cli/NAME.sh TNRT_BINARY REPO_ROOT
# and ends with the line "NAME: N passed, M failed, K skipped", exiting 1 when anything failed, else
# 77 when a check could not run here (skip_check: no numpy, a GPU where a no-GPU error is tested...),
# which tests/CMakeLists.txt declares as CTest's SKIP_RETURN_CODE, so that CTest shows the test as
# skipped instead of passed; 0 when every check ran and passed.
set -uo pipefail
tnrt=${1:?usage: $0 TNRT_BINARY REPO_ROOT}
root=${2:?usage: $0 TNRT_BINARY REPO_ROOT}
test_name=$(basename "$0" .sh)
reference=$root/data/tensornetwork_permutation_optimized.json
passed=0
failed=0
skipped=0
tmp=$(mktemp -d); [[ -n ${TNRT_KEEP_TMP:-} ]] && echo "tmp: $tmp"
[[ -n ${TNRT_KEEP_TMP:-} ]] || trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
skip_check() { skipped=$((skipped + 1)); echo "skip $*"; }
check() {  # check DESCRIPTION CONDITION-COMMAND...
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

# tnrt ARGS...: runs the binary; stdout in $tmp/out, stderr in $tmp/err, exit code in $rc.
tnrt() {
  "$tnrt" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}
out() { cat "$tmp/out"; }
err() { cat "$tmp/err"; }

# expect_rc CODE ARGS...: the binary exits with CODE.
expect_rc() {
  local want=$1; shift
  tnrt "$@"
  if [[ $rc == "$want" ]]; then
    ok "exit $want: tnrt $*"
  else
    bad "exit $want: tnrt $* (got $rc; stderr: $(head -c 400 "$tmp/err"))"
  fi
}

# expect_error CODE ARGS...: exit CODE, stderr exactly one line "tnrt: <kind>: <message>", stdout empty.
expect_error() {
  local want=$1; shift
  expect_rc "$want" "$@"
  local lines
  lines=$(wc -l <"$tmp/err")
  if [[ $lines == 1 ]] && grep -q '^tnrt: [a-z/ ]*: ' "$tmp/err"; then
    ok "one error line: $(head -c 160 "$tmp/err")"
  else
    bad "one error line expected for tnrt $* (got $lines lines: $(head -c 400 "$tmp/err"))"
  fi
}

# near VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE (doubles, via awk).
near() {
  [[ -n ${1:-} ]] || return 1
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a == a + 0 && d <= t) }'
}

have_numpy() { python3 -c "import numpy" >/dev/null 2>&1; }

finish() {
  echo "$test_name: $passed passed, $failed failed, $skipped skipped"
  if [[ $failed != 0 ]]; then return 1; fi
  if [[ $skipped != 0 ]]; then return 77; fi
  return 0
}
