#pragma once
// The copy kernels' records and launchers (C++17: included by the .cu). The host-side API over
// them is src/cuda/strided_copy.hpp.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tnrt::cuda {

inline constexpr int strided_copy_max_rank = 32;

/// dst[i...] = src[i...] over `rank` modes, element by element (elem_bytes 4, 8 or 16).
struct strided_copy_record {
  const void* src = nullptr;
  void* dst = nullptr;
  std::int64_t count = 0;  // elements
  std::int32_t rank = 0;
  std::int32_t elem_bytes = 0;
  std::int64_t extents[strided_copy_max_rank] = {};
  std::int64_t src_strides[strided_copy_max_rank] = {};
  std::int64_t dst_strides[strided_copy_max_rank] = {};
  /// True when both sides are one dense run (a plain memcpy of count * elem_bytes does it).
  [[nodiscard]] bool contiguous() const noexcept { return rank <= 1 && (rank == 0 || (src_strides[0] == 1 && dst_strides[0] == 1)); }
};

/// One contiguous block of a batched gather.
struct gather_entry {
  const void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
};
/// Entries per launch: the kernel's parameters hold them (24 bytes each, under CUDA's 32 KiB). The
/// parameters are sized to the entries (room for 8, 32, 128, 384, 640 or 1024), so a launch copies
/// little more than it needs.
inline constexpr std::size_t gather_entries_per_launch = 1024;

/// The kernel launches themselves (checked; throw device_error on a failed launch).
void launch_strided_copy_kernel(const strided_copy_record& r, cudaStream_t stream);
/// Entry y is copied by the blocks (x, y), x < blocks_x; an entry with a null src or 0 bytes is
/// skipped. n <= gather_entries_per_launch.
void launch_gather_kernel(const gather_entry* entries, int n, unsigned blocks_x, cudaStream_t stream);
/// The same gather as a kernel node of `graph` after `deps`, and the update of its entries in an
/// executable graph instantiated from it (same n and blocks_x; launches already enqueued keep the
/// entries they had: cudaGraphExecKernelNodeSetParams).
cudaError_t add_gather_kernel_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, const gather_entry* entries,
                                   int n, unsigned blocks_x, cudaGraphNode_t* node);
cudaError_t set_gather_kernel_node(cudaGraphExec_t exec, cudaGraphNode_t node, const gather_entry* entries, int n, unsigned blocks_x);

}  // namespace tnrt::cuda
