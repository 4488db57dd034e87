#!/usr/bin/env bash
# Here (no GPU): bundle the built binaries that a GPU host without compilers' dependencies needs
# into archives a device `run` call can carry (carry [".gpu-bin"]): .gpu-bin/bin-tools.tar.xz
# (the tnrt tool, the micro-benchmarks, the soak, CUPTI; about 14 MB) and the GPU tests in
# .gpu-bin/bin-tests-a.tar.xz and bin-tests-b.tar.xz (seven and six programs). Each test binary
# links the CUDA kernels statically (about 43 MB each; the thirteen in one archive were 41 MB on
# 2026-12-06, over what fits beside the 25 MB tree in a call's 64 MiB): carry each archive in a
# call of its own, one in .gpu-bin each time (or each in its own .gpu-bin-N folder, all carried
# under those names); session.sh unpacks whichever it finds into the same folder, which stays on the
# machine between calls, and its `tests` step runs the test programs that call carried. The binaries link OpenBLAS and cudart statically and
# open cuTENSOR at run time, so they need nothing else there but the driver and libcutensor.so.2.
# CUPTI (`tnrt contract --profile`, test_cuda_profiler) is opened at run time too, and a GPU host may
# lack it: the bundle carries this machine's libcupti.so.13 (NVIDIA's file: never committed), and
# session.sh points TNRT_CUPTI_DIR at it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${TNRT_BUILD_DIR:-build}
mkdir -p .gpu-bin/stage
rm -rf .gpu-bin/stage/* .gpu-bin/bin.tar.xz .gpu-bin/bin-tools.tar.xz .gpu-bin/bin-tests.tar.xz .gpu-bin/bin-tests-?.tar.xz
cp "$build/tnrt" .gpu-bin/stage/
for f in "$build"/tests/test_cuda_* "$build"/bench/micro/tnrt_* "$build"/bench/soak/tnrt_* ; do [[ -x $f ]] && cp "$f" .gpu-bin/stage/; done
strip .gpu-bin/stage/* 2>/dev/null || true
cupti=${TNRT_CUPTI_LIB:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcupti.so.13}
if [[ -f $cupti ]]; then cp -L "$cupti" .gpu-bin/stage/libcupti.so.13; else echo "pack-bin: no $cupti: the bundle has no CUPTI (--profile needs one on the host)" >&2; fi
# The tests in two archives (since 2026-12-06 the thirteen in one, 41 MB, no longer fit beside the
# 25 MB tree in a call's 64 MiB): carry one per call, run `session.sh tests` after the second.
rm -f .gpu-bin/bin-tests-a.tar.xz .gpu-bin/bin-tests-b.tar.xz
(cd .gpu-bin/stage && ls test_cuda_* | head -7 | xargs tar -cf - | xz -T2 -9 > ../bin-tests-a.tar.xz)
(cd .gpu-bin/stage && ls test_cuda_* | tail -n +8 | xargs tar -cf - | xz -T2 -9 > ../bin-tests-b.tar.xz)
(cd .gpu-bin/stage && tar -cf - --exclude='test_cuda_*' . | xz -T2 -9 > ../bin-tools.tar.xz)
rm -rf .gpu-bin/stage
# The Python extension built for the GPU host's Python 3.12 (TNRT_PY312_BUILD, default build-py312;
# see session.sh step python): the staged package folder build-py312/python/tnrt.
py_build=${TNRT_PY312_BUILD:-build-py312}
rm -f .gpu-bin/py.tar.xz
if [[ -d $py_build/python/tnrt ]]; then tar -C "$py_build/python" -cf - tnrt | xz -T2 -6 > .gpu-bin/py.tar.xz; fi
ls -la .gpu-bin/
