#include <algorithm>
#include <mutex>

#include <cuda_pipeline.h>

#include "core/tiled_index.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/resident.hpp"
#include "cuda/tiled.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr int threads = tiled_threads;
constexpr int max_dynamic_shared = 96 * 1024;  // tiled_limits::max_shared_bytes

constexpr int ring = tiled_stages + 1;  // groups whose tile bases are known: computing, in flight, next

// Streaming stores (evict-first): D is written once.
__device__ __forceinline__ void store_stream(float* p, float v) { __stcs(p, v); }
__device__ __forceinline__ void store_stream(double* p, double v) { __stcs(p, v); }
template <class R>
__device__ __forceinline__ void store_stream(device_complex<R>* p, const device_complex<R>& v) {
  __stcs(&p->re, v.re);
  __stcs(&p->im, v.im);
}

// 16 bytes of results, streaming (p 16-byte aligned).
template <class T, int VD>
__device__ __forceinline__ void store_vector(T* p, const T (&v)[VD]) {
  static_assert(sizeof(T) * VD == 16);
  float4 w;
  memcpy(&w, v, 16);
  __stcs(reinterpret_cast<float4*>(p), w);
}

// Bytes of one asynchronous copy of V elements.
template <class T, int V>
struct copy_unit {
  static constexpr std::size_t bytes = sizeof(T) * V;
};

// The base offsets in Big and D of every tile of group g, into ring slot `slot`: one lane of the
// first warp per tile (the other warps never divide).
__device__ __forceinline__ void group_bases(const tiled_record& r, unsigned g, unsigned count, long long (*bases)[tiled_max_group][2], int slot,
                                            int tid) {
  if (tid < r.group) {
    const unsigned t = g * static_cast<unsigned>(r.group) + static_cast<unsigned>(tid);
    long long ob = 0, od = 0;
    if (t < count) {
      unsigned rest = t;
      for (int i = 0; i < r.n_outer; ++i) {
        const auto e = static_cast<unsigned>(r.outer_extent[i]);
        const unsigned q = rest / e;
        const auto x = static_cast<long long>(rest - q * e);
        rest = q;
        ob += x * r.outer_big[i];
        od += x * r.outer_d[i];
      }
    }
    bases[slot][tid][0] = ob;
    bases[slot][tid][1] = od;
  }
}

// Issues the asynchronous copies of group g's slabs (this thread's share, V elements per copy)
// into `stage`, and commits them as one group of copies (an empty one past the last group keeps the
// count uniform across iterations).
template <class T, int V>
__device__ __forceinline__ void issue_slab(const tiled_record& r, const long long (*base)[2], const T* big, T* stage, unsigned g, unsigned count,
                                           const std::int32_t* big_off, int tid) {
  constexpr int copies = tiled_reg_bytes / static_cast<int>(copy_unit<T, V>::bytes);
  for (int m = 0; m < r.group; ++m) {
    if (g * static_cast<unsigned>(r.group) + static_cast<unsigned>(m) >= count) break;
    const T* src = big + base[m][0];
    T* slab = stage + static_cast<std::ptrdiff_t>(m) * r.tile_big;
#pragma unroll
    for (int i = 0; i < copies; ++i) {
      const int j = (tid + i * threads) * V;
      if (j < r.tile_big) __pipeline_memcpy_async(slab + j, src + big_off[i], copy_unit<T, V>::bytes);
    }
  }
  __pipeline_commit();
}

// Whether a result's K_MAX values can load as vectors (16- or 8-byte pieces).
template <class T, int K_MAX>
__device__ constexpr bool vector_values() {
  return (sizeof(T) * K_MAX) % 16 == 0 || sizeof(T) * K_MAX == 8;
}

