#!/usr/bin/env bash
# From the repo root, here (no GPU), with a clean working tree: what a device call carries beside the
# slim cuTENSOR part. For each revision: check it out, build (build/), pack-bin.sh, and list the
# archives' bytes; then the tracked tree's bytes without bench/results (which the staging moves out).
# Checks main's HEAD out again at the end. Output: archive-sizes.txt
set -euo pipefail
D=bench/results/cpu-2026-12-07-slim-cutensor
back=$(git rev-parse --abbrev-ref HEAD)
for rev in main next/chain-noinline; do
  git checkout -q "$rev"
  cmake --build build -j2 > /dev/null
  TNRT_PY312_BUILD=/nonexistent bash scripts/gpu-host/pack-bin.sh > /dev/null 2>&1
  echo "# $rev ($(git rev-parse --short HEAD)): pack-bin.sh's archives, bytes"
  for a in bin-tools bin-tests-a bin-tests-b; do echo "$a $(stat -c %s .gpu-bin/$a.tar.xz)"; done
done > /tmp/archive-sizes.txt
git checkout -q "$back"
echo "# the tracked tree without bench/results, bytes: $(git ls-files -z | grep -zv '^bench/results/' | xargs -0 du -cb | tail -1 | cut -f1)" >> /tmp/archive-sizes.txt
echo "# the slim part, bytes: $(stat -c %s .gpu-host-slim/part-00 2>/dev/null || echo 'none (run pack-slim.sh)')" >> /tmp/archive-sizes.txt
mv /tmp/archive-sizes.txt $D/archive-sizes.txt
