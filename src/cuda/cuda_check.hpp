#pragma once
// Every CUDA runtime call is checked; a failure throws device_error (out_of_memory for allocation
// failures) naming the call, the error and the call site.
#include <cuda_runtime_api.h>

namespace tnrt::cuda {
void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);
}  // namespace tnrt::cuda

#define TNRT_CUDA(call)                                                                 \
  do {                                                                                  \
    const cudaError_t tnrt_cuda_status_ = (call);                                       \
    if (tnrt_cuda_status_ != cudaSuccess)                                               \
      ::tnrt::cuda::throw_cuda_error(tnrt_cuda_status_, #call, __FILE__, __LINE__);     \
  } while (0)