// A result's slab values: vector loads when they are adjacent and fill the loop (k_dense), else
// one load per contracted combination.
template <class T, int K_MAX>
__device__ __forceinline__ void load_values(const tiled_record& r, const T* sl, T (&v)[K_MAX]) {
  constexpr std::size_t bytes = sizeof(T) * K_MAX;
  if constexpr (bytes % 16 == 0) {
    if (r.k_dense != 0) {
#pragma unroll
      for (std::size_t c = 0; c < bytes / 16; ++c) {
        const uint4 w = reinterpret_cast<const uint4*>(sl)[c];
        memcpy(reinterpret_cast<unsigned char*>(v) + 16 * c, &w, 16);
      }
      return;
    }
  } else if constexpr (bytes == 8) {
    if (r.k_dense != 0) {
      const uint2 w = *reinterpret_cast<const uint2*>(sl);
      memcpy(v, &w, 8);
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < K_MAX; ++k) v[k] = k < r.k_count ? sl[r.k_pack[k] & 0xFFFFU] : T{};
}

// One block walks groups of tiles in a grid-stride loop. Per tile: the slab of Big (every batch
// and contracted mode, times the tile's free modes) is copied into shared memory asynchronously,
// in Big's memory order (coalesced, V elements per copy), `stages - 1` groups ahead of the one
// being computed, so that enough bytes are in flight to cover the memory latency without holding
// them in registers. D's tile is written in D's memory order (coalesced). A thread's results sit at
// the same places of every tile, so their offsets and their Small coefficients (K_MAX each) live
// in registers; per result and contracted combination the loop is one shared load and one FMA.
// Tile bases are computed once per tile by the first warp, a group ahead of their copies.
// Same arithmetic and indexing as evaluate_tiled (src/core/tiled_index.hpp).
// MODE: how a thread holds its results (tiled_vec_kind):
//   scalar_mode: one result per thread-stride; reuse_mode: the same, reusing the previous result's
//     values (record.reuse);
//   values_mode: runs of VD adjacent results reading slab values at fixed offsets from the run's
//     first (tiled_run_values; one load per run when the offsets are all 0);
//   coefs_mode: runs of VD adjacent results sharing coefficients (tiled_run_coefs).
//   table_mode: values_mode's runs, each result's coefficients read from the shared table
//     (tiled_run_table) in 16-byte pieces instead of held in registers.
enum : int { scalar_mode = 0, reuse_mode = 1, values_mode = 2, coefs_mode = 3, table_mode = 4 };
// In the vector modes result e0 + u (e0 a multiple of VD, u < VD) of a tile is the thread's when
// (e0 / VD) % threads is its index; results are stored 16 bytes at a time (vec_store).
template <class T, int K_MAX, int MODE>
struct results_of {
  static constexpr bool vector = MODE == values_mode || MODE == coefs_mode || MODE == table_mode;
  static constexpr int vd = vector ? tiled_vec_d(sizeof(T)) : 1;
  static constexpr int outs = tiled_outputs_for(sizeof(T), K_MAX,
                                                MODE == coefs_mode    ? tiled_run_coefs
                                                : MODE == values_mode ? tiled_run_values
                                                : MODE == table_mode  ? tiled_run_table
                                                                      : tiled_scalar);
  static constexpr int runs = outs / vd;                 // vectors (or results) per thread
  // Coefficient sets per thread (table_mode holds none: one unused set keeps the array legal).
  static constexpr int coefs = MODE == coefs_mode ? runs : MODE == table_mode ? 1 : outs;
  static constexpr int rows = MODE == table_mode ? outs : 1;  // table rows per thread (table_mode)
};

// sum_k v[k] * row[k] for a table row in shared memory (16-byte aligned, K_MAX elements, zeros past
// k_count), read 16 bytes at a time where the row allows; four partial sums (K_MAX >= 8) shorten the
// chain of dependent FMAs.
template <class T, int K_MAX>
__device__ __forceinline__ T dot_row(const T (&v)[K_MAX], const T* row) {
  constexpr int parts = K_MAX >= 8 ? 4 : 1;
  T part[parts];
#pragma unroll
  for (int i = 0; i < parts; ++i) part[i] = T{};
  if constexpr ((sizeof(T) * K_MAX) % 16 == 0 && 16 % sizeof(T) == 0) {
    constexpr int per = static_cast<int>(16 / sizeof(T));
#pragma unroll
    for (int c = 0; c < K_MAX / per; ++c) {
      const uint4 w = reinterpret_cast<const uint4*>(row)[c];
      T cc[per];
      memcpy(cc, &w, 16);
#pragma unroll
      for (int i = 0; i < per; ++i) part[(c * per + i) % parts] += v[c * per + i] * cc[i];
    }
  } else {
#pragma unroll
    for (int k = 0; k < K_MAX; ++k) part[k % parts] += v[k] * row[k];
  }
  T acc = part[0];
#pragma unroll
  for (int i = 1; i < parts; ++i) acc += part[i];
  return acc;
}

template <class T, int K_MAX, int V, int MODE>
__global__ void __launch_bounds__(threads, 2) tiled_kernel(const __grid_constant__ tiled_record r) {
  using layout = results_of<T, K_MAX, MODE>;
  constexpr int copies = tiled_reg_bytes / static_cast<int>(copy_unit<T, V>::bytes);
  constexpr int outs = layout::outs;
  constexpr int VD = layout::vd;
  constexpr int runs = layout::runs;
  static_assert(outs % VD == 0);
  constexpr int stages = tiled_stages;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ long long bases[ring][tiled_max_group][2];
  T* slabs = reinterpret_cast<T*>(smem);
  const std::ptrdiff_t stage_elems = static_cast<std::ptrdiff_t>(r.group) * r.tile_big;
  T* small = slabs + stages * stage_elems;

  const int tid = static_cast<int>(threadIdx.x);
  const T* gsmall = static_cast<const T*>(r.small);
  for (int i = tid; i < r.small_span; i += threads) small[i] = gsmall[i];
  // table_mode: the coefficient table after Small, 16-byte aligned (tiled_shared_bytes leaves the
  // room), built from Small in global memory (tiled_index::table_entry, as evaluate_tiled builds it).
  [[maybe_unused]] T* table = nullptr;
  if constexpr (MODE == table_mode) {
    const auto at = (reinterpret_cast<std::uintptr_t>(small + r.small_span) + 15U) & ~static_cast<std::uintptr_t>(15U);
    table = reinterpret_cast<T*>(at);
    for (int i = tid; i < r.table_rows * K_MAX; i += threads) {
      const std::int32_t off = tiled_index::table_entry(r, i, K_MAX);
      table[i] = off < 0 ? T{} : gsmall[off];
    }
  }
  std::int32_t big_off[copies];
#pragma unroll
  for (int i = 0; i < copies; ++i) {
    const int j = (tid + i * threads) * V;
    big_off[i] = j < r.tile_big ? tiled_index::big_offset(r, j) : 0;
  }
  const auto count = static_cast<unsigned>(r.tile_count);
  const unsigned groups = (count + static_cast<unsigned>(r.group) - 1U) / static_cast<unsigned>(r.group);
  const unsigned step = gridDim.x;
  const unsigned first = blockIdx.x;
#pragma unroll
  for (int s = 0; s < stages; ++s) group_bases(r, first + static_cast<unsigned>(s) * step, count, bases, s, tid);
  __syncthreads();  // Small is staged, the first bases known
  std::int32_t d_off[runs];
  std::int32_t slot[runs];
  T coef[layout::coefs][K_MAX];
  [[maybe_unused]] std::int32_t row_off[layout::rows];  // table_mode: each result's table row, times K_MAX
#pragma unroll
  for (int j = 0; j < runs; ++j) {
    const int e0 = (tid + j * threads) * VD;
    std::uint32_t pack = 0;
    d_off[j] = 0;
    if (e0 < r.tile_d) tiled_index::d_entry(r, e0, d_off[j], pack);
    slot[j] = static_cast<std::int32_t>(pack & 0xFFFFU);
    if constexpr (MODE == table_mode) {
#pragma unroll
      for (int u = 0; u < VD; ++u) row_off[j * VD + u] = e0 < r.tile_d ? tiled_index::table_row(r, e0 + u) * K_MAX : 0;
    } else if constexpr (MODE == values_mode) {
#pragma unroll
      for (int u = 0; u < VD; ++u) {
        std::int32_t off_u = 0;
        std::uint32_t pack_u = 0;
        if (e0 < r.tile_d) tiled_index::d_entry(r, e0 + u, off_u, pack_u);
        const T* sm = small + (pack_u >> 16U);
#pragma unroll
        for (int k = 0; k < K_MAX; ++k) coef[j * VD + u][k] = (e0 < r.tile_d && k < r.k_count) ? sm[r.k_pack[k] >> 16U] : T{};
      }
    } else {
      const T* sm = small + (pack >> 16U);
#pragma unroll
      for (int k = 0; k < K_MAX; ++k) coef[j][k] = (e0 < r.tile_d && k < r.k_count) ? sm[r.k_pack[k] >> 16U] : T{};
    }
  }

  const T* big = static_cast<const T*>(r.big);
  T* __restrict__ d = static_cast<T*>(r.d);
  if (first >= groups) return;  // the whole block leaves together
#pragma unroll
  for (int s = 0; s < stages - 1; ++s)
    issue_slab<T, V>(r, bases[s], big, slabs + s * stage_elems, first + static_cast<unsigned>(s) * step, count, big_off, tid);
  int stage = 0, here = 0;  // stage of shared memory and ring slot of group g
  for (unsigned g = first; g < groups; g += step) {
    // Bases a group beyond the copies, then the copies of the group `stages - 1` ahead into the
    // stage computed in the previous iteration (the barrier at its end freed both).
    const int ahead = (here + stages) % ring, copying = (here + stages - 1) % ring;
    group_bases(r, g + static_cast<unsigned>(stages) * step, count, bases, ahead, tid);
    const int refill = stage == 0 ? stages - 1 : stage - 1;
    issue_slab<T, V>(r, bases[copying], big, slabs + refill * stage_elems, g + static_cast<unsigned>(stages - 1) * step, count, big_off, tid);
    __pipeline_wait_prior(stages - 1);  // this thread's copies of group g have landed
    __syncthreads();                    // and everybody else's
    for (int m = 0; m < r.group; ++m) {
      if (g * static_cast<unsigned>(r.group) + static_cast<unsigned>(m) >= count) break;
      const T* slab = slabs + stage * stage_elems + static_cast<std::ptrdiff_t>(m) * r.tile_big;
      T* const dt = d + bases[here][m][1];
      if constexpr (layout::vector) {
#pragma unroll
        for (int j = 0; j < runs; ++j) {
          if ((tid + j * threads) * VD < r.tile_d) {
            T vals[VD];
            const T* sl = slab + slot[j];
            if constexpr (MODE == table_mode) {
              T v[K_MAX];
#pragma unroll
              for (int u = 0; u < VD; ++u) {
                if (u == 0 || r.vec_slot[u] != r.vec_slot[u - 1]) load_values<T, K_MAX>(r, sl + r.vec_slot[u], v);
                vals[u] = dot_row<T, K_MAX>(v, table + row_off[j * VD + u]);
              }
            } else if constexpr (MODE == values_mode) {
              T v[K_MAX];
#pragma unroll
              for (int u = 0; u < VD; ++u) {
                // Result u's values sit at a fixed offset from the run's first: loaded again only
                // when that offset changes (never when the run's modes are s_free).
                if (u == 0 || r.vec_slot[u] != r.vec_slot[u - 1]) load_values<T, K_MAX>(r, sl + r.vec_slot[u], v);
                T acc{};
#pragma unroll
                for (int k = 0; k < K_MAX; ++k)
                  if (k < r.k_count) acc += v[k] * coef[j * VD + u][k];
                vals[u] = acc;
              }
            } else {
#pragma unroll
              for (int u = 0; u < VD; ++u) vals[u] = T{};
#pragma unroll
              for (int k = 0; k < K_MAX; ++k) {
                if (k < r.k_count) {
                  T w[VD];
                  const uint4 raw = *reinterpret_cast<const uint4*>(sl + (r.k_pack[k] & 0xFFFFU));
                  memcpy(w, &raw, 16);
#pragma unroll
                  for (int u = 0; u < VD; ++u) vals[u] += w[u] * coef[j][k];
                }
              }
            }
            if (r.vec_store != 0) {
              store_vector<T, VD>(dt + d_off[j], vals);
            } else {
#pragma unroll
              for (int u = 0; u < VD; ++u) store_stream(dt + d_off[j] + u, vals[u]);
            }
          }
        }
      } else if constexpr (MODE == reuse_mode) {
        T v[K_MAX];
#pragma unroll
        for (int i = 0; i < outs; ++i) {
          if (tid + i * threads < r.tile_d) {
            // A result whose slab values are the previous result's (it differs in s_free modes
            // only) reuses them.
            if (i == 0 || slot[i] != slot[i - 1]) load_values<T, K_MAX>(r, slab + slot[i], v);
            T acc{};
#pragma unroll
            for (int k = 0; k < K_MAX; ++k)
              if (k < r.k_count) acc += v[k] * coef[i][k];
            store_stream(dt + d_off[i], acc);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < outs; ++i) {
          if (tid + i * threads < r.tile_d) {
            const T* sl = slab + slot[i];
            T acc{};
            if (vector_values<T, K_MAX>() && r.k_dense != 0) {
              T v[K_MAX];
              load_values<T, K_MAX>(r, sl, v);
#pragma unroll
              for (int k = 0; k < K_MAX; ++k) acc += v[k] * coef[i][k];
            } else {
#pragma unroll
              for (int k = 0; k < K_MAX; ++k)
                if (k < r.k_count) acc += sl[r.k_pack[k] & 0xFFFFU] * coef[i][k];
            }
            store_stream(dt + d_off[i], acc);
          }
        }
      }
    }
    __syncthreads();  // the stage and the ring slot of group g are free
    stage = stage + 1 == stages ? 0 : stage + 1;
    here = here + 1 == ring ? 0 : here + 1;
  }
}

template <class T, int K_MAX, int V, int MODE>
void launch_kernel(const tiled_record& r, cudaStream_t stream) {
  static std::once_flag attribute_set;
  std::call_once(attribute_set, [] {
    TNRT_CUDA(cudaFuncSetAttribute(tiled_kernel<T, K_MAX, V, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_shared));
  });
  const std::size_t smem = r.shared_bytes(sizeof(T));
  const long long resident = resident_blocks(reinterpret_cast<const void*>(tiled_kernel<T, K_MAX, V, MODE>), threads, smem);
  const long long groups = (r.tile_count + r.group - 1) / r.group;
  const auto grid = static_cast<unsigned>(std::min<long long>(groups, resident));
  tiled_kernel<T, K_MAX, V, MODE><<<grid, threads, smem, stream>>>(r);
  TNRT_CUDA(cudaGetLastError());
}

// Reusing a result's values across results costs registers (they live across results): only
// records whose results share values (s_free modes past the first tiled_threads results) take it.
// The vector layouts exist for elements under 16 bytes; run_values only where a thread's results
// are whole vectors (describe_tiled plans it only then).
template <class T, int K_MAX, int V>
void launch_as(const tiled_record& r, cudaStream_t stream) {
  if constexpr (sizeof(T) < 16) {
    if (r.vec_kind == tiled_run_coefs) {
      launch_kernel<T, K_MAX, V, coefs_mode>(r, stream);
      return;
    }
    if constexpr (sizeof(T) == 4 && K_MAX >= 8) {  // run_table is planned for these alone (binary size)
      if (r.vec_kind == tiled_run_table) {
        launch_kernel<T, K_MAX, V, table_mode>(r, stream);
        return;
      }
    }
    if constexpr (tiled_outputs(sizeof(T), K_MAX) % tiled_vec_d(sizeof(T)) == 0) {
      if (r.vec_kind == tiled_run_values) {
        launch_kernel<T, K_MAX, V, values_mode>(r, stream);
        return;
      }
    }
  }
  if (r.vec_kind != tiled_scalar) throw internal_error("launch_tiled: a vector layout the kernel does not take for this record");
  if (r.reuse != 0) {
    launch_kernel<T, K_MAX, V, reuse_mode>(r, stream);
  } else {
    launch_kernel<T, K_MAX, V, scalar_mode>(r, stream);
  }
}

template <class T, int V>
void launch_k(const tiled_record& r, cudaStream_t stream) {
  switch (tiled_k_max(r.k_count)) {
    case 1: launch_as<T, 1, V>(r, stream); return;
    case 2: launch_as<T, 2, V>(r, stream); return;
    case 4: launch_as<T, 4, V>(r, stream); return;
    case 8: launch_as<T, 8, V>(r, stream); return;
    case 16: launch_as<T, 16, V>(r, stream); return;
    default: break;
  }
  if constexpr (sizeof(T) <= 8) {
    if (tiled_k_max(r.k_count) == 32) {
      launch_as<T, 32, V>(r, stream);
      return;
    }
  }
  if constexpr (sizeof(T) <= 4) {
    if (tiled_k_max(r.k_count) == 64) {
      launch_as<T, 64, V>(r, stream);
      return;
    }
  }
  throw internal_error("launch_tiled: a record with more contracted combinations than the kernel takes");
}

template <class T>
void launch(const tiled_record& r, cudaStream_t stream) {
  constexpr int v = static_cast<int>(16 / sizeof(T));
  if constexpr (v > 1) {
    if (r.vec == v) {
      launch_k<T, v>(r, stream);
      return;
    }
  }
  launch_k<T, 1>(r, stream);
}

}  // namespace

void launch_tiled(dtype t, const tiled_record& r, cudaStream_t stream) {
  with_element_type(t, [&](auto tag) { launch<typename decltype(tag)::type>(r, stream); });
}

}  // namespace tnrt::cuda
