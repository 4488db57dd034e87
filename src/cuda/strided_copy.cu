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

// Block (x, y) copies part of entry y: 16 bytes a thread where both ends and the size allow,
// else 8, 4 or 1.
__global__ void gather_kernel(const __grid_constant__ gather_params p, int entries) {
  const int y = static_cast<int>(blockIdx.y);
  if (y >= entries) return;
  const gather_entry g = p.e[y];
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

void launch_gather_kernel(const gather_params& p, int entries, unsigned blocks_x, cudaStream_t stream) {
  gather_kernel<<<dim3(blocks_x, static_cast<unsigned>(entries)), copy_threads, 0, stream>>>(p, entries);
  TNRT_CUDA(cudaGetLastError());
}

}  // namespace tnrt::cuda
