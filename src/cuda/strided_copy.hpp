#pragma once
// Copies between the caller's tensors and tnrt's own buffers: one strided copy (any strides on
// either side, modes coalesced first), and a batched gather of contiguous blocks in one launch (a
// compiled program's inputs: hundreds of small tensors cost one launch, not hundreds).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuda/strided_copy_kernels.hpp"

namespace tnrt::cuda {

/// The record for `shape` with those strides (in elements), extent-1 modes dropped and adjacent
/// modes merged where both sides allow. Throws not_supported when more than strided_copy_max_rank
/// modes remain.
strided_copy_record strided_copy_of(std::span<const std::int64_t> shape, std::span<const std::int64_t> src_strides, const void* src,
                                    std::span<const std::int64_t> dst_strides, void* dst, std::size_t elem_bytes);

/// Enqueues the copy (cudaMemcpyAsync when contiguous, else a kernel). Nothing for count 0.
void launch_strided_copy(const strided_copy_record& r, cudaStream_t stream);

/// Enqueues every entry's copy, gather_entries_per_launch per launch.
void launch_gather(std::span<const gather_entry> entries, cudaStream_t stream);

}  // namespace tnrt::cuda
