#include "cuda/strided_copy.hpp"

#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {

strided_copy_record strided_copy_of(std::span<const std::int64_t> shape, std::span<const std::int64_t> src_strides, const void* src,
                                    std::span<const std::int64_t> dst_strides, void* dst, std::size_t elem_bytes) {
  strided_copy_record r;
  r.src = src;
  r.dst = dst;
  r.elem_bytes = static_cast<std::int32_t>(elem_bytes);
  r.count = 1;
  std::int64_t ext[128], ss[128], ds[128];
  int rank = 0;
  for (std::size_t m = 0; m < shape.size(); ++m) {
    r.count *= shape[m];
    if (shape[m] == 1) continue;
    // Merge with the previous kept mode when it is exactly this mode's outer extension on both sides.
    if (rank > 0 && ss[rank - 1] == src_strides[m] * shape[m] && ds[rank - 1] == dst_strides[m] * shape[m]) {
      ext[rank - 1] *= shape[m];
      ss[rank - 1] = src_strides[m];
      ds[rank - 1] = dst_strides[m];
      continue;
    }
    if (rank == 128) throw not_supported("a tensor of more than 128 non-unit modes cannot be copied");
    ext[rank] = shape[m];
    ss[rank] = src_strides[m];
    ds[rank] = dst_strides[m];
    ++rank;
  }
  if (rank > strided_copy_max_rank)
    throw not_supported("a strided copy of " + std::to_string(rank) + " modes that cannot be merged (at most " +
                        std::to_string(strided_copy_max_rank) + ")");
  r.rank = rank;
  std::copy(ext, ext + rank, r.extents);
  std::copy(ss, ss + rank, r.src_strides);
  std::copy(ds, ds + rank, r.dst_strides);
  return r;
}

void launch_strided_copy(const strided_copy_record& r, cudaStream_t stream) {
  if (r.count == 0) return;
  if (r.contiguous()) {
    TNRT_CUDA(cudaMemcpyAsync(r.dst, r.src, static_cast<std::size_t>(r.count) * static_cast<std::size_t>(r.elem_bytes),
                              cudaMemcpyDeviceToDevice, stream));
    return;
  }
  launch_strided_copy_kernel(r, stream);
}

unsigned gather_blocks(std::span<const gather_entry> entries) {
  std::uint64_t largest = 0;
  for (const gather_entry& e : entries) largest = std::max(largest, e.bytes);
  // 16 bytes a thread, 256 threads a block: enough blocks for the largest entry, at most 512.
  return static_cast<unsigned>(std::clamp<std::uint64_t>((largest + 4095) / 4096, 1, 512));
}

void launch_gather(std::span<const gather_entry> entries, cudaStream_t stream) {
  for (std::size_t first = 0; first < entries.size(); first += gather_entries_per_launch) {
    const auto chunk = entries.subspan(first, std::min(gather_entries_per_launch, entries.size() - first));
    std::uint64_t largest = 0;
    for (const gather_entry& e : chunk) largest = std::max(largest, e.bytes);
    if (largest == 0) continue;
    launch_gather_kernel(chunk.data(), static_cast<int>(chunk.size()), gather_blocks(chunk), stream);
  }
}

gather_nodes::gather_nodes(cudaGraph_t graph, std::span<const cudaGraphNode_t> deps, std::span<const gather_entry> entries)
    : count_(entries.size()) {
  for (std::size_t first = 0; first < entries.size(); first += gather_entries_per_launch) {
    const auto chunk = entries.subspan(first, std::min(gather_entries_per_launch, entries.size() - first));
    const unsigned blocks = gather_blocks(chunk);
    cudaGraphNode_t node = nullptr;
    TNRT_CUDA(add_gather_kernel_node(graph, deps.data(), deps.size(), chunk.data(), static_cast<int>(chunk.size()), blocks, &node));
    nodes_.push_back(node);
    blocks_.push_back(blocks);
  }
}

void gather_nodes::set(cudaGraphExec_t exec, std::span<const gather_entry> entries) const {
  if (entries.size() != count_)
    throw internal_error("gather node update with " + std::to_string(entries.size()) + " entries for " + std::to_string(count_));
  for (std::size_t c = 0; c < nodes_.size(); ++c) {
    const std::size_t first = c * gather_entries_per_launch;
    const std::size_t n = std::min(gather_entries_per_launch, entries.size() - first);
    TNRT_CUDA(set_gather_kernel_node(exec, nodes_[c], entries.data() + first, static_cast<int>(n), blocks_[c]));
  }
}

}  // namespace tnrt::cuda
