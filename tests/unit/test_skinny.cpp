// Skinny contractions (src/core/skinny.hpp), on the host:
//  - describe_skinny + evaluate_skinny against evaluate_lowered (the trusted reference) on many
//    random skinny steps (fixed, logged seeds) in all four dtypes: Small (lhs or rhs) with m and k
//    modes, Big with outer and k modes, batch modes in all three, labels summed out of one operand
//    only, occasional diagonals, row/column-major, permuted and padded layouts; limits
//    {48 KiB, min_outer 1} so small problems qualify. Errors per element within 2 (N + 2) eps
//    sum|terms|. Small is allocated as exactly small_span elements followed by NaN guards, Big and
//    the other operands likewise (a read past them shows up as NaN); D's padding holds a sentinel
//    that must survive. Every offset the record can form is also checked directly against the
//    operands' spans.
//  - the record: outer_count / m_count / k_count equal the products of the roles' extents,
//    small_span Small's span, n_outer <= skinny_max_outer, Small is the operand with fewer elements.
//  - refusals: unary reductions, Small over max_small_bytes (exactly at the limit: accepted),
//    m_count > 16, k_count > 64 (one-sided sums count), outer space below min_outer, more than
//    skinny_max_outer outer groups after merging (and mergeable ones merged below it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/skinny.hpp"
#include "core/step_lowering.hpp"
#include "support/kernel_random.hpp"

namespace tnrt {
namespace {

using kerntest::i64;

constexpr std::size_t guards = 8;
const skinny_limits test_limits{48 * 1024, 1};

struct skinny_stats {
  int checked = 0, refused_expected = 0, batch = 0, one_sided = 0, merged = 0, small_is_rhs = 0, diagonal = 0;
};

// Every offset the record forms lies inside the operands' spans.
void check_offsets(const skinny_record& r, i64 big_span, i64 d_span) {
  i64 max_small = -1, max_big = -1, max_d = -1, min_any = 0;
  for (i64 j = 0; j < r.outer_count; ++j) {
    i64 rest = j, ob = 0, os = 0, od = 0;
    for (int g = 0; g < r.n_outer; ++g) {
      const i64 x = rest % r.outer_extent[g];
      rest /= r.outer_extent[g];
      ob += x * r.outer_big[g];
      os += x * r.outer_small[g];
      od += x * r.outer_d[g];
    }
    for (int m = 0; m < r.m_count; ++m) {
      max_d = std::max(max_d, od + r.m_d[m]);
      min_any = std::min(min_any, od + r.m_d[m]);
      for (int k = 0; k < r.k_count; ++k) {
        max_small = std::max(max_small, os + r.m_small[m] + r.k_small[k]);
        min_any = std::min(min_any, os + r.m_small[m] + r.k_small[k]);
      }
    }
    for (int k = 0; k < r.k_count; ++k) {
      max_big = std::max(max_big, ob + r.k_big[k]);
      min_any = std::min(min_any, ob + r.k_big[k]);
    }
  }
  EXPECT_GE(min_any, 0) << "a negative offset";
  EXPECT_LT(max_small, r.small_span) << "Small read beyond small_span (the kernel stages only small_span elements)";
  EXPECT_LT(max_big, big_span) << "Big read beyond its span";
  EXPECT_LT(max_d, d_span) << "D written beyond its span";
}

template <class T>
void check_skinny_step(std::mt19937_64& rng, const kerntest::step_case& sc, const kerntest::skinny_expectation& ex, const std::string& where,
                       skinny_stats& st) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const kerntest::step_data<T> sd = kerntest::make_step_data<T>(rng, sc, l, guards);
  const std::vector<T>& a = sd.a;
  const std::vector<T>& b = sd.b;
  const std::vector<T>& want = sd.want;
  const std::size_t span_a = sd.span_a, span_b = sd.span_b, span_d = sd.span_d;
  std::vector<T> got(span_d + guards, kerntest::sentinel_value<T>());

