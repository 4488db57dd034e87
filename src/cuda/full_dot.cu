#include "cuda/full_dot.hpp"

#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"

namespace tnrt::cuda {
namespace {

// A partial sum written by another block, read from L2 (this SM's L1 never held it).
__device__ float load_cg(const float* p) { return __ldcg(p); }
__device__ double load_cg(const double* p) { return __ldcg(p); }
__device__ device_complex<float> load_cg(const device_complex<float>* p) {
  const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
  device_complex<float> r;
  r.re = v.x;
  r.im = v.y;
  return r;
}
__device__ device_complex<double> load_cg(const device_complex<double>* p) {
  const double2 v = __ldcg(reinterpret_cast<const double2*>(p));
  device_complex<double> r;
  r.re = v.x;
  r.im = v.y;
  return r;
}

// The block's threads' values summed in a fixed tree; thread 0 gets the sum.
template <class T>
__device__ T block_sum(T v, T* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int w = full_dot_threads / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w) sh[threadIdx.x] += sh[threadIdx.x + w];
    __syncthreads();
  }
  return sh[0];
}

// Tiled: the tile's offsets in A and B and each B position's slot in A's order, once per block
// (both kernels); the caller's barrier follows before they are read.
__device__ __forceinline__ void tile_tables(const full_dot_record& r, std::int32_t* a_off, std::int32_t* b_off, std::int16_t* b_slot) {
  for (int p = static_cast<int>(threadIdx.x); p < r.tile_count; p += full_dot_threads) {
    a_off[p] = full_dot_tile_a(r, p);
    std::int32_t off = 0, slot = 0;
    full_dot_tile_b(r, p, off, slot);
    b_off[p] = off;
    b_slot[p] = static_cast<std::int16_t>(slot);
  }
}

// The block's partial sum `acc` (every thread's) to partials[blockIdx.x]; the last block to finish
// (the counter) sums the partials in block order, writes d[0] and zeroes the counter for the next
// launch. `sh` holds full_dot_threads elements; the caller is done with it.
template <class T>
__device__ void finish_dot(T acc, T* sh, T* d, T* partials, unsigned* counter) {
  __shared__ bool last;
  const T block = block_sum(acc, sh);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    __threadfence();  // the partial is visible before the counter moves
    last = atomicAdd(counter, 1U) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  T total{};
  for (int j = static_cast<int>(threadIdx.x); j < static_cast<int>(gridDim.x); j += full_dot_threads) total += load_cg(partials + j);
  __syncthreads();  // sh is reused
  total = block_sum(total, sh);
  if (threadIdx.x == 0) {
    d[0] = total;
    *counter = 0;
  }
}

// Each block sums its terms (grid-stride, four terms in flight a thread; or tile by tile), then
// writes its partial sum; the last block to finish (the counter) sums the partials in block order,
// writes d[0] and zeroes the counter for the next launch. The same grid every launch: the same
// result every run.
template <class T>
__global__ void __launch_bounds__(full_dot_threads)
    full_dot_kernel(const __grid_constant__ full_dot_record r, const T* a, const T* b, T* d, T* partials, unsigned* counter) {
  __shared__ __align__(16) unsigned char raw[2 * full_dot_tile_max * sizeof(T)];
  __shared__ std::int32_t a_off[full_dot_tile_max], b_off[full_dot_tile_max];
  __shared__ std::int16_t b_slot[full_dot_tile_max];
  T* sh = reinterpret_cast<T*>(raw);
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * full_dot_threads;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * full_dot_threads + t;
  T acc{};
  if (r.tile_n > 0) {
    // The tile's offsets, once per block; then each tile: A's and B's shares in runs, B's at their
    // places in A's order, then the products.
    T* sa = sh;
    T* sb = sh + full_dot_tile_max;
    tile_tables(r, a_off, b_off, b_slot);
    __syncthreads();
    for (std::int64_t u = blockIdx.x; u < r.outer_count; u += gridDim.x) {
      std::int64_t ba = 0, bb = 0;
      full_dot_tile_base(r, u, ba, bb);
      for (int p = t; p < r.tile_count; p += full_dot_threads) {
        sa[p] = a[ba + a_off[p]];
        sb[b_slot[p]] = b[bb + b_off[p]];
      }
      __syncthreads();
      for (int p = t; p < r.tile_count; p += full_dot_threads) acc += sa[p] * sb[p];
      __syncthreads();
    }
  } else if (r.contiguous != 0) {
    for (; i + 3 * step < r.count; i += 4 * step) {
      const T x0 = a[i], x1 = a[i + step], x2 = a[i + 2 * step], x3 = a[i + 3 * step];
      const T y0 = b[i], y1 = b[i + step], y2 = b[i + 2 * step], y3 = b[i + 3 * step];
      acc += x0 * y0;
      acc += x1 * y1;
      acc += x2 * y2;
      acc += x3 * y3;
    }
    for (; i < r.count; i += step) acc += a[i] * b[i];
  } else {
#pragma unroll 4
    for (; i < r.count; i += step) {
      std::int64_t ao = 0, bo = 0;
      full_dot_offsets(r, i, ao, bo);
      acc += a[ao] * b[bo];
    }
  }
  finish_dot(acc, sh, d, partials, counter);
}

