#include "cuda/small_steps.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "core/small_step_index.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_complex.cuh"
#include "cuda/resident.hpp"

namespace tnrt::cuda {
namespace {

// Threads per block of the fused launch: the CMake cache variable TNRT_FUSED_THREADS (256, 512 or
// 1024; default 256). 512 and 1024 ran the same as 256 on an H200 (2026-12-06,
// bench/results/2026-12-06i-h200-suite/threads.log).
#ifndef TNRT_FUSED_THREADS
#define TNRT_FUSED_THREADS 256
#endif
constexpr int block_threads = TNRT_FUSED_THREADS;
static_assert(block_threads == 256 || block_threads == 512 || block_threads == 1024, "TNRT_FUSED_THREADS: 256, 512 or 1024");

// Result element `o` of record `r`: D[o] = sum_k A[a(o,k)] * B[b(o,k)] (B null: sum_k A[a(o,k)]), with
// the record's index arithmetic (small_step_index.hpp). `a` and `b` are r.a and r.b, or the block's
// staged copies of them. The fused launch and the grid runs both sum their elements here.
template <class T>
__device__ __forceinline__ void sum_element(const small_step_record& r, const T* a, const T* b, T* d, std::int32_t o) {
  std::int64_t ao = 0, bo = 0, dof = 0;
  small_step_index::out_offsets(r, o, ao, bo, dof);
  T acc{};
#pragma unroll 4
  for (int k = 0; k < r.sum_count; ++k) {
    std::int64_t ak = 0, bk = 0;
    small_step_index::sum_offsets(r, k, ak, bk);
    if (b != nullptr) {
      acc += a[ao + ak] * b[bo + bk];
    } else {
      acc += a[ao + ak];
    }
  }
  d[dof] = acc;
}

// D[o] = sum_k A[a(o,k)] * B[b(o,k)], exactly as evaluate_small_step on the host (the same index
// arithmetic: small_step_index.hpp). A subtree's records come level by level, in groups
// (group_small_steps): the records of one group read none of each other's results, so they run
// together, their result elements dealt out to the threads one after another, with one barrier
// after the group instead of one after each step. The next group's records (up to
// small_step_group_max of them) are loaded into registers while the current group runs and stored
// into the other of two shared copies before that barrier, so a group waits on no record load. A
// step whose operands span at most small_step_stage_elements (a_span; always alone in its group)
// first copies them into shared memory, every load in flight at once, then sums from there.
template <class T>
__device__ void fused_small_steps_body(const small_step_record* records, int first, int last) {
  constexpr int words = static_cast<int>(sizeof(small_step_record) / sizeof(int));
  static_assert(sizeof(small_step_record) % sizeof(int) == 0, "records move as whole words");
  constexpr int per_thread = (words * small_step_group_max + block_threads - 1) / block_threads;
  __shared__ small_step_record buf[2][small_step_group_max];
  __shared__ __align__(16) unsigned char stage_raw[2 * small_step_stage_elements * sizeof(T)];
  T* stage_a = reinterpret_cast<T*>(stage_raw);
  T* stage_b = stage_a + small_step_stage_elements;
  const int t = static_cast<int>(threadIdx.x);
  {
    const int n = min(small_step_group_max, last - first) * words;
    for (int i = t; i < n; i += block_threads)
      reinterpret_cast<int*>(buf[0])[i] = reinterpret_cast<const int*>(records + first)[i];
  }
  __syncthreads();
  int cur = 0;
  for (int s = first; s < last;) {
    const int g = min(buf[cur][0].group_left, last - s);
    const int ns = s + g;
    const int next_words = max(0, min(small_step_group_max, last - ns)) * words;
    int next[per_thread];
#pragma unroll
    for (int q = 0; q < per_thread; ++q) {  // in flight during the group
      const int i = t + q * block_threads;
      next[q] = i < next_words ? reinterpret_cast<const int*>(records + ns)[i] : 0;
    }
    int base = 0;  // the group's result elements so far, modulo the block: where this record's elements start
    for (int j = 0; j < g; ++j) {
      const small_step_record& r = buf[cur][j];
      const T* a = static_cast<const T*>(r.a);
      const T* b = static_cast<const T*>(r.b);
      T* d = static_cast<T*>(r.d);
      if (r.a_span > 0) {
        for (int i = t; i < r.a_span; i += block_threads) stage_a[i] = a[i];
        for (int i = t; i < r.b_span; i += block_threads) stage_b[i] = b[i];
        __syncthreads();
        a = stage_a;
        if (b != nullptr) b = stage_b;
      }
      for (int o = (t - base + block_threads) % block_threads; o < r.out_count; o += block_threads) {
        sum_element(r, a, b, d, o);
      }
      base = (base + r.out_count) % block_threads;
    }
#pragma unroll
    for (int q = 0; q < per_thread; ++q) {  // that copy was last read a group ago
      const int i = t + q * block_threads;
      if (i < next_words) reinterpret_cast<int*>(buf[cur ^ 1])[i] = next[q];
    }
    __syncthreads();
    cur ^= 1;
    s = ns;
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

// Grid runs: one step after another over the whole grid. Each step's result elements are dealt out
// to every thread of the grid (consecutive threads, consecutive elements of D's innermost mode);
// grid.sync() between two steps orders every write of one before any read of the next, in every
// block. A block holds the current record in shared memory; the next one is loaded into registers
// while the step runs and stored into the other copy before the barrier.
constexpr int grid_threads = grid_steps_threads;

template <class T>
__global__ void __launch_bounds__(grid_threads) grid_small_steps(const small_step_record* records, int count) {
  constexpr int words = static_cast<int>(sizeof(small_step_record) / sizeof(int));
  constexpr int per_thread = (words + grid_threads - 1) / grid_threads;
  __shared__ small_step_record buf[2];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i < words; i += grid_threads) reinterpret_cast<int*>(&buf[0])[i] = reinterpret_cast<const int*>(records)[i];
  __syncthreads();
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * grid_threads;
  const std::int64_t me = static_cast<std::int64_t>(blockIdx.x) * grid_threads + t;
  int cur = 0;
  for (int s = 0; s < count; ++s) {
    const bool more = s + 1 < count;
    int next[per_thread];
#pragma unroll
    for (int q = 0; q < per_thread; ++q) {  // in flight during the step
      const int i = t + q * grid_threads;
      next[q] = more && i < words ? reinterpret_cast<const int*>(records + s + 1)[i] : 0;
    }
    const small_step_record& r = buf[cur];
    const T* a = static_cast<const T*>(r.a);
    const T* b = static_cast<const T*>(r.b);
    T* d = static_cast<T*>(r.d);
    for (std::int64_t o = me; o < r.out_count; o += threads) {
      sum_element(r, a, b, d, static_cast<std::int32_t>(o));
    }
    if (!more) break;
#pragma unroll
    for (int q = 0; q < per_thread; ++q) {  // that copy was last read before the previous barrier
      const int i = t + q * grid_threads;
      if (i < words) reinterpret_cast<int*>(&buf[cur ^ 1])[i] = next[q];
    }
    grid.sync();  // a block barrier too: the new copy is seen by the whole block
    cur ^= 1;
  }
}

}  // namespace

int grid_steps_blocks(int* resident) {
  const int sms = multiprocessors();
  // Every element type's kernel alike: the smallest residency of them.
  int fewest = 1 << 30;
  for (const dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    with_element_type(t, [&](auto tag) {
      const int per_sm = blocks_per_multiprocessor(reinterpret_cast<const void*>(grid_small_steps<typename decltype(tag)::type>), grid_threads, 0);
      fewest = std::min(fewest, per_sm);
    });
  }
  if (resident != nullptr) *resident = fewest * sms;
  return fewest >= 1 ? sms : 0;
}

void launch_grid_steps(dtype t, const small_step_record* records, int count, int blocks, cudaStream_t stream) {
  if (count <= 0) return;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(grid_threads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  with_element_type(t, [&](auto tag) { TNRT_CUDA(cudaLaunchKernelEx(&cfg, grid_small_steps<typename decltype(tag)::type>, records, count)); });
}

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