  const bool expect_fit = ex.m_count <= skinny_max_m && ex.k_count <= skinny_max_k && ex.outer_count >= test_limits.min_outer &&
                          ex.small_span * static_cast<i64>(sizeof(T)) <= test_limits.max_small_bytes;
  skinny_record r;
  r.n_outer = -5;
  const bool fit = describe_skinny(l, sizeof(T), a.data(), b.data(), got.data(), r, test_limits);
  if (!expect_fit) {
    EXPECT_FALSE(fit) << "outside the limits: m " << ex.m_count << " k " << ex.k_count << " outer " << ex.outer_count << " small span " << ex.small_span;
    EXPECT_EQ(r.n_outer, -5) << "a refused record must be left untouched";
    ++st.refused_expected;
    return;
  }
  // More than skinny_max_outer groups cannot occur here (at most 6 outer modes).
  ASSERT_TRUE(fit) << "within the limits but refused: m " << ex.m_count << " k " << ex.k_count << " outer " << ex.outer_count << " small span "
                   << ex.small_span;
  ++st.checked;
  EXPECT_EQ(r.small, sd.small) << "the operand with fewer elements is staged";
  EXPECT_EQ(r.big, sd.big);
  EXPECT_EQ(r.d, static_cast<void*>(got.data()));
  EXPECT_EQ(r.outer_count, ex.outer_count);
  EXPECT_EQ(r.m_count, ex.m_count);
  EXPECT_EQ(r.k_count, ex.k_count);
  EXPECT_EQ(r.small_span, ex.small_span);
  EXPECT_GE(r.n_outer, 0);
  EXPECT_LE(r.n_outer, skinny_max_outer);
  i64 outer = 1;
  for (int g = 0; g < r.n_outer; ++g) {
    EXPECT_GT(r.outer_extent[g], 1) << "extent-1 groups are useless";
    outer *= r.outer_extent[g];
  }
  EXPECT_EQ(outer, r.outer_count);
  check_offsets(r, static_cast<i64>(sc.small_side == 0 ? span_b : span_a), static_cast<i64>(span_d));
  // stats
  int outer_modes = 0;
  for (std::size_t i = 0; i < l.d.modes.size(); ++i) {
    const auto& big_l = sc.small_side == 0 ? l.b : l.a;
    if (l.d.extents[i] > 1 && std::find(big_l.modes.begin(), big_l.modes.end(), l.d.modes[i]) != big_l.modes.end()) ++outer_modes;
  }
  if (r.n_outer < outer_modes) ++st.merged;
  if (sc.small_side == 1) ++st.small_is_rhs;
  auto has_repeat = [](std::vector<label_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) != v.end();
  };
  if (has_repeat(sc.a.labels) || has_repeat(sc.b.labels)) ++st.diagonal;
  bool batch = false, one_sided = false;
  for (label_t x : sc.a.labels) {
    const bool in_b = std::find(sc.b.labels.begin(), sc.b.labels.end(), x) != sc.b.labels.end();
    const bool in_d = std::find(sc.d.labels.begin(), sc.d.labels.end(), x) != sc.d.labels.end();
    if (in_b && in_d && sc.extents[static_cast<std::size_t>(x)] > 1) batch = true;
    if (!in_b && !in_d && sc.extents[static_cast<std::size_t>(x)] > 1) one_sided = true;
  }
  for (label_t x : sc.b.labels)
    if (std::find(sc.a.labels.begin(), sc.a.labels.end(), x) == sc.a.labels.end() &&
        std::find(sc.d.labels.begin(), sc.d.labels.end(), x) == sc.d.labels.end() && sc.extents[static_cast<std::size_t>(x)] > 1)
      one_sided = true;
  st.batch += batch ? 1 : 0;
  st.one_sided += one_sided ? 1 : 0;

  evaluate_skinny<T>(r);
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a, b, span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got, want, bound, tol);
}

