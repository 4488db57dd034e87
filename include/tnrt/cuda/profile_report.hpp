#pragma once
// What the CUDA backend's profiler (CUPTI, opened at run time) records over timed runs, and whether
// it can be loaded here. Used by the benchmark runner (tnrt/cuda/runner.hpp) and its profiler.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tnrt/profile_stats.hpp"

namespace tnrt::cuda {

/// "" when the profiler (CUPTI, opened at run time) can be loaded here; otherwise one line naming
/// every place searched. Says nothing about the GPU: see unavailable_reason().
std::string profiler_unavailable_reason();
/// "<path> (CUPTI <version>)": the library --profile uses; "" when none can be loaded.
std::string profiler_library();

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

}  // namespace tnrt::cuda
