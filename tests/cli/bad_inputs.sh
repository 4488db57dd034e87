#!/usr/bin/env bash
# The bad-input catalogue: runs every row of tests/data/bad/MANIFEST.tsv through the tnrt binary and
# checks, per row, that
#   - the exit code is the expected one (apps/tnrt/exit_codes.hpp, one per error class),
#   - stderr is exactly one line and contains the expected substring,
#   - stdout carries no result (no "result" line: the tool failed, so it has none to print),
#   - with --out FILE, no FILE was created and nothing else (a temporary) was left beside it.
# Usage: bash tests/cli/bad_inputs.sh TNRT_BINARY REPO_ROOT
# Manifest columns (tab-separated; lines starting with '#' and the header line "file..." are
# skipped): file, arguments, exit code, stderr substring. In the arguments {file} is the row's file
# in tests/data/bad, {dir} that directory, {tmp} an empty scratch directory of the row's own.
# Arguments are split on blanks, so paths in them must not contain spaces.
set -uo pipefail
tnrt=${1:?usage: $0 TNRT_BINARY REPO_ROOT}
root=${2:?usage: $0 TNRT_BINARY REPO_ROOT}
# each case runs from a scratch directory, so make relative paths absolute first (a bare name is
# looked up on PATH)
if [[ $tnrt == */* ]]; then
  [[ $tnrt == /* ]] || tnrt=$PWD/$tnrt
else
  tnrt=$(command -v "$tnrt" || echo "$tnrt")
fi
[[ $root == /* ]] || root=$PWD/$root
dir=$root/tests/data/bad
manifest=$dir/MANIFEST.tsv

passed=0
failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ ! -x $tnrt ]]; then
  echo "bad_inputs: '$tnrt' is not an executable"
  echo "bad_inputs: 0 passed, 1 failed"
  exit 1
fi
if [[ ! -r $manifest ]]; then
  echo "bad_inputs: cannot read $manifest"
  echo "bad_inputs: 0 passed, 1 failed"
  exit 1
fi

row=0
line_no=0
while IFS=$'\t' read -r file args want substring extra || [[ -n ${file:-} ]]; do
  line_no=$((line_no + 1))
  [[ -z ${file:-} || $file == \#* || $file == file ]] && continue
  row=$((row + 1))
  label="$file: tnrt $args"
  if [[ -z ${args:-} || ! ${want:-} =~ ^[0-9]+$ || -z ${substring:-} || -n ${extra:-} ]]; then
    failed=$((failed + 1))
    echo "FAIL MANIFEST.tsv line $line_no: expected 4 tab-separated columns (file, args, exit, stderr substring)"
    continue
  fi

  tmp=$work/case$row
  mkdir -p "$tmp"
  expanded=${args//\{file\}/$dir/$file}
  expanded=${expanded//\{dir\}/$dir}
  expanded=${expanded//\{tmp\}/$tmp}
  read -r -a argv <<<"$expanded"
  # the --out target, if any ("--out FILE" or "--out=FILE")
  out_file=
  for ((i = 0; i < ${#argv[@]}; i++)); do
    case ${argv[i]} in
      --out) out_file=${argv[i + 1]:-} ;;
      --out=*) out_file=${argv[i]#--out=} ;;
    esac
  done

  # run from the scratch directory, so anything written relative to the working directory shows up
  (cd "$tmp" && exec timeout 300 "$tnrt" "${argv[@]}") >"$work/stdout" 2>"$work/stderr" </dev/null
  rc=$?

  problems=()
  [[ $rc == "$want" ]] || problems+=("exit $rc, expected $want")
  stderr_lines=$(grep -c '' "$work/stderr")
  [[ $stderr_lines == 1 ]] || problems+=("stderr has $stderr_lines lines, expected 1")
  grep -qF -- "$substring" "$work/stderr" || problems+=("stderr lacks '$substring'")
  grep -qi 'result' "$work/stdout" && problems+=("stdout carries a result: $(grep -i -m1 'result' "$work/stdout" | head -c 200)")
  if [[ -n $out_file ]]; then
    [[ -e $out_file ]] && problems+=("--out file $out_file was created")
    out_dir=$(dirname "$out_file")
    if [[ -d $out_dir ]] && [[ -n $(find "$out_dir" -mindepth 1 -maxdepth 1 -name "$(basename "$out_file")*" -print -quit) ]]; then
      problems+=("files left beside the --out target: $(cd "$out_dir" && ls -A | head -c 200)")
    fi
  fi

  if ((${#problems[@]} == 0)); then
    passed=$((passed + 1))
    echo "ok   [$want] $label"
  else
    failed=$((failed + 1))
    msg=$(printf '%s; ' "${problems[@]}")
    msg=${msg%; }
    echo "FAIL [$want] $label: $msg; stderr: $(head -c 300 "$work/stderr" | tr '\n' ' ')"
  fi
done <"$manifest"

if ((row == 0)); then
  echo "bad_inputs: no cases in $manifest"
  failed=$((failed + 1))
fi
echo "bad_inputs: $passed passed, $failed failed"
((failed == 0))
