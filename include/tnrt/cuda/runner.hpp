#pragma once
// The CUDA backend as the command-line tool and the benchmark harness use it: run a problem on the
// GPU, eagerly or compiled, with warm-ups and timed repetitions, and report every counter.
// Compiled only when the CUDA backend is built (TNRT_HAVE_CUDA); the functions themselves never
// need a GPU to be called: without one they throw device_error saying what is missing.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"
#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

/// "" when a CUDA device and cuTENSOR are usable here; otherwise one line saying what is missing
/// (no CUDA device / driver too old / libcutensor.so.2 not found, with the paths searched).
std::string unavailable_reason();

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
  bool use_graph = true;  // compiled mode: replay as a CUDA graph (else plain stream replay)
  /// Intermediates stored with their FIRST label contiguous (column-major, the layout the
  /// TensorNetworkBenchmarks trees were optimized for in Julia) rather than the last. Results handed
  /// back are always row-major.
  bool column_major_intermediates = true;
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

struct run_request {
  const problem* prob = nullptr;
  std::span<const host_tensor> inputs;  // uploaded before any timing
  options opt;
  int warmups = 3;
  int repeats = 10;
  /// (phase, done, total): phase is "upload", "compile", "warmup", "run".
  std::function<void(const char*, std::size_t, std::size_t)> progress;
};

struct run_result {
  host_tensor result;               // of the last repetition
  std::vector<double> times_ms;     // one per timed repetition: first call to device sync after the last step
  std::vector<double> enqueue_ms;   // eager: host time until the call returned (all work enqueued)
  double compile_ms = 0;            // compiled mode: plans + memory plan + capture
  std::size_t peak_device_bytes = 0;  // pool high-water (eager) or arena + workspace (compiled)
  std::size_t plan_lower_bound_bytes = 0;  // compiled: the memory plan's lower bound
  counters stats;                   // after the last repetition
  std::uint64_t syncs_inside_calls = 0;  // host synchronizations observed inside timed contraction calls
  std::string device_name, driver_version, cuda_version, cutensor_version;
};

/// Throws device_error when unavailable_reason() is not empty, out_of_memory when the problem does
/// not fit (compiled: checked before launch), and the loaders' errors for mismatched inputs.
run_result run(const run_request& request);

}  // namespace tnrt::cuda
