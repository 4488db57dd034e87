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
#include <utility>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/options.hpp"
#include "tnrt/cuda/profile_report.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

/// "" when a CUDA device and cuTENSOR are usable here; otherwise one line saying what is missing
/// (no CUDA device / driver too old / libcutensor.so.2 not found, with the paths searched).
std::string unavailable_reason();

// The options and counters live in tnrt/options.hpp (the library API's); the runner's names for them.
using tnrt::api_stats;
using tnrt::counters;
using tnrt::exec_mode;
using tnrt::kernel_choice;
using tnrt::options;
using tnrt::plan_cache_stats;
using tnrt::precision;
using tnrt::sync_stats;

struct run_request {
  const problem* prob = nullptr;
  std::span<const host_tensor> inputs;  // uploaded before any timing
  options opt;
  int warmups = 3;
  int repeats = 10;
  /// Record every kernel and synchronization of the timed runs through CUPTI (run_result::profile).
  /// The times then carry CUPTI's overhead. Throws device_error when CUPTI cannot be loaded.
  bool profile = false;
  /// Compiled mode: the inputs uploaded once into the program's own buffers (program::input_views)
  /// and every run given those views, so no run copies its inputs in: the static inputs of a
  /// captured CUDA graph (torch's graph peer replays that way). Off: the runner's own device
  /// buffers, copied into the program by each run (the general program::run path).
  bool static_inputs = false;
  /// Compiled mode: after the timed runs, replay once with an event between ops and write one CSV
  /// row per launch (op, step, ranks, bytes, ms, GB/s, kernel) to this file ("" = none).
  std::string step_profile_path;
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
  /// Compiled: what runs each op, counted ("library", "cublas", "fused", "tiled ...", "copy"), steps
  /// whose timed cuTENSOR algorithm replaced the default one (of them, those on a runner-up kernel of
  /// cuTENSOR's ranking, options::kernel_ranks), and steps that are one GEMM.
  std::vector<std::pair<std::string, int>> kernel_counts;
  int algos_changed = 0, kernel_ranks_chosen = 0, gemm_candidates = 0;
  int gemm_chosen = 0, gemm_algos_chosen = 0;  // steps on cuBLAS, and of them on a timed cuBLASLt algorithm
  int gemm_dropped = 0;  // steps the whole-program check took back from cuBLAS (options::gemm_check)
  std::string layout;                                      // the intermediate layout it runs under
  std::vector<std::pair<std::string, double>> layout_times;  // each layout timed, with its ms
  counters stats;                   // after the last repetition
  std::uint64_t syncs_inside_calls = 0;  // host synchronizations observed inside timed contraction calls
  std::string device_name, driver_version, cuda_version, cutensor_version;
  std::optional<profile_report> profile;  // when run_request::profile
};

/// Throws device_error when unavailable_reason() is not empty, out_of_memory when the problem does
/// not fit (compiled: checked before launch), and the loaders' errors for mismatched inputs.
run_result run(const run_request& request);

}  // namespace tnrt::cuda
