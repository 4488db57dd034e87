#include "tnrt/profile_stats.hpp"

#include <algorithm>
#include <cmath>

namespace tnrt {

interval_stats summarize_intervals(std::vector<kernel_interval> intervals) {
  interval_stats s;
  s.kernels = intervals.size();
  if (intervals.empty()) return s;
  for (auto& k : intervals) k.end_ns = std::max(k.end_ns, k.start_ns);
  std::sort(intervals.begin(), intervals.end(), [](const kernel_interval& a, const kernel_interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  s.gaps_ns.reserve(intervals.size() - 1);
  // Sweep in start order: the union grows by the part of each interval past the latest end so far.
  std::uint64_t latest_end = intervals.front().end_ns;
  s.busy_ns = latest_end - intervals.front().start_ns;
  for (std::size_t i = 1; i < intervals.size(); ++i) {
    const kernel_interval& k = intervals[i];
    s.gaps_ns.push_back(k.start_ns > latest_end ? k.start_ns - latest_end : 0);
    if (k.end_ns > latest_end) {
      s.busy_ns += k.end_ns - std::max(k.start_ns, latest_end);
      latest_end = k.end_ns;
    }
  }
  s.span_ns = latest_end - intervals.front().start_ns;
  return s;
}

interval_stats summarize_runs(std::span<const std::vector<kernel_interval>> runs) {
  interval_stats total;
  for (const auto& run : runs) {
    interval_stats s = summarize_intervals(run);
    total.kernels += s.kernels;
    total.busy_ns += s.busy_ns;
    total.span_ns += s.span_ns;
    total.gaps_ns.insert(total.gaps_ns.end(), s.gaps_ns.begin(), s.gaps_ns.end());
  }
  return total;
}

std::optional<double> quantile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

gap_summary summarize_gaps(std::span<const std::uint64_t> gaps_ns) {
  gap_summary g;
  g.count = gaps_ns.size();
  if (gaps_ns.empty()) return g;
  std::vector<double> us;
  us.reserve(gaps_ns.size());
  for (std::uint64_t x : gaps_ns) us.push_back(static_cast<double>(x) / 1e3);
  g.median_us = quantile(us, 0.5);
  g.p90_us = quantile(us, 0.9);
  g.max_us = *std::max_element(us.begin(), us.end());
  return g;
}

}  // namespace tnrt
