#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/slice_moves_kernels.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr int move_threads = 256;

template <class T>
__device__ void add_into(T& d, const T& s) {
  d += s;
}
__device__ void add_into(float2& d, const float2& s) {
  d.x += s.x;
  d.y += s.y;
}
__device__ void add_into(double2& d, const double2& s) {
  d.x += s.x;
  d.y += s.y;
}

// Block (x, y) runs part of move y of the list: element i in row-major order over the move's modes.
template <class T, int Mode>
__global__ void slice_moves_kernel(const long long* __restrict__ table, long long list) {
  __shared__ long long shape[3 * slice_move_max_rank];
  const long long y = blockIdx.y;
  if (y >= table[list]) return;
  const long long* m = table + table[list + 1 + y];
  const long long count = m[0];
  const int rank = static_cast<int>(m[1]);
  const long long sliced = table[1];
  for (int k = static_cast<int>(threadIdx.x); k < 3 * rank; k += blockDim.x) shape[k] = m[5 + k];
  long long base = 0;
  const long long c = table[0];
  const long long* radix = table + 2;
  const long long* extent = table + 2 + sliced;
  const long long* label_strides = m + 5 + 3 * rank;
  for (long long l = 0; l < sliced; ++l) base += (c / radix[l]) % extent[l] * label_strides[l];
  const T* src = reinterpret_cast<const T*>(m[3]);
  T* dst = reinterpret_cast<T*>(m[4]);
  if (m[2] != 0) {
    src += base;
  } else {
    dst += base;
  }
  __syncthreads();
  const long long* ext = shape;
  const long long* ss = shape + rank;
  const long long* ds = shape + 2 * rank;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long rest = i, so = 0, dof = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const long long x = rest % ext[d];
      rest /= ext[d];
      so += x * ss[d];
      dof += x * ds[d];
    }
    if constexpr (Mode == 2) {
      dst[dof] = T{};
    } else if constexpr (Mode == 1) {
      add_into(dst[dof], src[so]);
    } else {
      dst[dof] = src[so];
    }
  }
}

__global__ void next_slice_kernel(long long* table) { table[0] += 1; }

template <class T>
__global__ void add_dense_kernel(T* __restrict__ dst, const T* __restrict__ src, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long long>(gridDim.x) * blockDim.x)
    add_into(dst[i], src[i]);
}

struct store_params {
  long long w[store_words_per_launch];
};
__global__ void store_words_kernel(const __grid_constant__ store_params p, long long* dst, int n) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += static_cast<int>(gridDim.x * blockDim.x)) dst[i] = p.w[i];
}

template <class T>
void* kernel_for_mode(move_mode mode) {
  switch (mode) {
    case move_mode::copy: return reinterpret_cast<void*>(&slice_moves_kernel<T, 0>);
    case move_mode::add: return reinterpret_cast<void*>(&slice_moves_kernel<T, 1>);
    case move_mode::zero: return reinterpret_cast<void*>(&slice_moves_kernel<T, 2>);
  }
  return nullptr;
}

void* kernel_of(const slice_moves_launch& l) {
  switch (l.elem_kind) {
    case 0: return kernel_for_mode<float>(l.mode);
    case 1: return kernel_for_mode<double>(l.mode);
    case 2: return kernel_for_mode<float2>(l.mode);
    case 3: return kernel_for_mode<double2>(l.mode);
    default: throw internal_error("slice moves of element kind " + std::to_string(l.elem_kind));
  }
}

struct moves_args {
  const long long* table;
  long long list;
  void* args[2];
};

}  // namespace

void launch_slice_moves(const slice_moves_launch& l, cudaStream_t stream) {
  if (l.moves == 0) return;
  moves_args a{reinterpret_cast<const long long*>(l.table), static_cast<long long>(l.list), {}};
  a.args[0] = &a.table;
  a.args[1] = &a.list;
  TNRT_CUDA(cudaLaunchKernel(kernel_of(l), dim3(l.blocks_x, l.moves), dim3(move_threads), a.args, 0, stream));
}

cudaError_t add_slice_moves_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, const slice_moves_launch& l,
                                 cudaGraphNode_t* node) {
  moves_args a{reinterpret_cast<const long long*>(l.table), static_cast<long long>(l.list), {}};
  a.args[0] = &a.table;
  a.args[1] = &a.list;
  cudaKernelNodeParams k{};
  k.func = kernel_of(l);
  k.gridDim = dim3(l.blocks_x, l.moves < 1 ? 1 : l.moves);
  k.blockDim = dim3(move_threads);
  k.kernelParams = a.args;
  return cudaGraphAddKernelNode(node, graph, deps, n_deps, &k);
}

void launch_add_dense(void* dst, const void* src, std::int64_t count, int elem_kind, cudaStream_t stream) {
  if (count <= 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((count + move_threads - 1) / move_threads, 4096));
  switch (elem_kind) {
    case 0: add_dense_kernel<<<blocks, move_threads, 0, stream>>>(static_cast<float*>(dst), static_cast<const float*>(src), count); break;
    case 1: add_dense_kernel<<<blocks, move_threads, 0, stream>>>(static_cast<double*>(dst), static_cast<const double*>(src), count); break;
    case 2: add_dense_kernel<<<blocks, move_threads, 0, stream>>>(static_cast<float2*>(dst), static_cast<const float2*>(src), count); break;
    case 3: add_dense_kernel<<<blocks, move_threads, 0, stream>>>(static_cast<double2*>(dst), static_cast<const double2*>(src), count); break;
    default: throw internal_error("a dense add of element kind " + std::to_string(elem_kind));
  }
  TNRT_CUDA(cudaGetLastError());
}

void launch_next_slice(std::int64_t* table, cudaStream_t stream) {
  next_slice_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<long long*>(table));
  TNRT_CUDA(cudaGetLastError());
}

cudaError_t add_next_slice_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, std::int64_t* table,
                                cudaGraphNode_t* node) {
  long long* t = reinterpret_cast<long long*>(table);
  void* args[1] = {&t};
  cudaKernelNodeParams k{};
  k.func = reinterpret_cast<void*>(&next_slice_kernel);
  k.gridDim = dim3(1);
  k.blockDim = dim3(1);
  k.kernelParams = args;
  return cudaGraphAddKernelNode(node, graph, deps, n_deps, &k);
}

void launch_store_words(std::int64_t* dst, const std::int64_t* words, int n, cudaStream_t stream) {
  if (n <= 0) return;
  if (n > store_words_per_launch) throw internal_error("a store of " + std::to_string(n) + " words in one launch");
  thread_local store_params p;
  for (int i = 0; i < n; ++i) p.w[i] = static_cast<long long>(words[i]);
  long long* d = reinterpret_cast<long long*>(dst);
  int count = n;
  void* args[3] = {&p, &d, &count};
  const unsigned blocks = static_cast<unsigned>((n + move_threads - 1) / move_threads);
  TNRT_CUDA(cudaLaunchKernel(reinterpret_cast<void*>(&store_words_kernel), dim3(blocks), dim3(move_threads), args, 0, stream));
}

}  // namespace tnrt::cuda