template <class T>
void random_skinny_steps(std::uint64_t seed, int count, i64 max_m, i64 max_k, skinny_stats& st) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    kerntest::skinny_expectation ex;
    const kerntest::step_case sc = kerntest::random_skinny_step(rng, ex, max_m, max_k);
    check_skinny_step<T>(rng, sc, ex, std::string(kerntest::type_name<T>()) + " seed " + std::to_string(seed) + " step #" + std::to_string(i), st);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Skinny, RandomStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 31337;
  std::printf("[skinny] seed %llu (+0..3 by dtype), 300 steps per dtype\n", static_cast<unsigned long long>(seed));
  skinny_stats st;
  random_skinny_steps<float>(seed, 300, 16, 64, st);
  random_skinny_steps<double>(seed + 1, 300, 16, 64, st);
  random_skinny_steps<std::complex<float>>(seed + 2, 300, 16, 64, st);
  random_skinny_steps<std::complex<double>>(seed + 3, 300, 16, 64, st);
  std::printf("[skinny] %d checked (batch %d, one-sided sums %d, merged outer %d, small is rhs %d, diagonals %d), %d refused as expected\n",
              st.checked, st.batch, st.one_sided, st.merged, st.small_is_rhs, st.diagonal, st.refused_expected);
  EXPECT_GT(st.checked, 1000);
  EXPECT_GT(st.batch, 200);
  EXPECT_GT(st.one_sided, 100);
  EXPECT_GT(st.merged, 100);
  EXPECT_GT(st.small_is_rhs, 300);
  EXPECT_GT(st.diagonal, 50);
}

// m and k beyond the limits: those steps must be refused, the others accepted and correct.
TEST(Skinny, RandomStepsAroundTheLimits) {
  const std::uint64_t seed = 27182;
  std::printf("[skinny limits] seed %llu (+0..3 by dtype)\n", static_cast<unsigned long long>(seed));
  skinny_stats st;
  random_skinny_steps<float>(seed, 200, 64, 256, st);
  random_skinny_steps<double>(seed + 1, 200, 64, 256, st);
  random_skinny_steps<std::complex<float>>(seed + 2, 200, 64, 256, st);
  random_skinny_steps<std::complex<double>>(seed + 3, 200, 64, 256, st);
  std::printf("[skinny limits] %d checked, %d refused as expected\n", st.checked, st.refused_expected);
  EXPECT_GT(st.refused_expected, 50);
  EXPECT_GT(st.checked, 200);
}

// ---- hand-built steps at the limits --------------------------------------------------------------

// Labels: 0 outer (extent `outer`), 1 batch (`batch`), 2 m (`m`), 3 k (`k`), 4 summed in Big only
// (`sum_big`). Big [o, b, k, s], Small [b, m, k], D [o, b, m], all row-major; Small's strides
// padded by `small_pad` elements per batch slice.
struct hand_case {
  i64 outer = 4, batch = 1, m = 2, k = 2, sum_big = 1, small_pad = 0;
};

kerntest::step_case hand_step(const hand_case& h) {
  kerntest::step_case s;
  s.extents = {h.outer, h.batch, h.m, h.k, h.sum_big};
  s.a.labels = {0, 1, 3, 4};
  s.a.strides = dense_strides({h.outer, h.batch, h.k, h.sum_big}, false);
  s.b.labels = {1, 2, 3};
  s.b.strides = {h.m * h.k + h.small_pad, h.k, 1};
  s.d.labels = {0, 1, 2};
  s.d.strides = dense_strides({h.outer, h.batch, h.m}, false);
  s.small_side = 1;
  return s;
}

bool fits(const hand_case& h, std::size_t element_bytes, const skinny_limits& lim, skinny_record* out = nullptr) {
  skinny_record r;
  r.n_outer = -5;
  const bool ok = describe_skinny(kerntest::lower(hand_step(h)), element_bytes, nullptr, nullptr, nullptr, r, lim);
  if (!ok) {
    EXPECT_EQ(r.n_outer, -5) << "a refused record must be left untouched";
  }
  if (out != nullptr) *out = r;
  return ok;
}

