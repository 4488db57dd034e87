#include <algorithm>
#include <mutex>

#include "core/chain_index.hpp"
#include "cuda/chain.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/resident.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr int max_dynamic_shared = 96 * 1024;

__device__ __forceinline__ void store_stream(float* p, float v) { __stcs(p, v); }
__device__ __forceinline__ void store_stream(double* p, double v) { __stcs(p, v); }
__device__ __forceinline__ void store_stream(device_complex<float>* p, device_complex<float> v) {
  __stcs(reinterpret_cast<float2*>(p), make_float2(v.re, v.im));
}
__device__ __forceinline__ void store_stream(device_complex<double>* p, device_complex<double> v) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v.re, v.im));
}

template <class T, int V>
struct alignas(16) coef_vec {
  T e[V];
};

// One block takes one tile at a time: X_0's slab into shared memory in X_0's order, every step
// from one slab buffer into the other (a thread per row of kept labels, the row's summed values in
// registers, the coefficients 16 bytes at a time from the step's table), X_m's slab out in X_m's
// order. Each step's table is built once per block, before the tiles.
//
// The next tile's loads (a thread's first P entries of the load list, tid + j * chain_threads) are
// issued into registers before the current tile's steps, so they are in flight while the steps run;
// entries past P a thread (slabs over chain_prefetch_bytes, which the default limits do not plan) are
// loaded in turn. With lists_split a thread decodes its place in a group of entries once, and each
// entry adds its group's offsets from the record.
// A split step's rows (chain_step_record::split) are decoded once a step: the thread's place in its
// group, plus each group's offsets from the record.
template <class T, int K_MAX, int V, int P>
__global__ void __launch_bounds__(chain_threads, 2) chain_kernel(const __grid_constant__ chain_record r, const __grid_constant__ chain_pointers p) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* sd = reinterpret_cast<T*>(shared_raw);
  T* buf0 = sd + r.sd_elems;
  T* buf1 = buf0 + r.slab_max;
  const int tid = static_cast<int>(threadIdx.x);
  for (int i = 0; i < r.steps; ++i) {
    const chain_step_record& s = r.step[i];
    const std::int32_t count = s.batch * s.k_count * s.n_pad;
    const T* small = static_cast<const T*>(p.small[i]);
    for (std::int32_t e = tid; e < count; e += chain_threads) sd[s.sd_offset + e] = chain_index::table_value(s, small, e);
  }
  // This thread's place in a group of chain_threads entries of each list (lists_split).
  std::int32_t load_lo_g = 0, load_lo_slot = 0, store_lo_g = 0, store_lo_slot = 0;
  if (r.lists_split != 0) {
    chain_index::load_entry(r, tid, load_lo_g, load_lo_slot);
    chain_index::store_entry(r, tid, store_lo_g, store_lo_slot);
  }
  __syncthreads();
  const T* x0 = static_cast<const T*>(p.x0);
  T* xm = static_cast<T*>(p.xm);
  const auto grid = static_cast<std::int32_t>(gridDim.x);
  T ahead[P];
  auto fetch = [&](std::int32_t t) {
    std::int32_t in_base = 0, out_base = 0;
    chain_index::tile_bases(r, t, in_base, out_base);
    const T* from = x0 + in_base;
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const std::int32_t e = tid + j * chain_threads;
      if (e < r.load_count) {
        std::int32_t g = 0, slot = 0;
        chain_index::load_entry_split(r, e, load_lo_g, load_lo_slot, g, slot);
        ahead[j] = from[g];
      }
    }
  };
  auto t = static_cast<std::int32_t>(blockIdx.x);
  if (t < r.tile_count) fetch(t);
  for (; t < r.tile_count; t += grid) {
    std::int32_t in_base = 0, out_base = 0;
    chain_index::tile_bases(r, t, in_base, out_base);
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const std::int32_t e = tid + j * chain_threads;
      if (e < r.load_count) {
        std::int32_t g = 0, slot = 0;
        chain_index::load_entry_split(r, e, load_lo_g, load_lo_slot, g, slot);
        buf0[slot] = ahead[j];
      }
    }
    for (std::int32_t e = tid + P * chain_threads; e < r.load_count; e += chain_threads) {
      std::int32_t g = 0, slot = 0;
      chain_index::load_entry_split(r, e, load_lo_g, load_lo_slot, g, slot);
      buf0[slot] = x0[in_base + g];
    }
    __syncthreads();
    if (t + grid < r.tile_count) fetch(t + grid);  // in flight during the steps
    for (int i = 0; i < r.steps; ++i) {
      const chain_step_record& s = r.step[i];
      const T* src = (i & 1) != 0 ? buf1 : buf0;
      T* dst = (i & 1) != 0 ? buf0 : buf1;
      std::int32_t lo_in = 0, lo_out = 0, lo_b = 0;
      if (s.split != 0) chain_index::row_offsets(s, tid, lo_in, lo_out, lo_b);
      for (std::int32_t row = tid; row < s.rows; row += chain_threads) {
        std::int32_t in = 0, o = 0, b = 0;
        chain_index::row_offsets_split(s, row, lo_in, lo_out, lo_b, in, o, b);
        T x[K_MAX];
#pragma unroll
        for (int k = 0; k < K_MAX; ++k)
          if (k < s.k_count) x[k] = src[in + s.k_in[k]];
        const T* table = sd + s.sd_offset + b * s.k_count * s.n_pad;
        for (std::int32_t n0 = 0; n0 < s.n_count; n0 += V) {
          T acc[V];
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = T{};
#pragma unroll
          for (int k = 0; k < K_MAX; ++k) {
            if (k < s.k_count) {
              const coef_vec<T, V> c = *reinterpret_cast<const coef_vec<T, V>*>(table + k * s.n_pad + n0);
#pragma unroll
              for (int j = 0; j < V; ++j) acc[j] += x[k] * c.e[j];
            }
          }
#pragma unroll
          for (int j = 0; j < V; ++j)
            if (n0 + j < s.n_count) dst[o + s.n_out[n0 + j]] = acc[j];
        }
      }
      __syncthreads();
    }
    const T* last = (r.steps & 1) != 0 ? buf1 : buf0;
    T* to = xm + out_base;
    for (std::int32_t e = tid; e < r.store_count; e += chain_threads) {
      std::int32_t g = 0, slot = 0;
      chain_index::store_entry_split(r, e, store_lo_g, store_lo_slot, g, slot);
      store_stream(to + g, last[slot]);
    }
    __syncthreads();  // the slabs are free for the next tile
  }
}

