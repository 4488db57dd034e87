// The kernel-timeline statistics behind `tnrt contract --profile` (include/tnrt/profile_stats.hpp):
// busy time is the union of the intervals, span first start to last end, gaps in start order
// against the latest end so far (clamped at 0), quantiles by linear interpolation; runs are
// summarized separately so that no gap crosses two runs. Checked on hand-made timelines and on
// random ones against a brute-force model (a boolean per nanosecond).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tnrt/profile_stats.hpp"

namespace tnrt {
namespace {

using iv = kernel_interval;

TEST(ProfileStats, EmptyListIsAllZeros) {
  const interval_stats s = summarize_intervals({});
  EXPECT_EQ(s.kernels, 0u);
  EXPECT_EQ(s.busy_ns, 0u);
  EXPECT_EQ(s.span_ns, 0u);
  EXPECT_TRUE(s.gaps_ns.empty());
  const gap_summary g = summarize_gaps(s.gaps_ns);
  EXPECT_EQ(g.count, 0u);
  EXPECT_FALSE(g.median_us.has_value());
  EXPECT_FALSE(g.p90_us.has_value());
  EXPECT_FALSE(g.max_us.has_value());
}

TEST(ProfileStats, OneKernelHasNoGap) {
  const interval_stats s = summarize_intervals({iv{1000, 4000}});
  EXPECT_EQ(s.kernels, 1u);
  EXPECT_EQ(s.busy_ns, 3000u);
  EXPECT_EQ(s.span_ns, 3000u);
  EXPECT_TRUE(s.gaps_ns.empty());
}

TEST(ProfileStats, DisjointKernelsInAnyOrder) {
  // [10,20) [50,60) [30,40), given out of order: gaps 10 and 10, busy 30, span 50.
  const interval_stats s = summarize_intervals({iv{10, 20}, iv{50, 60}, iv{30, 40}});
  EXPECT_EQ(s.kernels, 3u);
  EXPECT_EQ(s.busy_ns, 30u);
  EXPECT_EQ(s.span_ns, 50u);
  EXPECT_EQ(s.gaps_ns, (std::vector<std::uint64_t>{10, 10}));
}

TEST(ProfileStats, OverlappingKernelsCountOnceAndHaveZeroGaps) {
  // A long kernel [0,100) with two kernels inside it, then one overlapping its end, then a gap.
  const interval_stats s = summarize_intervals({iv{0, 100}, iv{10, 20}, iv{30, 40}, iv{90, 150}, iv{200, 210}});
  EXPECT_EQ(s.kernels, 5u);
  EXPECT_EQ(s.busy_ns, 160u);  // [0,150) and [200,210)
  EXPECT_EQ(s.span_ns, 210u);
  // [30,40) starts after [10,20) ended but inside [0,100): its gap is against the latest end (100).
  EXPECT_EQ(s.gaps_ns, (std::vector<std::uint64_t>{0, 0, 0, 50}));
}

TEST(ProfileStats, IdenticalAndTouchingKernels) {
  const interval_stats s = summarize_intervals({iv{5, 10}, iv{5, 10}, iv{10, 12}});
  EXPECT_EQ(s.busy_ns, 7u);
  EXPECT_EQ(s.span_ns, 7u);
  EXPECT_EQ(s.gaps_ns, (std::vector<std::uint64_t>{0, 0}));
}

TEST(ProfileStats, EndBeforeStartIsAZeroLengthKernel) {
  const interval_stats s = summarize_intervals({iv{100, 50}, iv{200, 300}});
  EXPECT_EQ(s.busy_ns, 100u);
  EXPECT_EQ(s.span_ns, 200u);
  EXPECT_EQ(s.gaps_ns, (std::vector<std::uint64_t>{100}));
}

TEST(ProfileStats, QuantilesInterpolateLinearly) {
  EXPECT_DOUBLE_EQ(*quantile({3, 1, 2}, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(*quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(*quantile({7}, 0.9), 7.0);
  // 0..10: p90 is rank 9 exactly; 1..10: rank 8.1 -> 9.1.
  EXPECT_DOUBLE_EQ(*quantile({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.0);
  EXPECT_NEAR(*quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1, 1e-12);
  EXPECT_DOUBLE_EQ(*quantile({5, 1}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(*quantile({5, 1}, 1.0), 5.0);
  EXPECT_FALSE(quantile({}, 0.5).has_value());
}

TEST(ProfileStats, GapSummaryInMicroseconds) {
  // gaps 1, 2, 3, 4, 100 µs: median 3, p90 at rank 3.6 -> 4 + 0.6 * 96 = 61.6, max 100.
  const std::vector<std::uint64_t> gaps{4000, 1000, 100000, 3000, 2000};
  const gap_summary g = summarize_gaps(gaps);
  EXPECT_EQ(g.count, 5u);
  EXPECT_DOUBLE_EQ(*g.median_us, 3.0);
  EXPECT_NEAR(*g.p90_us, 61.6, 1e-9);
  EXPECT_DOUBLE_EQ(*g.max_us, 100.0);
  // An even count: the median is the mean of the middle two, zeros included.
  const std::vector<std::uint64_t> even{0, 0, 2000, 6000};
  EXPECT_DOUBLE_EQ(*summarize_gaps(even).median_us, 1.0);
}

TEST(ProfileStats, RunsAreSummarizedSeparately) {
  // Two runs 1 ms apart: the host time between them is not a gap.
  const std::vector<std::vector<iv>> runs{{iv{0, 10}, iv{20, 30}}, {iv{1'000'000, 1'000'005}}, {}};
  const interval_stats s = summarize_runs(runs);
  EXPECT_EQ(s.kernels, 3u);
  EXPECT_EQ(s.busy_ns, 25u);
  EXPECT_EQ(s.span_ns, 35u);  // 30 + 5
  EXPECT_EQ(s.gaps_ns, (std::vector<std::uint64_t>{10}));
  const interval_stats none = summarize_runs({});
  EXPECT_EQ(none.kernels, 0u);
  EXPECT_TRUE(none.gaps_ns.empty());
}

// Random timelines against a brute-force model on a small clock: busy = covered ticks; span and
// gaps by the definitions, computed the slow way.
TEST(ProfileStats, RandomTimelinesMatchABruteForceModel) {
  std::mt19937_64 rng(20261201);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = static_cast<int>(rng() % 12);
    std::vector<iv> k;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t a = rng() % 200, len = rng() % 30;
      k.push_back({a, a + len});
    }
    const interval_stats s = summarize_intervals(k);
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::vector<bool> covered(256, false);
    for (const iv& x : k)
      for (std::uint64_t t = x.start_ns; t < x.end_ns; ++t) covered[t] = true;
    EXPECT_EQ(s.busy_ns, static_cast<std::uint64_t>(std::count(covered.begin(), covered.end(), true)));
    EXPECT_EQ(s.kernels, k.size());
    if (k.empty()) continue;
    std::sort(k.begin(), k.end(), [](const iv& a, const iv& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
    });
    std::uint64_t last_end = 0;
    for (const iv& x : k) last_end = std::max(last_end, x.end_ns);
    EXPECT_EQ(s.span_ns, last_end - k.front().start_ns);
    ASSERT_EQ(s.gaps_ns.size(), k.size() - 1);
    for (std::size_t i = 1; i < k.size(); ++i) {
      std::uint64_t before = 0;
      for (std::size_t j = 0; j < i; ++j) before = std::max(before, k[j].end_ns);
      EXPECT_EQ(s.gaps_ns[i - 1], k[i].start_ns > before ? k[i].start_ns - before : 0);
    }
  }
}

}  // namespace
}  // namespace tnrt
