#pragma once
// The CUDA backend as the command-line tool and the benchmark harness use it: run a problem on the
// GPU, eagerly or compiled, with warm-ups and timed repetitions, and report every counter.
// Compiled only when the CUDA backend is built (TNRT_HAVE_CUDA); the functions themselves never
// need a GPU to be called: without one they throw device_error saying what is missing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"
#include "tnrt/network.hpp"
#include "tnrt/profile_stats.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

/// "" when a CUDA device and cuTENSOR are usable here; otherwise one line saying what is missing
/// (no CUDA device / driver too old / libcutensor.so.2 not found, with the paths searched).
std::string unavailable_reason();

/// "" when the profiler (CUPTI, opened at run time) can be loaded here; otherwise one line naming
/// every place searched. Says nothing about the GPU: see unavailable_reason().
std::string profiler_unavailable_reason();
/// "<path> (CUPTI <version>)": the library --profile uses; "" when none can be loaded.
std::string profiler_library();

enum class exec_mode : std::uint8_t { eager, compiled };
enum class workspace_mode : std::uint8_t {
  shared,    // one scratch buffer per stream slot (the default)
  per_plan,  // each cached plan owns its workspace, released when the plan is evicted (the old design)
};

struct options {
  int device = 0;
  exec_mode mode = exec_mode::eager;
  std::size_t plan_cache_entries = 64;  // see docs/results.md for the sweep
  workspace_mode workspace = workspace_mode::shared;
  device::retire_mode retire = device::retire_mode::deferred;
  std::size_t retirement_capacity = device::retirement_queue::default_capacity;
  std::size_t workspace_cap = device::shared_workspace::default_cap;
  bool jit = false;       // cuTENSOR JIT kernels (opt-in: seconds per new kernel)
  bool autotune = false;  // cuTENSOR incremental autotuning (opt-in)
  /// cuTENSOR algorithm: -1 default heuristic, -6 default_patient, -4 gett, -3 tgett, -2 ttgt.
  int algo = -1;
  bool use_graph = true;  // compiled mode: replay as a CUDA graph (else plain stream replay)
  /// How intermediates are laid out (src/core/step_lowering.hpp): `follow` the larger operand's
  /// memory order (the default), column-major or row-major in the tree's label order. Inputs and
  /// the result handed back are always row-major.
  layout_policy intermediate_layout = layout_policy::column_major;
  /// Run subtrees of small steps (every operand and result at most fuse_max_elements) in one
  /// fused launch instead of one library call each.
  bool fuse_small_steps = true;
  /// Skinny steps (one operand small enough for shared memory, a large outer space) through tnrt's
  /// own streaming kernel (src/core/skinny.hpp) or cuTENSOR: `never`, `always`, or `automatic`
  /// (compiled: each step timed both ways once at compile time and the faster kept; eager: the
  /// kernel only where the result's innermost mode is the small operand's, cuTENSOR's weak case).
  enum class choice : std::uint8_t { never, always, automatic };
  choice skinny_kernel = choice::never;
  std::int64_t skinny_min_outer = 1 << 16;  // smaller steps stay with cuTENSOR (tests set 1)
  /// Large x small steps (src/core/tiled.hpp) through tnrt's tiled streaming kernel: `automatic`
  /// (the default; compiled: each step timed at compile time with the kernel in both shared-memory
  /// layouts and with cuTENSOR, the fastest kept; eager: the kernel wherever it applies), `always`
  /// (the kernel wherever it applies, both modes), or `never`. Takes precedence over skinny.
  choice tiled_kernel = choice::automatic;
  std::int64_t tiled_min_elements = 1 << 16;  // results smaller than this stay with cuTENSOR
  std::int64_t fuse_max_elements = 1024;
};

struct plan_cache_stats {
  std::size_t entries = 0, capacity = 0;
  std::uint64_t hits = 0, misses = 0, evictions = 0, clears = 0;
  std::size_t retained_bytes = 0;  // plan metadata estimate; never includes workspace
};

/// Host-side synchronizations the backend itself made (the device layer counts its own).
struct sync_stats {
  std::uint64_t stream_syncs = 0;
  std::uint64_t device_syncs = 0;
  std::uint64_t event_syncs = 0;
};

