#pragma once
// Slices over several ranks (issue 18): how a sliced contraction's slices are shared among ranks,
// and how the ranks' partial results make the result. The rule is engine- and transport-agnostic.
// Two ways to run it:
// - contract_sliced_ranks: the ranks are threads of this process (the CPU engine; the test bed of
//   the rule; `tnrt contract --ranks N`).
// - contract_sliced_rank: this process is one rank of a job launched one process per rank (mpirun,
//   torchrun, or `tnrt contract --launch N`); rank_from_environment says which, a rendezvous
//   directory on a file system every rank sees carries what they exchange, and a `collective`
//   combines the partial results: file_collective (host partials as .npy files, rank 0 combines:
//   the CPU engine) or, on the GPU, NCCL (tnrt::cuda::make_nccl_collective, src/cuda, libnccl
//   opened at run time). Only single-GPU machines were lent: the NCCL path ran with one rank
//   (world size 1 through NCCL); several GPUs have not run it (docs/design.md).
//
// Each rank contracts its share of the slices into a partial result of the whole output's shape
// (zero where it computed nothing). The result is made block by block, a block being one
// combination of the values of the sliced labels that are output labels (the whole output when
// none is): a block that one rank's share alone touches is gathered from that rank (copied, no
// sum), a block that several touch is summed over them, in rank order. (NCCL's reduce sums the
// whole output instead: with every rank holding the whole output, zeros where it computed nothing,
// the sum is the same result and gathering would move no fewer bytes.)
//
// Failure: every collective call is bounded by a timeout; a rank that fails tells the others
// (collective::abort), which stop with one error of the same kind, "rank R of N: <its message>";
// a rank that dies without a word makes the others stop at the timeout with an error naming it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tnrt/context.hpp"
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

// ---- ranks as processes ------------------------------------------------------------------------

/// Where this process stands in a job of one process per rank.
struct rank_identity {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks on this host: picks the GPU (device_of)
  std::string source;  // the variables it came from, e.g. "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"
  friend bool operator==(const rank_identity&, const rank_identity&) = default;
};

/// Looks up one environment variable (null when unset); std::getenv in a real run, a map in tests.
using environment_lookup = std::function<const char*(const char*)>;

/// The rank and size from the first pair set of TNRT_RANK/TNRT_WORLD_SIZE, OMPI_COMM_WORLD_RANK/
/// OMPI_COMM_WORLD_SIZE (mpirun), PMI_RANK/PMI_SIZE (MPICH, Slurm), RANK/WORLD_SIZE (torchrun);
/// the local rank from TNRT_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or LOCAL_RANK
/// (the rank itself when none is set). nullopt when no pair is set. usage_error for a pair half
/// set, a value that is not a whole number, a size below 1 or a rank outside [0, size).
std::optional<rank_identity> rank_from_environment(const environment_lookup& lookup = {});

/// The GPU of a rank: local_rank % device_count. usage_error for device_count < 1.
int device_of(const rank_identity& id, int device_count);

/// The files ranks exchange, in a directory that every rank sees (one directory per job: files of
/// an earlier job would be taken for this one's). Every file is written under a temporary name and
/// renamed into place, so a reader never sees half of one. A rank that fails writes its status
/// file ("status.R": its error's kind, a tab, its message); every wait watches those and stops
/// with the failed rank's error. Waits poll (every poll_seconds) and end at timeout_seconds.
class rendezvous {
 public:
  /// usage_error for a bad rank/size or a timeout that is not positive; io_error when `dir` is not
  /// a directory that exists.
  rendezvous(std::string dir, int rank, int size, double timeout_seconds = 300, double poll_seconds = 0.005);

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
  [[nodiscard]] double timeout_seconds() const noexcept { return timeout_; }
  /// DIR/name.
  [[nodiscard]] std::string path(std::string_view name) const;

  /// Writes `bytes` as DIR/name atomically. io_error when it cannot.
  void publish(std::string_view name, std::string_view bytes) const;
  /// The content of DIR/name. io_error when it cannot be read.
  [[nodiscard]] std::string read(std::string_view name) const;
  /// Waits until DIR/name exists (`from`: the rank expected to write it, named on a timeout).
  /// Throws the error of a rank whose status says it failed, as the same kind, "rank R of N: ...";
  /// io_error "rank R of N: nothing from it within S s ..." at the timeout.
  void wait_for(std::string_view name, int from) const;
  /// Throws as wait_for does when some other rank's status says it failed; else returns.
  void check_peers() const;
  /// This rank failed with `e` (its kind and message go to its status file). Never throws.
  void report_failure(const std::exception& e) const noexcept;
  /// The status file of a rank that ended without writing one (the launcher's word for a rank that
  /// died). Never throws.
  static void report_failure_of(const std::string& dir, int rank, const std::string& kind, const std::string& message) noexcept;

 private:
  std::string dir_;
  int rank_, size_;
  double timeout_, poll_;
};

/// The combine of the ranks' partial results, injected into contract_sliced_rank: every rank calls
/// reduce once per run, in the same order, with its partial (the whole output's shape, zeros where
/// it computed nothing); on rank 0 (the root) the view holds the result afterwards, elsewhere its
/// content is unspecified. Bounded by the collective's timeout; throws the error of a rank that
/// failed ("rank R of N: ..."), or one naming the rank that did not answer in time.
class collective {
 public:
  virtual ~collective() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// "file", "nccl", "none (one rank)".
  [[nodiscard]] virtual std::string name() const = 0;
  /// `partial`: host memory for the file collective, device memory of the rank's GPU for NCCL
  /// (`stream`: a cudaStream_t that orders it after the contraction; unused by the file collective).
  virtual void reduce(const problem& p, const reduction_plan& plan, const tensor_view& partial, stream_handle stream) = 0;
  /// This rank failed: tell the others so that they stop now (never throws).
  virtual void abort(const std::exception& e) noexcept = 0;
};

