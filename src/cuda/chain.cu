#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "core/chain_index.hpp"
#include "cuda/chain.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr int max_dynamic_shared = 96 * 1024;
constexpr int load_unroll = 4;

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
template <class T, int K_MAX, int V>
__global__ void __launch_bounds__(chain_threads) chain_kernel(const __grid_constant__ chain_record r, const chain_pointers p) {
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
  __syncthreads();
  const T* x0 = static_cast<const T*>(p.x0);
  T* xm = static_cast<T*>(p.xm);
  for (std::int64_t t = blockIdx.x; t < r.tile_count; t += gridDim.x) {
    std::int64_t in_base = 0, out_base = 0;
    chain_index::tile_bases(r, t, in_base, out_base);
    // Four loads in flight a thread before their stores into the slab.
    for (std::int32_t e0 = tid; e0 < r.load_count; e0 += chain_threads * load_unroll) {
      T v[load_unroll];
      std::int32_t slot[load_unroll];
#pragma unroll
      for (int u = 0; u < load_unroll; ++u) {
        const std::int32_t e = e0 + u * chain_threads;
        if (e < r.load_count) {
          std::int64_t g = 0;
          chain_index::load_entry(r, e, g, slot[u]);
          v[u] = x0[in_base + g];
        }
      }
#pragma unroll
      for (int u = 0; u < load_unroll; ++u)
        if (e0 + u * chain_threads < r.load_count) buf0[slot[u]] = v[u];
    }
    __syncthreads();
    for (int i = 0; i < r.steps; ++i) {
      const chain_step_record& s = r.step[i];
      const T* src = (i & 1) != 0 ? buf1 : buf0;
      T* dst = (i & 1) != 0 ? buf0 : buf1;
      for (std::int32_t row = tid; row < s.rows; row += chain_threads) {
        std::int32_t in = 0, o = 0, b = 0;
        chain_index::row_offsets(s, row, in, o, b);
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
    for (std::int32_t e = tid; e < r.store_count; e += chain_threads) {
      std::int64_t g = 0;
      std::int32_t slot = 0;
      chain_index::store_entry(r, e, g, slot);
      store_stream(xm + out_base + g, last[slot]);
    }
    __syncthreads();  // the slabs are free for the next tile
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

template <class T, int K_MAX>
void launch_kernel(const chain_record& r, const chain_pointers& p, cudaStream_t stream) {
  constexpr int v = static_cast<int>(16 / sizeof(T)) > 0 ? static_cast<int>(16 / sizeof(T)) : 1;
  auto* kernel = chain_kernel<T, K_MAX, v>;
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [&] { TNRT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_shared)); });
  const std::size_t smem = r.shared_bytes(sizeof(T));
  if (smem > static_cast<std::size_t>(max_dynamic_shared)) throw internal_error("launch_chain: a record whose slabs outgrow shared memory");
  static std::mutex occupancy_mutex;
  static std::vector<std::pair<std::size_t, int>> occupancy;
  int per_sm = -1;
  {
    const std::lock_guard<std::mutex> lock(occupancy_mutex);
    for (const auto& [bytes, blocks] : occupancy)
      if (bytes == smem) per_sm = blocks;
  }
  if (per_sm < 0) {
    TNRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, chain_threads, smem));
    const std::lock_guard<std::mutex> lock(occupancy_mutex);
    occupancy.emplace_back(smem, per_sm);
  }
  const long long resident = static_cast<long long>(std::max(per_sm, 1)) * multiprocessors();
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