struct counters {
  plan_cache_stats plan_cache;
  device::workspace_stats workspace;
  device::retirement_stats retirement;
  device::pool_stats pool;
  sync_stats syncs;
};

/// The host synchronizations the profiler counts, runtime and driver domain. The two domains are
/// not added up anywhere: the runtime's own cudaStreamSynchronize may reach the driver as a
/// cuStreamSynchronize that CUPTI reports too.
enum class sync_call : std::uint8_t {
  cuda_stream_synchronize,  // cudaStreamSynchronize (and its per-thread-default-stream variant)
  cuda_event_synchronize,
  cuda_device_synchronize,  // and the deprecated cudaThreadSynchronize
  cu_stream_synchronize,    // and _ptsz
  cu_event_synchronize,
  cu_ctx_synchronize,       // and _v2
};
inline constexpr std::size_t sync_call_kinds = 6;
/// The API name: "cudaStreamSynchronize", ..., "cuCtxSynchronize".
const char* name_of(sync_call call) noexcept;
using sync_counts = std::array<std::uint64_t, sync_call_kinds>;  // indexed by sync_call

/// What `--profile` recorded over the timed runs (never the warm-ups), through CUPTI. Times of a
/// profiled run include CUPTI's overhead: they are not speed figures.
struct profile_report {
  int runs = 0;                      // timed runs (windows) recorded
  interval_stats kernels;            // every kernel that started inside a run; gaps never cross runs
  std::vector<std::size_t> kernels_per_run;
  std::uint64_t memcpys = 0, memsets = 0;     // inside the runs
  std::uint64_t kernels_untimed = 0;          // kernel records CUPTI gave no timestamps (not in `kernels`)
  std::uint64_t kernels_outside_runs = 0;     // warm-ups, compilation, uploads (ignored)
  std::uint64_t records_dropped = 0;          // CUPTI buffer overflows (0 unless something is wrong)
  sync_counts syncs{};         // entered inside the runs, by anyone
  sync_counts runner_syncs{};  // of those, the runner's own wait after each call (syncs - runner_syncs = inside calls)
  std::string cupti_path;
  std::uint32_t cupti_version = 0;
};

struct run_request {
  const problem* prob = nullptr;
  std::span<const host_tensor> inputs;  // uploaded before any timing
  options opt;
  int warmups = 3;
  int repeats = 10;
  /// Record every kernel and synchronization of the timed runs through CUPTI (run_result::profile).
  /// The times then carry CUPTI's overhead. Throws device_error when CUPTI cannot be loaded.
  bool profile = false;
  /// (phase, done, total): phase is "upload", "compile", "warmup", "run".
  std::function<void(const char*, std::size_t, std::size_t)> progress;
};

struct run_result {
  host_tensor result;               // of the last repetition
  std::vector<double> times_ms;     // one per timed repetition: first call to device sync after the last step
  std::vector<double> enqueue_ms;   // eager: host time until the call returned (all work enqueued)
  double compile_ms = 0;            // compiled mode: plans + memory plan + capture
  std::size_t peak_device_bytes = 0;  // pool high-water (eager) or arena (workspaces inside) + inputs + fused scratch and table (compiled)
  std::size_t plan_lower_bound_bytes = 0;  // compiled: the memory plan's lower bound (tensors and step workspaces)
  std::size_t plan_arena_bytes = 0;        // compiled: the arena the plan laid out (workspaces inside)
  std::size_t plan_tensor_bound_bytes = 0;  // compiled: the lower bound counting tensors only
  counters stats;                   // after the last repetition
  std::uint64_t syncs_inside_calls = 0;  // host synchronizations observed inside timed contraction calls
  std::string device_name, driver_version, cuda_version, cutensor_version;
  std::optional<profile_report> profile;  // when run_request::profile
};

/// Throws device_error when unavailable_reason() is not empty, out_of_memory when the problem does
/// not fit (compiled: checked before launch), and the loaders' errors for mismatched inputs.
run_result run(const run_request& request);

}  // namespace tnrt::cuda
