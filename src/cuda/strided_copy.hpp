#pragma once
// Copies between the caller's tensors and tnrt's own buffers: one strided copy (any strides on
// either side, modes coalesced first), and a batched gather of contiguous blocks in one launch (a
// compiled program's inputs: hundreds of small tensors cost one launch, not hundreds).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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

/// Blocks per entry for a gather of these entries (enough for the largest, at most 512).
unsigned gather_blocks(std::span<const gather_entry> entries);

/// A gather as kernel nodes of a graph (gather_entries_per_launch entries a node) whose entries
/// change from one launch of the executable graph to the next. The grid is fixed by the entries'
/// bytes when the nodes are added: later entries may copy fewer bytes, never more, and an entry
/// with a null src is skipped.
class gather_nodes {
 public:
  gather_nodes() = default;
  /// Adds the nodes to `graph`, each after every node of `deps`. Throws device_error.
  gather_nodes(cudaGraph_t graph, std::span<const cudaGraphNode_t> deps, std::span<const gather_entry> entries);
  [[nodiscard]] const std::vector<cudaGraphNode_t>& nodes() const noexcept { return nodes_; }
  /// Sets the entries (as many as at construction) for the next launches of `exec`, an
  /// executable graph instantiated from the graph; launches already enqueued keep theirs.
  void set(cudaGraphExec_t exec, std::span<const gather_entry> entries) const;

 private:
  std::vector<cudaGraphNode_t> nodes_;
  std::vector<unsigned> blocks_;
  std::size_t count_ = 0;
};

}  // namespace tnrt::cuda
