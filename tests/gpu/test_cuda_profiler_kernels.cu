// Kernels of tests/gpu/test_cuda_profiler.cpp: a known number of trivial launches whose count and
// duration the profiler must report.
#include <cuda_runtime.h>

namespace tnrt::gputest {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Busy for at least `nanoseconds` (the global timer, not __nanosleep, which may sleep for 0).
__global__ void spin_kernel(unsigned nanoseconds) {
  if (threadIdx.x != 0) return;
  const unsigned long long start = global_ns();
  while (global_ns() - start < nanoseconds) {
  }
}

cudaError_t launch_spin_kernels(cudaStream_t stream, int count, unsigned nanoseconds) {
  for (int i = 0; i < count; ++i) spin_kernel<<<1, 32, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace tnrt::gputest
