#include "cuda/step_timer.hpp"

namespace tnrt::cuda {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(unsigned long long ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

}  // namespace

void launch_spin(cudaStream_t stream, unsigned long long ns) {
  spin<<<1, 1, 0, stream>>>(ns);
  TNRT_CUDA(cudaGetLastError());
}

}  // namespace tnrt::cuda
