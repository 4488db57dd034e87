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
/// Entries per launch: the kernel's parameters hold them (24 bytes each, under CUDA's 32 KiB).
inline constexpr std::size_t gather_entries_per_launch = 1024;
struct gather_params {
  gather_entry e[gather_entries_per_launch];
};

/// The kernel launches themselves (checked; throw device_error on a failed launch).
void launch_strided_copy_kernel(const strided_copy_record& r, cudaStream_t stream);
void launch_gather_kernel(const gather_params& p, int entries, unsigned blocks_x, cudaStream_t stream);

}  // namespace tnrt::cuda
