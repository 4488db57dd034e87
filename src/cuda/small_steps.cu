#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/small_steps.hpp"

#include <algorithm>

namespace tnrt::cuda {
namespace {

// A minimal complex type: cuda::std::complex's multiply carries C99 Annex G NaN handling that
// these tiny steps do not need. Layout matches std::complex (real, imaginary).
constexpr int block_threads = 256;

// D[o] = sum_k A[a(o,k)] * B[b(o,k)], exactly as evaluate_small_step on the host.
template <class T>
__device__ void fused_small_steps_body(const small_step_record* records, int first, int last) {
  __shared__ small_step_record r;
  for (int s = first; s < last; ++s) {
    // One copy of the record per block; the steps of a subtree depend on each other, hence the barriers.
    constexpr int words = static_cast<int>(sizeof(small_step_record) / sizeof(int));
    for (int i = threadIdx.x; i < words; i += blockDim.x)
      reinterpret_cast<int*>(&r)[i] = reinterpret_cast<const int*>(records + s)[i];
    __syncthreads();
    const T* a = static_cast<const T*>(r.a);
    const T* b = static_cast<const T*>(r.b);
    T* d = static_cast<T*>(r.d);
    for (int o = threadIdx.x; o < r.out_count; o += blockDim.x) {
      long long ao = 0, bo = 0, dof = 0;
      int rest = o;
      for (int i = r.n_out - 1; i >= 0; --i) {
        const int x = rest % r.out_extent[i];
        rest /= r.out_extent[i];
        ao += static_cast<long long>(x) * r.out_a[i];
        bo += static_cast<long long>(x) * r.out_b[i];
        dof += static_cast<long long>(x) * r.out_d[i];
      }
      T acc{};
      for (int k = 0; k < r.sum_count; ++k) {
        long long ak = ao, bk = bo;
        int rk = k;
        for (int i = r.n_sum - 1; i >= 0; --i) {
          const int x = rk % r.sum_extent[i];
          rk /= r.sum_extent[i];
          ak += static_cast<long long>(x) * r.sum_a[i];
          bk += static_cast<long long>(x) * r.sum_b[i];
        }
        if (b != nullptr) {
          acc += a[ak] * b[bk];
        } else {
          acc += a[ak];
        }
      }
      d[dof] = acc;
    }
    __syncthreads();
  }
}

struct param_batch {
  int segments = 0;
  int begin[small_steps_per_launch + 1] = {};
  small_step_record records[small_steps_per_launch];
};
static_assert(sizeof(param_batch) <= 32000, "kernel parameters are limited to 32764 bytes");

template <class T>
__global__ void __launch_bounds__(block_threads) fused_small_steps(const small_step_record* records, const int* begin) {
  fused_small_steps_body<T>(records, begin[blockIdx.x], begin[blockIdx.x + 1]);
}

template <class T>
__global__ void __launch_bounds__(block_threads) fused_small_steps_param(const __grid_constant__ param_batch batch) {
  fused_small_steps_body<T>(batch.records, batch.begin[blockIdx.x], batch.begin[blockIdx.x + 1]);
}

}  // namespace

void launch_small_steps_from_host(dtype t, const small_step_record* records, const int* subtree_begin, int subtrees,
                                  cudaStream_t stream) {
  param_batch batch;
  int first_record = 0;
  auto flush = [&] {
    if (batch.segments == 0) return;
    const dim3 grid(static_cast<unsigned>(batch.segments)), block(block_threads);
    with_element_type(t, [&](auto tag) { fused_small_steps_param<typename decltype(tag)::type><<<grid, block, 0, stream>>>(batch); });
    TNRT_CUDA(cudaGetLastError());
    batch.segments = 0;
    first_record = 0;
  };
  for (int s = 0; s < subtrees; ++s) {
    int i = subtree_begin[s];
    const int end = subtree_begin[s + 1];
    while (i < end) {
      if (first_record == small_steps_per_launch) flush();
      const int take = std::min(end - i, small_steps_per_launch - first_record);
      batch.begin[batch.segments] = first_record;
      for (int j = 0; j < take; ++j) batch.records[first_record + j] = records[i + j];
      first_record += take;
      batch.begin[++batch.segments] = first_record;
      i += take;
    }
  }
  flush();
}

void launch_small_steps(dtype t, const small_step_record* records, const int* subtree_begin, int subtrees, cudaStream_t stream) {
  if (subtrees <= 0) return;
  const dim3 grid(static_cast<unsigned>(subtrees)), block(block_threads);
  with_element_type(t, [&](auto tag) { fused_small_steps<typename decltype(tag)::type><<<grid, block, 0, stream>>>(records, subtree_begin); });
  TNRT_CUDA(cudaGetLastError());
}

}  // namespace tnrt::cuda
