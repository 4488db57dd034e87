#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/strided_copy_kernels.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr int copy_threads = 256;

template <int Bytes>
struct element {
  unsigned char b[Bytes];
};

// Element i of the copy in row-major order over the record's modes.
template <class E>
__global__ void strided_copy_kernel(const strided_copy_record r) {
  const E* src = static_cast<const E*>(r.src);
  E* dst = static_cast<E*>(r.dst);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < r.count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long rest = i, so = 0, dof = 0;
    for (int m = r.rank - 1; m >= 0; --m) {
      const long long x = rest % r.extents[m];
      rest /= r.extents[m];
      so += x * r.src_strides[m];
      dof += x * r.dst_strides[m];
    }
    dst[dof] = src[so];
  }
}

template <int Cap>
struct gather_params {
  gather_entry e[Cap];
};

// Block (x, y) copies part of entry y: 16 bytes a thread where both ends and the size allow,
// else 8, 4 or 1.
template <int Cap>
__global__ void gather_kernel(const __grid_constant__ gather_params<Cap> p, int entries) {
  const int y = static_cast<int>(blockIdx.y);
  if (y >= entries) return;
  const gather_entry g = p.e[y];
  if (g.src == nullptr || g.bytes == 0) return;
  const auto mis = reinterpret_cast<unsigned long long>(g.src) | reinterpret_cast<unsigned long long>(g.dst) | g.bytes;
  const unsigned long long start = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  auto copy = [&](auto unit) {
    using U = decltype(unit);
    const U* s = static_cast<const U*>(g.src);
    U* d = static_cast<U*>(g.dst);
    const unsigned long long n = g.bytes / sizeof(U);
    for (unsigned long long i = start; i < n; i += stride) d[i] = s[i];
  };
  if (mis % 16 == 0) {
    copy(uint4{});
  } else if (mis % 8 == 0) {
    copy(static_cast<unsigned long long>(0));
  } else if (mis % 4 == 0) {
    copy(0U);
  } else {
    copy(static_cast<unsigned char>(0));
  }
}

// The kernel and its argument block for n entries: the smallest capacity that holds them. The
// argument block is thread_local (up to 24 KiB: not on the stack); launches and node calls copy it.
struct gather_launch {
  void* func = nullptr;
  void* args[2] = {};
};

template <int Cap>
gather_launch gather_launch_of(const gather_entry* entries, int n) {
  thread_local gather_params<Cap> p;
  thread_local int count = 0;
  for (int i = 0; i < n; ++i) p.e[i] = entries[i];
  count = n;
  gather_launch l;
  l.func = reinterpret_cast<void*>(&gather_kernel<Cap>);
  l.args[0] = &p;
  l.args[1] = &count;
  return l;
}

gather_launch gather_launch_for(const gather_entry* entries, int n) {
  if (n < 0 || static_cast<std::size_t>(n) > gather_entries_per_launch)
    throw internal_error("a gather of " + std::to_string(n) + " entries in one launch");
  if (n <= 8) return gather_launch_of<8>(entries, n);
  if (n <= 32) return gather_launch_of<32>(entries, n);
  if (n <= 128) return gather_launch_of<128>(entries, n);
  if (n <= 384) return gather_launch_of<384>(entries, n);
  if (n <= 640) return gather_launch_of<640>(entries, n);
  return gather_launch_of<1024>(entries, n);
}

cudaKernelNodeParams node_params(const gather_launch& l, int n, unsigned blocks_x) {
  cudaKernelNodeParams k{};
  k.func = l.func;
  k.gridDim = dim3(blocks_x, static_cast<unsigned>(n < 1 ? 1 : n));
  k.blockDim = dim3(copy_threads);
  k.sharedMemBytes = 0;
  k.kernelParams = const_cast<void**>(l.args);
  k.extra = nullptr;
  return k;
}

}  // namespace

void launch_strided_copy_kernel(const strided_copy_record& r, cudaStream_t stream) {
  long long blocks = (r.count + copy_threads - 1) / copy_threads;
  if (blocks > 4096) blocks = 4096;
  const dim3 grid(static_cast<unsigned>(blocks));
  switch (r.elem_bytes) {
    case 4: strided_copy_kernel<element<4>><<<grid, copy_threads, 0, stream>>>(r); break;
    case 8: strided_copy_kernel<element<8>><<<grid, copy_threads, 0, stream>>>(r); break;
    case 16: strided_copy_kernel<element<16>><<<grid, copy_threads, 0, stream>>>(r); break;
    default: throw internal_error("strided copy of " + std::to_string(r.elem_bytes) + "-byte elements");
  }
  TNRT_CUDA(cudaGetLastError());
}

void launch_gather_kernel(const gather_entry* entries, int n, unsigned blocks_x, cudaStream_t stream) {
  if (n == 0) return;
  const gather_launch l = gather_launch_for(entries, n);
  TNRT_CUDA(cudaLaunchKernel(l.func, dim3(blocks_x, static_cast<unsigned>(n)), dim3(copy_threads), const_cast<void**>(l.args), 0, stream));
}

cudaError_t add_gather_kernel_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, const gather_entry* entries,
                                   int n, unsigned blocks_x, cudaGraphNode_t* node) {
  const gather_launch l = gather_launch_for(entries, n);
  const cudaKernelNodeParams k = node_params(l, n, blocks_x);
  return cudaGraphAddKernelNode(node, graph, deps, n_deps, &k);
}

cudaError_t set_gather_kernel_node(cudaGraphExec_t exec, cudaGraphNode_t node, const gather_entry* entries, int n, unsigned blocks_x) {
  const gather_launch l = gather_launch_for(entries, n);
  const cudaKernelNodeParams k = node_params(l, n, blocks_x);
  return cudaGraphExecKernelNodeSetParams(exec, node, &k);
}

}  // namespace tnrt::cuda
