#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/skinny.hpp"

namespace tnrt::cuda {
namespace {

constexpr int threads = 256;

// Copies the small operand into shared memory (every block needs all of it).
template <class T>
__device__ T* stage_small(const skinny_record& r, unsigned char* smem) {
  T* small = reinterpret_cast<T*>(smem);
  const T* gsmall = static_cast<const T*>(r.small);
  for (long long i = threadIdx.x; i < r.small_span; i += blockDim.x) small[i] = gsmall[i];
  __syncthreads();
  return small;
}

// An outer index split over the merged outer groups into the three operands' offsets.
// I: 32-bit index arithmetic when the outer space allows it (64-bit division is several times slower).
template <class I>
__device__ void outer_offsets(const skinny_record& r, I rest, long long& ob, long long& os, long long& od) {
  for (int g = 0; g < r.n_outer; ++g) {
    const I e = static_cast<I>(r.outer_extent[g]);
    const long long x = static_cast<long long>(rest % e);
    rest /= e;
    ob += x * r.outer_big[g];
    os += x * r.outer_small[g];
    od += x * r.outer_d[g];
  }
}

// One thread per outer index: reads the k slice of Big once, keeps the m accumulators in registers,
// Small staged in shared memory. Same arithmetic as evaluate_skinny on the host.
template <class T, class I>
__global__ void __launch_bounds__(threads) skinny_kernel(const skinny_record r) {
  extern __shared__ unsigned char smem_raw[];
  T* small = stage_small<T>(r, smem_raw);
  const T* big = static_cast<const T*>(r.big);
  T* d = static_cast<T*>(r.d);
  const I count = static_cast<I>(r.outer_count);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I j = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    I rest = j;
    long long ob = 0, os = 0, od = 0;
    outer_offsets(r, rest, ob, os, od);
    T acc[skinny_max_m];
#pragma unroll
    for (int m = 0; m < skinny_max_m; ++m) acc[m] = T{};
    for (int k = 0; k < r.k_count; ++k) {
      const T bv = big[ob + r.k_big[k]];
      const T* sk = small + os + r.k_small[k];
#pragma unroll
      for (int m = 0; m < skinny_max_m; ++m)
        if (m < r.m_count) acc[m] += bv * sk[r.m_small[m]];
    }
#pragma unroll
    for (int m = 0; m < skinny_max_m; ++m)
      if (m < r.m_count) d[od + r.m_d[m]] = acc[m];
  }
}

// The same arithmetic with one thread per output element, m fastest: when m is the result's
// innermost mode this makes every store coalesced (the threads sharing an outer index read the same
// Big elements, a broadcast).
template <class T, class I>
__global__ void __launch_bounds__(threads) skinny_kernel_m_fast(const skinny_record r) {
  extern __shared__ unsigned char smem_raw[];
  T* small = stage_small<T>(r, smem_raw);
  const T* big = static_cast<const T*>(r.big);
  T* d = static_cast<T*>(r.d);
  const I mc = static_cast<I>(r.m_count);
  const I count = static_cast<I>(r.outer_count) * mc;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; t < count; t += stride) {
    const int m = static_cast<int>(t % mc);
    I rest = t / mc;
    long long ob = 0, os = 0, od = 0;
    outer_offsets(r, rest, ob, os, od);
    const T* sm = small + os + r.m_small[m];
    T acc{};
    for (int k = 0; k < r.k_count; ++k) acc += big[ob + r.k_big[k]] * sm[r.k_small[k]];
    d[od + r.m_d[m]] = acc;
  }
}

template <class T>
void launch(const skinny_record& r, cudaStream_t stream) {
  const std::size_t smem = static_cast<std::size_t>(r.small_span) * sizeof(T);  // <= 48 KiB (skinny_limits)
  const long long work = r.m_fast ? r.outer_count * r.m_count : r.outer_count;
  long long blocks = (work + threads - 1) / threads;
  if (blocks > 132LL * 32) blocks = 132LL * 32;  // a grid-stride loop beyond a few waves
  const bool narrow = work + static_cast<long long>(blocks) * threads < (1LL << 32);
  const auto grid = static_cast<unsigned>(blocks);
  if (r.m_fast) {
    if (narrow) {
      skinny_kernel_m_fast<T, unsigned><<<grid, threads, smem, stream>>>(r);
    } else {
      skinny_kernel_m_fast<T, unsigned long long><<<grid, threads, smem, stream>>>(r);
    }
  } else if (narrow) {
    skinny_kernel<T, unsigned><<<grid, threads, smem, stream>>>(r);
  } else {
    skinny_kernel<T, unsigned long long><<<grid, threads, smem, stream>>>(r);
  }
  TNRT_CUDA(cudaGetLastError());
}

}  // namespace

void launch_skinny(dtype t, const skinny_record& r, cudaStream_t stream) {
  with_element_type(t, [&](auto tag) { launch<typename decltype(tag)::type>(r, stream); });
}

}  // namespace tnrt::cuda
