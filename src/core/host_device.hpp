#pragma once
// TNRT_HOST_DEVICE: a function the CUDA kernels and their host evaluators share (the index
// arithmetic of src/core/tiled_index.hpp, small_step_index.hpp and full_dot.hpp) is compiled for
// both sides under nvcc, and as a plain inline function elsewhere.
#if defined(__CUDACC__)
#define TNRT_HOST_DEVICE __host__ __device__
#else
#define TNRT_HOST_DEVICE
#endif
