#include <algorithm>
#include <mutex>

#include "core/tiled_index.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/tiled.hpp"

namespace tnrt::cuda {
namespace {

constexpr int threads = tiled_threads;
constexpr int max_dynamic_shared = 96 * 1024;  // tiled_limits::max_shared_bytes

// The outer groups, copied to shared memory so each lane can read its own group.
struct outer_table {
  long long extent[tiled_max_outer], div[tiled_max_outer], big[tiled_max_outer], d[tiled_max_outer];
};

// Base offsets of tile t in Big and D: lane i of each warp takes outer group i, a warp-wide sum
// gives the bases to every lane (no block barrier needed).
template <class I>
__device__ __forceinline__ void tile_bases(const outer_table& o, int n_outer, I t, long long& ob, long long& od) {
  const int lane = static_cast<int>(threadIdx.x & 31U);
  long long b = 0, d = 0;
  if (lane < n_outer) {
    const I x = (t / static_cast<I>(o.div[lane])) % static_cast<I>(o.extent[lane]);
    b = static_cast<long long>(x) * o.big[lane];
    d = static_cast<long long>(x) * o.d[lane];
  }
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    b += __shfl_xor_sync(0xFFFFFFFFU, b, s);
    d += __shfl_xor_sync(0xFFFFFFFFU, d, s);
  }
  ob = b;
  od = d;
}

// Streaming loads and stores (evict-first): Big is read once and D written once.
__device__ __forceinline__ float load_stream(const float* p) { return __ldcs(p); }
__device__ __forceinline__ double load_stream(const double* p) { return __ldcs(p); }
template <class R>
__device__ __forceinline__ device_complex<R> load_stream(const device_complex<R>* p) {
  device_complex<R> v;
  v.re = __ldcs(&p->re);
  v.im = __ldcs(&p->im);
  return v;
}
__device__ __forceinline__ void store_stream(float* p, float v) { __stcs(p, v); }
__device__ __forceinline__ void store_stream(double* p, double v) { __stcs(p, v); }
template <class R>
__device__ __forceinline__ void store_stream(device_complex<R>* p, const device_complex<R>& v) {
  __stcs(&p->re, v.re);
  __stcs(&p->im, v.im);
}

// One block walks tiles in a grid-stride loop. Per tile: the slab of Big (every batch and
// contracted mode, times the tile's free modes) is staged in shared memory, loaded in Big's memory
// order (coalesced); while the block computes D's tile from it, each thread already holds its part
// of the next tile's slab in registers. D's tile is written in D's memory order (coalesced).
// A thread's slab slots and results are the same in every tile, so their offsets live in registers;
// the contracted combinations come from the record (uniform). Same arithmetic and indexing as
// evaluate_tiled on the host (src/core/tiled_index.hpp).
template <class T, class I>
__global__ void __launch_bounds__(threads, 2) tiled_kernel(const __grid_constant__ tiled_record r) {
  constexpr int loads = tiled_reg_bytes / static_cast<int>(sizeof(T));
  constexpr int outs = tiled_outputs_per_thread;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ outer_table outer;
  T* slab = reinterpret_cast<T*>(smem);
  T* small = slab + r.tile_big;

  const int tid = static_cast<int>(threadIdx.x);
  const T* gsmall = static_cast<const T*>(r.small);
  for (int i = tid; i < r.small_span; i += threads) small[i] = gsmall[i];
  if (tid < r.n_outer) {
    outer.extent[tid] = r.outer_extent[tid];
    outer.div[tid] = r.outer_div[tid];
    outer.big[tid] = r.outer_big[tid];
    outer.d[tid] = r.outer_d[tid];
  }
  std::int32_t big_off[loads];
#pragma unroll
  for (int i = 0; i < loads; ++i) {
    const int j = tid + i * threads;
    big_off[i] = j < r.tile_big ? tiled_index::big_offset(r, j) : 0;
  }
  std::int32_t d_off[outs];
  std::uint32_t d_pack[outs];
#pragma unroll
  for (int i = 0; i < outs; ++i) {
    const int e = tid + i * threads;
    d_off[i] = 0;
    d_pack[i] = 0;
    if (e < r.tile_d) tiled_index::d_entry(r, e, d_off[i], d_pack[i]);
  }
  __syncthreads();

  const T* __restrict__ big = static_cast<const T*>(r.big);
  T* __restrict__ d = static_cast<T*>(r.d);
  const I count = static_cast<I>(r.tile_count);
  const I step = static_cast<I>(gridDim.x);
  I t = static_cast<I>(blockIdx.x);
  if (t >= count) return;  // the whole block leaves together
  long long ob = 0, od = 0;
  tile_bases(outer, r.n_outer, t, ob, od);
  T reg[loads];
#pragma unroll
  for (int i = 0; i < loads; ++i)
    if (tid + i * threads < r.tile_big) reg[i] = load_stream(big + ob + big_off[i]);
  for (; t < count; t += step) {
    __syncthreads();  // the previous tile's readers are done with the slab
#pragma unroll
    for (int i = 0; i < loads; ++i)
      if (tid + i * threads < r.tile_big) slab[tid + i * threads] = reg[i];
    __syncthreads();
    T* const dt = d + od;
    const I next = t + step;
    if (next < count) {
      tile_bases(outer, r.n_outer, next, ob, od);
#pragma unroll
      for (int i = 0; i < loads; ++i)
        if (tid + i * threads < r.tile_big) reg[i] = load_stream(big + ob + big_off[i]);
    }
#pragma unroll
    for (int i = 0; i < outs; ++i) {
      if (tid + i * threads >= r.tile_d) break;
      const T* sl = slab + (d_pack[i] & 0xFFFFU);
      const T* sm = small + (d_pack[i] >> 16U);
      T acc{};
      for (int k = 0; k < r.k_count; ++k) {
        const std::uint32_t kp = r.k_pack[k];
        acc += sl[kp & 0xFFFFU] * sm[kp >> 16U];
      }
      store_stream(dt + d_off[i], acc);
    }
  }
}

int multiprocessors() {
  static const int count = [] {
    int dev = 0, n = 0;
    TNRT_CUDA(cudaGetDevice(&dev));
    TNRT_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
  }();
  return count;
}

template <class T, class I>
void launch_as(const tiled_record& r, cudaStream_t stream) {
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [] {
    TNRT_CUDA(cudaFuncSetAttribute(tiled_kernel<T, I>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_shared));
  });
  const std::size_t smem = r.shared_bytes(sizeof(T));
  int per_sm = 0;
  TNRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tiled_kernel<T, I>, threads, smem));
  const long long resident = static_cast<long long>(std::max(per_sm, 1)) * multiprocessors();
  const auto grid = static_cast<unsigned>(std::min<long long>(r.tile_count, resident));
  tiled_kernel<T, I><<<grid, threads, smem, stream>>>(r);
  TNRT_CUDA(cudaGetLastError());
}

template <class T>
void launch(const tiled_record& r, cudaStream_t stream) {
  // 32-bit tile arithmetic when the grid-stride loop cannot overflow it.
  if (r.tile_count < (1LL << 31)) {
    launch_as<T, unsigned>(r, stream);
  } else {
    launch_as<T, unsigned long long>(r, stream);
  }
}

}  // namespace

void launch_tiled(dtype t, const tiled_record& r, cudaStream_t stream) {
  switch (t) {
    case dtype::f32: launch<float>(r, stream); break;
    case dtype::f64: launch<double>(r, stream); break;
    case dtype::c64: launch<device_complex<float>>(r, stream); break;
    case dtype::c128: launch<device_complex<double>>(r, stream); break;
  }
}

}  // namespace tnrt::cuda