/// The host collective over a rendezvous: each rank writes its partial (partial.K.R.npy, K the
/// call's number) and rank 0 reads them all, combines them with combine_partials and writes
/// reduced.K.npy, which the other ranks wait for (so a failure of the root reaches them too).
/// Host tensors (tensor_view::device == cpu_device) of p's output shape and dtype only.
std::unique_ptr<collective> make_file_collective(rendezvous r);

/// The collective of a job of one rank: reduce leaves the partial as the result (no files, no NCCL).
std::unique_ptr<collective> make_one_rank_collective();

/// Throws `e` again as the same kind of tnrt error (internal_error for another exception), its
/// message prefixed "rank R of N: " unless it begins with "rank " already (a relayed peer's error).
[[noreturn]] void rethrow_for_rank(const std::exception& e, int rank, int size);

/// This process's part of p's result over its slices on `labels` as rank `coll.rank()` of
/// `coll.size()`: its share (share_of, over `labels` with the sliced output labels first, as
/// contract_sliced_ranks orders them) contracted by `contract_one`, then coll.reduce. Returns the
/// result on rank 0 and an empty tensor elsewhere; `report` gets this rank's entry (per_rank holds
/// it alone), the plan, its contraction and reduce times and the idle note. A failure of this
/// rank is reported to the others (coll.abort) and thrown; a failure of another is thrown as
/// coll.reduce throws it.
host_tensor contract_sliced_rank(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                 slice_schedule how, const slice_contractor& contract_one, collective& coll,
                                 distributed_report* report = nullptr);

/// `labels` with the sliced output labels first (stable): contiguous shares then cover whole blocks.
std::vector<label_t> blocks_first(const problem& p, std::span<const label_t> labels);

/// The note of an idle rank: "rank R of N: no slices (S slices for N ranks): idle".
std::string idle_note(int rank, int ranks, std::int64_t slices);

/// A tiny launcher: runs `argv` (argv[0] the executable's path) `ranks` times at once, each child
/// with TNRT_RANK, TNRT_LOCAL_RANK, TNRT_WORLD_SIZE and TNRT_RENDEZVOUS (= `rendezvous_dir`, which
/// must exist) set, and waits for all. When a child fails, the others are told (its status file,
/// written for it if it died without one), given `grace_seconds` to stop, then killed (SIGKILL).
/// Returns 0 when all exit 0, else the first failing child's exit code (128 + signal for a signal).
/// io_error when a child cannot be started (those started are killed first).
int launch_ranks(const std::vector<std::string>& argv, int ranks, const std::string& rendezvous_dir, double grace_seconds);

#ifdef TNRT_HAVE_CUDA
namespace cuda {
/// NCCL's collective for rank r.rank() of r.size() on CUDA device `device` (src/cuda/
/// nccl_collective.cpp): libnccl.so.2 opened at run time ($TNRT_NCCL_PATH, the default search,
/// /opt/tnrt-deps/lib, the Python wheels' nvidia/nccl/lib); rank 0 writes the ncclUniqueId into
/// the rendezvous and the others read it; one non-blocking communicator (NCCL_NVLS_ENABLE=0 set
/// when unset: NVLink multicast stays off). reduce is one ncclReduce (sum) of the whole output
/// into rank 0, polled (ncclCommGetAsyncError, cudaEventQuery) against the rendezvous's timeout
/// and the other ranks' status files; on either the communicator is aborted (ncclCommAbort) and
/// device_error (or the failed rank's error) thrown. With one rank no NCCL is opened unless
/// `nccl_for_one_rank` (the test of the NCCL path on one GPU). device_error when NCCL cannot be
/// opened or initialized.
std::unique_ptr<collective> make_nccl_collective(rendezvous r, int device, bool nccl_for_one_rank = false);
/// "" when libnccl.so.2 can be opened and has every entry point tnrt calls, else why not.
std::string nccl_unavailable_reason();
/// The path of the opened libnccl and its version ("2.28.9"); "" when unavailable.
std::string nccl_library();
/// CUDA devices visible to this process (0 when none or no driver).
int visible_devices();

/// contract_sliced_rank on the GPU: this rank's share of `sp`'s slices (sp compiled for CUDA
/// device `device`) run on the device (the inputs uploaded, the partial accumulated on the device),
/// then coll.reduce on the device buffer; the result downloaded on rank 0 (empty elsewhere).
/// contiguous only: the GPU's sliced program runs ranges of slices (not_supported for round_robin).
/// `report` as contract_sliced_rank's.
host_tensor contract_sliced_rank(sliced_program& sp, std::span<const host_tensor> inputs, int device, slice_schedule how,
                                 collective& coll, distributed_report* report = nullptr);
}  // namespace cuda
#endif

namespace cpu {
/// contract_sliced_ranks with every slice contracted by cpu::contract.
inline host_tensor contract_sliced_ranks(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                         int ranks, slice_schedule how, distributed_report* report = nullptr) {
  return tnrt::contract_sliced_ranks(
      p, inputs, labels, ranks, how, [](const problem& q, std::span<const host_tensor> in) { return cpu::contract(q, in); },
      report);
}
/// contract_sliced_rank with every slice contracted by cpu::contract.
inline host_tensor contract_sliced_rank(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                        slice_schedule how, collective& coll, distributed_report* report = nullptr) {
  return tnrt::contract_sliced_rank(
      p, inputs, labels, how, [](const problem& q, std::span<const host_tensor> in) { return cpu::contract(q, in); }, coll,
      report);
}
}  // namespace cpu

}  // namespace tnrt
