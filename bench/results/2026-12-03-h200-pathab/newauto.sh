#!/usr/bin/env bash
# Dev machine, repo root, after `bash scripts/setup.sh`: the new auto's path of each constant-fill
# network of the families suite (`tnrt inspect --optimizer auto`, the file's dtype), one line each:
# name, tc, sc, model ms, search s -> newauto.txt (the reference tree's row is empty: no such file).
for n in $(python3 -c "
import json;s=json.load(open('bench/suites/families.json'))
print(' '.join(p['name'] for p in s['problems'] if p['fill']['kind']=='constant'))"); do
  out=$(build/tnrt inspect bench/suites/families/$n.json --optimizer auto 2>&1)
  echo "$n $(awk '$1=="tc:"{a=$2} $1=="sc:"{b=$2} $1=="model:"{c=$2} $1=="search:"{d=$2} END{print a, b, c, d}' <<<"$out")"
done
