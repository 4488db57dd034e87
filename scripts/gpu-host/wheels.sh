#!/usr/bin/env bash
# Here (with PyPI): the pure-Python and binary wheels the GPU host lacks, for its Python 3.12, into
# .whl (cotengra, autoray, quimb and cytoolz: the cotengra peer and tests/python's cotengra/quimb
# tests; kahypar: cotengra's partitioner, for bench/paths/own_paths.py) and .whl-cq (cuquantum-python, cutensornet and nvmath-python: the cuTensorNet peer). A
# device call carries them (carry [".whl", ".whl-cq"]); session.sh installs them into /tmp/site.
set -euo pipefail
cd "$(dirname "$0")/../.."
get() {
  local dest=$1; shift
  mkdir -p "$dest"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any \
    -d "$dest" "$@" 2>&1 | grep -v -i "warning: running pip as" || true
}
get .whl cotengra==0.8.3 autoray quimb cytoolz kahypar==1.3.7
get .whl-cq cuquantum-python-cu13==26.9.0 cutensornet-cu13==2.14.0 nvmath-python
du -sh .whl .whl-cq
