#!/usr/bin/env bash
# Here (no GPU): bundle the built binaries that a GPU host without compilers' dependencies needs
# into two archives a device `run` call can carry (carry [".gpu-bin"]): .gpu-bin/bin-tools.tar.xz
# (the tnrt tool, the micro-benchmarks, the soak, CUPTI; about 13 MB) and .gpu-bin/bin-tests.tar.xz
# (the GPU tests; about 37 MB). Each test binary links the CUDA kernels statically (about 39 MB
# each), so together they no longer fit beside the tracked tree in one call's 64 MiB: carry them
# in two calls, one archive in .gpu-bin each time; session.sh unpacks whichever it finds into the
# same folder, which stays on the machine between calls. The binaries link OpenBLAS and cudart statically and
# open cuTENSOR at run time, so they need nothing else there but the driver and libcutensor.so.2.
# CUPTI (`tnrt contract --profile`, test_cuda_profiler) is opened at run time too, and a GPU host may
# lack it: the bundle carries this machine's libcupti.so.13 (NVIDIA's file: never committed), and
# session.sh points TNRT_CUPTI_DIR at it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${TNRT_BUILD_DIR:-build}
mkdir -p .gpu-bin/stage
rm -rf .gpu-bin/stage/* .gpu-bin/bin.tar.xz .gpu-bin/bin-tools.tar.xz .gpu-bin/bin-tests.tar.xz
cp "$build/tnrt" .gpu-bin/stage/
for f in "$build"/tests/test_cuda_* "$build"/bench/micro/tnrt_* "$build"/bench/soak/tnrt_* ; do [[ -x $f ]] && cp "$f" .gpu-bin/stage/; done
strip .gpu-bin/stage/* 2>/dev/null || true
cupti=${TNRT_CUPTI_LIB:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcupti.so.13}
if [[ -f $cupti ]]; then cp -L "$cupti" .gpu-bin/stage/libcupti.so.13; else echo "pack-bin: no $cupti: the bundle has no CUPTI (--profile needs one on the host)" >&2; fi
(cd .gpu-bin/stage && tar -cf - test_cuda_* | xz -T2 -9 > ../bin-tests.tar.xz)
(cd .gpu-bin/stage && tar -cf - --exclude='test_cuda_*' . | xz -T2 -9 > ../bin-tools.tar.xz)
rm -rf .gpu-bin/stage
# The Python extension built for the GPU host's Python 3.12 (TNRT_PY312_BUILD, default build-py312;
# see session.sh step python): the staged package folder build-py312/python/tnrt.
py_build=${TNRT_PY312_BUILD:-build-py312}
rm -f .gpu-bin/py.tar.xz
if [[ -d $py_build/python/tnrt ]]; then tar -C "$py_build/python" -cf - tnrt | xz -T2 -6 > .gpu-bin/py.tar.xz; fi
ls -la .gpu-bin/