TEST(Skinny, RefusesUnaryReductions) {
  kerntest::step_case s;
  s.unary = true;
  s.extents = {100000, 4};
  s.a.labels = {0, 1};
  s.a.strides = {4, 1};
  s.d.labels = {0};
  s.d.strides = {1};
  skinny_record r;
  EXPECT_FALSE(describe_skinny(kerntest::lower(s), 4, nullptr, nullptr, nullptr, r, test_limits));
}

TEST(Skinny, SmallOperandSizeLimit) {
  // Small [b=12, m=16, k=64] = 12288 elements: f32 exactly 48 KiB (accepted), f64 96 KiB (refused).
  hand_case h{32, 12, 16, 64, 1, 0};  // Big 32 x 12 x 64 = 24576 elements
  skinny_record r;
  EXPECT_TRUE(fits(h, 4, test_limits, &r)) << "exactly 48 KiB";
  EXPECT_EQ(r.small_span, 12288);
  EXPECT_FALSE(fits(h, 8, test_limits)) << "96 KiB";
  EXPECT_FALSE(fits(h, 4, skinny_limits{48 * 1024 - 1, 1})) << "one byte over the limit";
  // Padding counts: the span, not the element count, must fit.
  h.small_pad = 1;
  EXPECT_FALSE(fits(h, 4, test_limits)) << "span 12288 + 11 padding elements";
  // The default limits: 48 KiB and an outer space of 65536.
  hand_case wide{1 << 16, 1, 4, 4, 1, 0};
  EXPECT_TRUE(fits(wide, 16, skinny_limits{}));
  wide.outer = (1 << 16) - 1;
  EXPECT_FALSE(fits(wide, 16, skinny_limits{})) << "outer space below the default min_outer";
}

TEST(Skinny, MAndKLimits) {
  // Big (outer 64) always has more elements than Small here.
  EXPECT_TRUE(fits(hand_case{64, 1, 16, 4, 1, 0}, 8, test_limits)) << "m = 16";
  EXPECT_FALSE(fits(hand_case{64, 1, 17, 4, 1, 0}, 8, test_limits)) << "m = 17";
  EXPECT_TRUE(fits(hand_case{64, 1, 4, 64, 1, 0}, 8, test_limits)) << "k = 64";
  EXPECT_FALSE(fits(hand_case{64, 1, 4, 65, 1, 0}, 8, test_limits)) << "k = 65";
  // A label summed out of Big only is a k mode too (a stride-0 mode in Small).
  skinny_record r;
  EXPECT_TRUE(fits(hand_case{64, 1, 4, 32, 2, 0}, 8, test_limits, &r)) << "k = 32 x 2 (one-sided)";
  EXPECT_EQ(r.k_count, 64);
  EXPECT_EQ(r.m_count, 4);
  EXPECT_EQ(r.outer_count, 64);
  EXPECT_FALSE(fits(hand_case{64, 1, 4, 32, 3, 0}, 8, test_limits)) << "k = 32 x 3 (one-sided)";
}

TEST(Skinny, MinOuter) {
  EXPECT_TRUE(fits(hand_case{100, 1, 4, 4, 1, 0}, 4, skinny_limits{48 * 1024, 100}));
  EXPECT_FALSE(fits(hand_case{100, 1, 4, 4, 1, 0}, 4, skinny_limits{48 * 1024, 101}));
  // batch modes are outer modes too
  EXPECT_TRUE(fits(hand_case{25, 4, 4, 4, 1, 0}, 4, skinny_limits{48 * 1024, 100}));
  EXPECT_FALSE(fits(hand_case{25, 3, 4, 4, 1, 0}, 4, skinny_limits{48 * 1024, 100}));
}

