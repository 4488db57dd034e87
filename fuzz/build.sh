#!/usr/bin/env bash
# Builds the libFuzzer targets of tnrt into fuzz/build (or $1):
#   fuzz_tree_json, fuzz_einsum_json, fuzz_expression, fuzz_npy
# with clang++-14 -fsanitize=fuzzer,address,undefined -g -O1, compiling src/core and src/cpu with
# the same flags (no CMake; OpenBLAS linked dynamically). Exits 3 when clang/libFuzzer is missing.
#   fuzz/build.sh [OUTDIR]
#   fuzz/build/fuzz_npy -max_total_time=60 fuzz/corpus/npy      # a run (see docs/reliability.md)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${1:-$here/build}
CXX=${CXX:-}
if [[ -z $CXX ]]; then
  for c in clang++-14 clang++-15 clang++-16 clang++-17 clang++-18 clang++; do
    if command -v "$c" >/dev/null 2>&1; then CXX=$c; break; fi
  done
fi
if [[ -z $CXX ]]; then
  echo "fuzz/build.sh: no clang++ found" >&2
  exit 3
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t){return 0;}\n' >"$probe/p.cpp"
if ! "$CXX" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz/build.sh: $CXX cannot link -fsanitize=fuzzer (install libclang-rt-14-dev)" >&2
  exit 3
fi
mkdir -p "$out/obj"
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root/include" -I"$root/src"
       -Wall -Wextra -Wno-unused-parameter)
objs=()
pids=()
jobs=${JOBS:-$(nproc)}
for src in "$root"/src/core/*.cpp "$root"/src/cpu/*.cpp; do
  rel=${src#"$root"/src/}
  obj="$out/obj/${rel//\//_}.o"
  objs+=("$obj")
  if [[ ! -f $obj || $src -nt $obj || $0 -nt $obj ]] || \
     find "$root/include" "$root/src" -name '*.hpp' -newer "$obj" | grep -q .; then
    "$CXX" "${flags[@]}" -c "$src" -o "$obj" &
    pids+=($!)
    if (( ${#pids[@]} >= jobs )); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p"; done
for t in fuzz_tree_json fuzz_einsum_json fuzz_expression fuzz_npy; do
  bin="$out/$t"
  if [[ -f $bin ]] && ! find "${objs[@]}" "$here/$t.cpp" "$here/fuzz_common.hpp" -newer "$bin" | grep -q .; then
    echo "up to date $bin"
    continue
  fi
  "$CXX" "${flags[@]/fuzzer-no-link/fuzzer}" "$here/$t.cpp" "${objs[@]}" -lopenblas -lpthread -o "$bin"
  echo "built $bin"
done