// Tiled, a group of tiles at a time (full_dot_grid::group >= 2: where one tile a round would take
// several rounds): every load of a group in flight at once, each thread's A values in registers,
// B's stored at their places in A's order (swizzled) in shared memory. A kernel of its own, so that
// the one-tile kernel above keeps its registers and shared memory.
template <class T>
__global__ void __launch_bounds__(full_dot_threads)
    full_dot_grouped_kernel(const __grid_constant__ full_dot_record r, int group, const T* a, const T* b, T* d, T* partials, unsigned* counter) {
  constexpr int group_slots = full_dot_group_bytes / static_cast<int>(sizeof(T));
  constexpr int per_thread = group_slots / full_dot_threads;  // a group's positions a thread
  static_assert(per_thread * full_dot_threads == group_slots && group_slots >= full_dot_tile_max);
  __shared__ __align__(16) unsigned char raw[full_dot_group_bytes];
  __shared__ std::int32_t a_off[full_dot_tile_max], b_off[full_dot_tile_max];
  __shared__ std::int16_t b_slot[full_dot_tile_max];
  __shared__ std::int64_t base_a[full_dot_max_group], base_b[full_dot_max_group];
  T* sh = reinterpret_cast<T*>(raw);
  const int t = static_cast<int>(threadIdx.x);
  T acc{};
  // The tile's offsets, once per block. Then each group of tiles: the tiles' bases; every
  // thread's A and B values of the group loaded at once (positions t, t + 256, ...: A's in A's
  // order, B's in B's); B's stored at their places in A's order; then the products.
  tile_tables(r, a_off, b_off, b_slot);
  const int tc = r.tile_count;
  const int tc_shift = r.pow2 != 0 ? __ffs(tc) - 1 : -1;  // every extent a power of two: so is the tile's count
  for (std::int64_t u0 = static_cast<std::int64_t>(blockIdx.x) * group; u0 < r.outer_count;
       u0 += static_cast<std::int64_t>(gridDim.x) * group) {
    if (t < group) {
      std::int64_t ba = 0, bb = 0;
      if (u0 + t < r.outer_count) full_dot_tile_base(r, u0 + t, ba, bb);
      base_a[t] = ba;
      base_b[t] = bb;
    }
    __syncthreads();  // the bases (and, the first time, the tables)
    const int live = static_cast<int>(min(static_cast<std::int64_t>(group), r.outer_count - u0)) * tc;
    T va[per_thread], vb[per_thread];
    int slot[per_thread];
#pragma unroll
    for (int j = 0; j < per_thread; ++j) {
      const int q = t + j * full_dot_threads;
      if (q < live) {
        const int g = tc_shift >= 0 ? q >> tc_shift : q / tc;
        const int p = q - g * tc;
        va[j] = a[base_a[g] + a_off[p]];
        vb[j] = b[base_b[g] + b_off[p]];
        slot[j] = g * tc + b_slot[p];
      }
    }
#pragma unroll
    for (int j = 0; j < per_thread; ++j)
      if (t + j * full_dot_threads < live) sh[full_dot_swizzle(slot[j], static_cast<int>(sizeof(T)))] = vb[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < per_thread; ++j) {
      const int q = t + j * full_dot_threads;
      if (q < live) acc += va[j] * sh[full_dot_swizzle(q, static_cast<int>(sizeof(T)))];
    }
    __syncthreads();  // sh and the bases are rewritten by the next group
  }
  finish_dot(acc, sh, d, partials, counter);
}

std::size_t counter_offset(dtype t) { return full_dot_max_blocks * size_of(t); }

}  // namespace

void launch_full_dot(dtype t, const full_dot_record& r, const void* a, const void* b, void* d, void* scratch, cudaStream_t stream) {
  auto* counter = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(scratch) + counter_offset(t));
  const full_dot_grid grid = full_dot_grid_of(r, size_of(t));
  with_element_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const dim3 blocks(static_cast<unsigned>(grid.blocks)), threads(full_dot_threads);
    if (grid.group > 1) {
      full_dot_grouped_kernel<T><<<blocks, threads, 0, stream>>>(r, grid.group, static_cast<const T*>(a), static_cast<const T*>(b),
                                                                 static_cast<T*>(d), static_cast<T*>(scratch), counter);
    } else {
      full_dot_kernel<T><<<blocks, threads, 0, stream>>>(r, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(d),
                                                         static_cast<T*>(scratch), counter);
    }
  });
  TNRT_CUDA(cudaGetLastError());
}

void reset_full_dot_scratch(dtype t, void* scratch, cudaStream_t stream) {
  TNRT_CUDA(cudaMemsetAsync(static_cast<unsigned char*>(scratch) + counter_offset(t), 0, sizeof(unsigned), stream));
}

}  // namespace tnrt::cuda
