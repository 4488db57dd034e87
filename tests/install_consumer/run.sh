#!/usr/bin/env bash
# Installs the build tree into a scratch prefix (cmake --install), then configures, builds and runs
# the consumer project beside this script against it (find_package(tnrt), tnrt::tnrt).
# Usage: bash tests/install_consumer/run.sh CMAKE BUILD_DIR CXX_COMPILER
set -uo pipefail
cmake=${1:?usage: $0 CMAKE BUILD_DIR CXX_COMPILER}
build=${2:?usage: $0 CMAKE BUILD_DIR CXX_COMPILER}
cxx=${3:?usage: $0 CMAKE BUILD_DIR CXX_COMPILER}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); [[ -n ${TNRT_KEEP_TMP:-} ]] && echo "tmp: $tmp"
[[ -n ${TNRT_KEEP_TMP:-} ]] || trap 'rm -rf "$tmp"' EXIT

step() {  # step DESCRIPTION COMMAND...: runs it with its output in $tmp/log; stops at a failure
  local what=$1; shift
  if "$@" >"$tmp/log" 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what:"; tail -n 40 "$tmp/log"
    echo "install_consumer: failed"
    exit 1
  fi
}

step "cmake --install into a scratch prefix" "$cmake" --install "$build" --prefix "$tmp/prefix"
for f in include/tnrt/cpu.hpp include/tnrt/formats.hpp bin/tnrt; do
  step "installed $f" test -e "$tmp/prefix/$f"
done
step "installed tnrtConfig.cmake and tnrtConfigVersion.cmake" \
  bash -c 'compgen -G "$1/lib*/cmake/tnrt/tnrtConfig.cmake" && compgen -G "$1/lib*/cmake/tnrt/tnrtConfigVersion.cmake"' _ "$tmp/prefix"
step "no installed header includes a private (src/) header" \
  bash -c '! grep -rnE "#include \"(core|cpu|cuda|device)/" "$1/include"' _ "$tmp/prefix"
step "configure the consumer (find_package(tnrt))" \
  "$cmake" -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release
step "build the consumer" "$cmake" --build "$tmp/consumer"
step "run the consumer: C(a,c) = A(a,b) B(b,c) on the CPU" "$tmp/consumer/consumer"
cat "$tmp/log"
step "installed tnrt --version" "$tmp/prefix/bin/tnrt" --version
echo "install_consumer: ok"