// 14 outer modes of extent 2: merged into one group when contiguous in Big and D, refused when no
// two are (D column-major against Big row-major).
TEST(Skinny, OuterGroups) {
  const int n_outer = skinny_max_outer + 2;
  kerntest::step_case s;
  std::vector<i64> big_ext;
  for (int i = 0; i < n_outer; ++i) {
    s.extents.push_back(2);
    s.a.labels.push_back(i);
    big_ext.push_back(2);
  }
  s.extents.push_back(3);  // k
  s.extents.push_back(2);  // m
  s.a.labels.push_back(n_outer);
  big_ext.push_back(3);
  s.b.labels = {n_outer + 1, n_outer};
  s.b.strides = {3, 1};
  s.a.strides = dense_strides(big_ext, false);
  s.small_side = 1;
  // D [m, o0 .. o13]; row-major: the outer modes in Big's order, last fastest, so every pair is
  // contiguous in Big (steps of 3) and in D (steps of 1) alike.
  s.d.labels.push_back(n_outer + 1);
  for (int i = 0; i < n_outer; ++i) s.d.labels.push_back(i);
  std::vector<i64> d_ext(static_cast<std::size_t>(n_outer) + 1, 2);
  s.d.strides = dense_strides(d_ext, false);
  skinny_record r;
  ASSERT_TRUE(describe_skinny(kerntest::lower(s), 8, nullptr, nullptr, nullptr, r, test_limits)) << kerntest::describe(s);
  EXPECT_EQ(r.outer_count, i64{1} << n_outer);
  EXPECT_LE(r.n_outer, skinny_max_outer);
  std::printf("[skinny outer groups] %d outer modes merged into %d group(s)\n", n_outer, r.n_outer);
  EXPECT_LT(r.n_outer, n_outer) << "contiguous outer modes should merge";

  // Check the merged record numerically too (f64).
  {
    std::mt19937_64 rng(99);
    skinny_stats st;
    kerntest::skinny_expectation ex;
    ex.outer_count = i64{1} << n_outer;
    ex.m_count = 2;
    ex.k_count = 3;
    ex.small_span = 6;
    check_skinny_step<double>(rng, s, ex, "merged outer groups", st);
    EXPECT_EQ(st.checked, 1);
  }

  // D column-major over the outer modes (first fastest) against Big row-major: nothing merges.
  s.d.strides = dense_strides(d_ext, true);
  r.n_outer = -5;
  EXPECT_FALSE(describe_skinny(kerntest::lower(s), 8, nullptr, nullptr, nullptr, r, test_limits)) << "more than skinny_max_outer groups";
  EXPECT_EQ(r.n_outer, -5);
}

}  // namespace
}  // namespace tnrt

namespace tnrt {
namespace {

// The record keeps D's offsets of the m modes in 32 bits: a result of more than 2^31 elements
// whose m mode is the slowest must be refused (or described exactly), never truncated.
// Described only (no memory): Big [o = 2^31, k = 2], Small [m = 2, k = 2], D [m, o] row-major.
TEST(Skinny, HugeResultStridesAreNotTruncated) {
  lowered_step l;
  const i64 o = i64{1} << 31;
  l.a.modes = {0, 1};  // Big: o, k
  l.a.extents = {o, 2};
  l.a.strides = {2, 1};
  l.b.modes = {2, 1};  // Small: m, k
  l.b.extents = {2, 2};
  l.b.strides = {2, 1};
  l.d.modes = {2, 0};  // D: m (stride 2^31), o
  l.d.extents = {2, o};
  l.d.strides = {o, 1};
  skinny_record r;
  if (describe_skinny(l, 4, nullptr, nullptr, nullptr, r, skinny_limits{})) {
    ASSERT_EQ(r.m_count, 2);
    std::vector<i64> m_d{r.m_d[0], r.m_d[1]};
    std::sort(m_d.begin(), m_d.end());
    EXPECT_EQ(m_d, (std::vector<i64>{0, o})) << "m_d truncated to 32 bits";
  }
}

}  // namespace
}  // namespace tnrt
