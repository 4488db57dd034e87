# Included before project() when scikit-build-core builds the wheel (pyproject.toml:
# CMAKE_PROJECT_INCLUDE_BEFORE): `pip install .` finds nvcc where the CUDA toolkit usually is
# even when it is not on PATH, as scripts/setup.sh does for the CMake build.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "nvcc (python/cuda_hint.cmake)")
endif()
