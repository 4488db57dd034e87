#pragma once
// Slices over several ranks (issue 18): how a sliced contraction's slices are shared among ranks,
// and how the ranks' partial results make the result. The rule is engine- and transport-agnostic;
// contract_sliced_ranks runs it with the ranks as threads of this process (the CPU engine's way,
// and the test bed of the rule). Ranks that are processes on several GPUs, with NCCL for the
// combine, are not built: only single-GPU machines were lent (docs/design.md).
//
// Each rank contracts its share of the slices into a partial result of the whole output's shape
// (zero where it computed nothing). The result is made block by block, a block being one
// combination of the values of the sliced labels that are output labels (the whole output when
// none is): a block that one rank's share alone touches is gathered from that rank (copied, no
// sum), a block that several touch is summed over them, in rank order.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tnrt/cpu.hpp"
#include "tnrt/network.hpp"
#include "tnrt/slicing.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {

/// contiguous: rank r gets one run of consecutive slices (the first slices % ranks ranks one more);
/// with the sliced output labels first in the plan, a run covers whole output blocks, so most blocks
/// are gathered. round_robin: rank r gets slices r, r + ranks, ...: every block is summed, but
/// slices of uneven cost spread evenly.
enum class slice_schedule { contiguous, round_robin };

/// The slices first, first + stride, ... (`count` of them): contract_sliced's arguments.
struct slice_share {
  std::int64_t first = 0, count = 0, stride = 1;
  friend bool operator==(const slice_share&, const slice_share&) = default;
};

/// Rank `rank`'s share of `slices` slices among `ranks`. Every slice is in exactly one share; with
/// fewer slices than ranks the last ranks get none (count 0: idle). usage_error for ranks < 1, a
/// rank outside [0, ranks) or a negative slice count.
slice_share share_of(std::int64_t slices, int ranks, int rank, slice_schedule how);

/// The combine: per result block, the ranks whose shares hold one of its slices.
struct reduction_plan {
  std::int64_t slices = 1;                     // of the problem over its sliced labels
  std::vector<label_t> block_labels;           // the sliced labels that are output labels, plan order
  std::vector<std::vector<int>> contributors;  // per block (mixed radix over block_labels, last fastest)
  std::int64_t gathered = 0, summed = 0;       // blocks of one contributor, of several
};

/// The plan for p sliced over `labels` (slice_problem's checks) on `ranks` ranks under `how`.
reduction_plan plan_reduction(const problem& p, std::span<const label_t> labels, int ranks, slice_schedule how);

/// The result from the ranks' partial results (one per rank, each of p's output shape and dtype):
/// each block gathered from its one contributor or summed over its contributors in rank order.
/// shape_error for a partial of another shape or dtype, or a count other than the plan's ranks.
host_tensor combine_partials(const problem& p, const reduction_plan& plan, std::span<const host_tensor> partials);

struct rank_report {
  int rank = 0;
  slice_share share;
  double seconds = 0;  // its contraction of its share
};
struct distributed_report {
  int ranks = 1;
  slice_schedule schedule = slice_schedule::contiguous;
  std::vector<rank_report> per_rank;
  reduction_plan plan;
  double contract_seconds = 0;  // wall time of all ranks' contractions (they run at once)
  double reduce_seconds = 0;    // the combine alone
  std::vector<std::string> notes;  // e.g. "rank 3 of 4: no slices (2 slices for 4 ranks): idle"
};

/// p's result over its slices on `labels`, with `ranks` ranks as threads of this process, each
/// contracting its share (share_of; over `labels` with the sliced output labels moved first, so
/// that contiguous shares cover whole blocks) with `contract_one` (called concurrently from several threads:
/// it must be thread-safe, as cpu::contract is), then combine_partials. A rank that throws makes the
/// call throw the same kind of error once, its message prefixed "rank R of N: " (the first failing
/// rank's; the others finish their share first, so none is left running). Throws usage_error for
/// ranks < 1, and what contract_sliced throws.
host_tensor contract_sliced_ranks(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                  int ranks, slice_schedule how, const slice_contractor& contract_one,
                                  distributed_report* report = nullptr);

namespace cpu {
/// contract_sliced_ranks with every slice contracted by cpu::contract.
inline host_tensor contract_sliced_ranks(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                         int ranks, slice_schedule how, distributed_report* report = nullptr) {
  return tnrt::contract_sliced_ranks(
      p, inputs, labels, ranks, how, [](const problem& q, std::span<const host_tensor> in) { return cpu::contract(q, in); },
      report);
}
}  // namespace cpu

}  // namespace tnrt
