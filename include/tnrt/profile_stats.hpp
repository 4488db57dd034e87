#pragma once
// Statistics of a kernel timeline, as `tnrt contract --profile` reports them: how many kernels ran,
// how long the GPU was busy (the union of the kernels' intervals, so overlapping kernels count
// once), the span from the first start to the last end, and the idle gaps between kernels. Pure host
// code (no CUDA): the profiler (src/cuda/profiler) collects the intervals, these functions judge them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tnrt {

/// One kernel's execution, [start_ns, end_ns) on the device's clock. An end before the start is
/// read as a zero-length kernel.
struct kernel_interval {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

struct interval_stats {
  std::size_t kernels = 0;
  std::uint64_t busy_ns = 0;  // length of the union of the intervals
  std::uint64_t span_ns = 0;  // first start to last end (0 without kernels)
  /// One entry per kernel after the first, in start order: its start minus the latest end of every
  /// kernel that started before it, clamped at 0 (a kernel overlapping earlier work has gap 0).
  std::vector<std::uint64_t> gaps_ns;
};

/// Sorts the intervals by start (ties by end) and summarizes them. Empty input gives all zeros.
interval_stats summarize_intervals(std::vector<kernel_interval> intervals);

/// Each run summarized on its own, then added up: kernels, busy and span are sums over the runs and
/// the gaps are every run's gaps in run order. A gap never crosses runs, so the host time between
/// two timed calls (the harness's synchronize, its bookkeeping) is not counted as idle GPU time.
interval_stats summarize_runs(std::span<const std::vector<kernel_interval>> runs);

/// The p-quantile (p in [0, 1]) by linear interpolation between the closest ranks (NumPy's default
/// "linear" method): the median of {1, 2, 3, 4} is 2.5. nullopt for an empty list.
std::optional<double> quantile(std::vector<double> values, double p);

/// Median, 90th percentile and largest of a list of gaps, in microseconds; nullopt without gaps.
struct gap_summary {
  std::size_t count = 0;
  std::optional<double> median_us, p90_us, max_us;
};
gap_summary summarize_gaps(std::span<const std::uint64_t> gaps_ns);

}  // namespace tnrt