template <class T, int K_MAX>
void launch_kernel(const chain_record& r, const chain_pointers& p, cudaStream_t stream) {
  constexpr int v = static_cast<int>(16 / sizeof(T)) > 0 ? static_cast<int>(16 / sizeof(T)) : 1;
  constexpr int prefetch = static_cast<int>(chain_prefetch_bytes / (chain_threads * sizeof(T)));
  auto* kernel = chain_kernel<T, K_MAX, v, prefetch>;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [&] { TNRT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_shared)); });
  const std::size_t smem = r.shared_bytes(sizeof(T));
  if (smem > static_cast<std::size_t>(max_dynamic_shared)) throw internal_error("launch_chain: a record whose slabs outgrow shared memory");
  const long long resident = resident_blocks(reinterpret_cast<const void*>(kernel), chain_threads, smem);
  const auto grid = static_cast<unsigned>(std::max<long long>(1, std::min<long long>(r.tile_count, resident)));
  kernel<<<grid, chain_threads, smem, stream>>>(r, p);
  TNRT_CUDA(cudaGetLastError());
}

template <class T>
void launch(const chain_record& r, const chain_pointers& p, cudaStream_t stream) {
  std::int32_t k_max = 1;
  for (int i = 0; i < r.steps; ++i) k_max = std::max(k_max, r.step[i].k_count);
  if (k_max <= 1) return launch_kernel<T, 1>(r, p, stream);
  if (k_max <= 2) return launch_kernel<T, 2>(r, p, stream);
  if (k_max <= 4) return launch_kernel<T, 4>(r, p, stream);
  if (k_max <= 8) return launch_kernel<T, 8>(r, p, stream);
  if (k_max <= 16) return launch_kernel<T, 16>(r, p, stream);
  if constexpr (sizeof(T) <= 8) {
    if (k_max <= 32) return launch_kernel<T, 32>(r, p, stream);
  }
  if constexpr (sizeof(T) <= 4) {
    if (k_max <= 64) return launch_kernel<T, 64>(r, p, stream);
  }
  throw internal_error("launch_chain: a step summing more combinations than the kernel holds in registers");
}

}  // namespace

void launch_chain(dtype t, const chain_record& r, const chain_pointers& p, cudaStream_t stream) {
  with_element_type(t, [&](auto tag) { launch<typename decltype(tag)::type>(r, p, stream); });
}

}  // namespace tnrt::cuda
