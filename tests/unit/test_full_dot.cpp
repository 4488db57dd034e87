// Full contractions (src/core/full_dot.hpp), on the host:
//  - describe_full_dot + evaluate_full_dot against evaluate_lowered (the trusted reference) on
//    random binary steps whose result is one element, in all four dtypes (row/column-major,
//    permuted and padded layouts, diagonals, one-sided sums): the same value within 2 (N + 2) eps
//    sum|terms|. Inputs are followed by NaN guards, so a read past an operand shows up.
//  - the record's claims: modes in A's stride order, `contiguous` exactly when both operands are
//    dense with the same strides, `pow2` exactly when every extent is a power of two (and then the
//    shift decode equals the division decode bit for bit), the grid within its bounds.
//  - tiles (operands in different orders): the tile's and the outer modes partition the modes,
//    each tile's B positions map onto A's order one to one, each operand's fastest modes are in
//    the tile; the tiled and the term-by-term indexing give the reference's value on random
//    permuted dots of up to 2^16 terms, and the exact value on integer-valued data.
//  - what it refuses: a result of more than one element, a unary step, too many modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/full_dot.hpp"
#include "core/step_lowering.hpp"
#include "support/kernel_random.hpp"

namespace tnrt {
namespace {

using kerntest::i64;

constexpr std::size_t guards = 8;

struct dot_stats {
  int checked = 0, contiguous = 0, pow2 = 0, tiled = 0;
};

// The tile structure's claims (full_dot_record::tile_n).
void check_tiles(const full_dot_record& r) {
  if (r.tile_n == 0) return;
  EXPECT_EQ(r.contiguous, 0);
  std::vector<int> seen(static_cast<std::size_t>(r.n), 0);
  std::int64_t tile = 1, outer = 1;
  for (int j = 0; j < r.tile_n; ++j) {
    ++seen[static_cast<std::size_t>(r.tile_a[j])];
    tile *= r.extent[r.tile_a[j]];
    if (j > 0) {
      EXPECT_LT(r.tile_a[j - 1], r.tile_a[j]) << "tile modes in A's order";
    }
  }
  for (int j = 0; j < r.outer_n; ++j) {
    ++seen[static_cast<std::size_t>(r.outer[j])];
    outer *= r.extent[r.outer[j]];
  }
  for (int s : seen) EXPECT_EQ(s, 1) << "tile and outer modes partition the modes";
  EXPECT_EQ(tile, r.tile_count);
  EXPECT_EQ(outer, r.outer_count);
  EXPECT_EQ(tile * outer, r.count);
  EXPECT_LE(r.tile_count, full_dot_tile_max);
  EXPECT_EQ(r.blocks, std::min<i64>(r.outer_count, full_dot_tile_blocks));
  // The launch's grid in each element size: a group's B share fits, the groups cover every tile
  // with at most full_dot_tile_blocks blocks, and a group is no larger than one a block needs.
  for (const int bytes : {4, 8, 16}) {
    const full_dot_grid g = full_dot_grid_of(r, static_cast<std::size_t>(bytes));
    EXPECT_GE(g.group, 1);
    EXPECT_LE(g.group, full_dot_max_group);
    EXPECT_LE(i64{g.group} * r.tile_count * bytes, full_dot_group_bytes) << bytes << "-byte elements";
    const i64 groups = (r.outer_count + g.group - 1) / g.group;
    EXPECT_EQ(g.blocks, std::min<i64>(groups, full_dot_tile_blocks));
    const i64 rounds = (r.outer_count + full_dot_tile_blocks - 1) / full_dot_tile_blocks;  // one tile a round
    const i64 fit = full_dot_group_bytes / bytes / r.tile_count;
    EXPECT_EQ(g.group > 1, rounds >= full_dot_group_rounds && fit >= 2) << "groups exactly where one tile a round takes several";
    if (g.group > 1) {
      EXPECT_GT(r.outer_count, i64{g.group - 1} * full_dot_tile_blocks) << "a smaller group would still give each block one";
    }
  }
  std::vector<int> slots(static_cast<std::size_t>(r.tile_count), 0);
  for (std::int32_t q = 0; q < r.tile_count; ++q) {
    std::int32_t off = 0, slot = 0;
    full_dot_tile_b(r, q, off, slot);
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, r.tile_count);
    ++slots[static_cast<std::size_t>(slot)];
  }
  for (int c : slots) EXPECT_EQ(c, 1) << "B's positions map onto A's order one to one";
  // The last mode of A with a stride, and B's smallest stride, are in the tile.
  int fastest_b = -1;
  for (int m = 0; m < r.n; ++m)
    if (r.b_stride[m] != 0 && (fastest_b < 0 || r.b_stride[m] < r.b_stride[fastest_b])) fastest_b = m;
  if (fastest_b >= 0) {
    EXPECT_EQ(std::count(r.tile_a, r.tile_a + r.tile_n, fastest_b), 1) << "B's fastest mode in the tile";
  }
}

template <class T>
void check_dot(std::mt19937_64& rng, const kerntest::step_case& sc, const std::string& where, dot_stats& st) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const std::vector<T> a = kerntest::random_operand<T>(rng, sc.a, sc.extents, guards);
  const std::vector<T> b = kerntest::random_operand<T>(rng, sc.b, sc.extents, guards);
  const auto span_d = static_cast<std::size_t>(kerntest::span_of(sc.d, sc.extents));
  std::vector<T> want(span_d + guards, kerntest::sentinel_value<T>());
  evaluate_lowered<T>(l, a.data(), b.data(), want.data());

  full_dot_record r;
  ASSERT_TRUE(describe_full_dot(l, r)) << "a binary step with a one-element result is a full dot";
  ++st.checked;
  EXPECT_EQ(r.count, kerntest::sum_length(l));
  for (int m = 0; m + 1 < r.n; ++m) EXPECT_GE(r.a_stride[m], r.a_stride[m + 1]) << "modes in A's stride order";
  bool dense = true, all_pow2 = true;
  i64 expect = 1;
  for (int m = r.n - 1; m >= 0; --m) {
    dense = dense && r.a_stride[m] == expect && r.b_stride[m] == expect;
    expect *= r.extent[m];
    all_pow2 = all_pow2 && std::has_single_bit(static_cast<std::uint64_t>(r.extent[m]));
    EXPECT_GT(r.extent[m], 1) << "extent-1 modes are left out";
  }
  EXPECT_EQ(r.contiguous != 0, dense);
  EXPECT_EQ(r.pow2 != 0, all_pow2);
  EXPECT_GE(r.blocks, 1);
  EXPECT_LE(r.blocks, full_dot_max_blocks);
  st.contiguous += r.contiguous;
  st.pow2 += r.pow2;
  st.tiled += r.tile_n > 0 ? 1 : 0;
  check_tiles(r);

  T got{};
  evaluate_full_dot<T>(r, a.data(), b.data(), &got);
  if (r.pow2 != 0) {
    full_dot_record div = r;
    div.pow2 = 0;
    T by_division{};
    evaluate_full_dot<T>(div, a.data(), b.data(), &by_division);
    EXPECT_TRUE(kerntest::same_bits_value(got, by_division)) << "the two decodes differ";
  }
  std::vector<T> got_d(span_d + guards, kerntest::sentinel_value<T>());
  got_d[static_cast<std::size_t>(kerntest::all_offsets(l.d.extents, l.d.strides).front())] = got;
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a, b, span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got_d, want, bound, tol);
}

// `run(T{}, seed + i)` for the four element types, i = 0..3.
template <class Run>
void for_each_dtype(std::uint64_t seed, Run&& run) {
  run(float{}, seed);
  run(double{}, seed + 1);
  run(std::complex<float>{}, seed + 2);
  run(std::complex<double>{}, seed + 3);
}

template <class T>
void random_dots(std::uint64_t seed, int count, dot_stats& st) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count;) {
    const kerntest::step_case sc = kerntest::random_general_step(rng);
    if (sc.unary || !sc.d.labels.empty()) continue;
    check_dot<T>(rng, sc, std::string(kerntest::type_name<T>()) + " seed " + std::to_string(seed) + " step #" + std::to_string(i), st);
    if (::testing::Test::HasFailure()) return;
    ++i;
  }
}

TEST(FullDot, RandomScalarStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 8675309;
  std::printf("[full dot] seed %llu (+0..3 by dtype), 150 steps per dtype\n", static_cast<unsigned long long>(seed));
  dot_stats st;
  for_each_dtype(seed, [&](auto tag, std::uint64_t s) { random_dots<decltype(tag)>(s, 150, st); });
  std::printf("[full dot] %d checked, %d contiguous, %d with power-of-two extents\n", st.checked, st.contiguous, st.pow2);
  EXPECT_GT(st.contiguous, 10) << "the dense path must be exercised";
  EXPECT_LT(st.contiguous, st.checked - 100) << "and the strided one";
  EXPECT_GT(st.pow2, 100);
  EXPECT_LT(st.pow2, st.checked - 100);
}

// n modes of extent e in A (row-major) and B (row-major, or its modes reversed), summed to a scalar.
lowered_step dot_step(int n, i64 e, bool reversed_b) {
  lowered_step l;
  for (int i = 0; i < n; ++i) {
    l.a.modes.push_back(i);
    l.a.extents.push_back(e);
    l.b.modes.push_back(reversed_b ? n - 1 - i : i);
    l.b.extents.push_back(e);
  }
  l.a.strides = dense_strides(l.a.extents, false);
  l.b.strides = dense_strides(l.b.extents, false);
  l.d.modes = {n};
  l.d.extents = {1};
  l.d.strides = {1};
  return l;
}

// Dots of 6..13 modes of extents 2..4 (at most 2^16 terms), B's modes in a random order: the
// record's indexing (tiled where it plans tiles, and term by term) against evaluate_lowered.
template <class T>
void random_permuted_dots(std::uint64_t seed, int count, dot_stats& st) {
  std::mt19937_64 rng(seed);
  for (int c = 0; c < count; ++c) {
    kerntest::step_case sc;
    const int n = 6 + static_cast<int>(rng() % 8);
    std::vector<label_t> labels(static_cast<std::size_t>(n));
    std::iota(labels.begin(), labels.end(), label_t{0});
    sc.extents.clear();
    i64 space = 1;
    for (int i = 0; i < n; ++i) {
      i64 e = 2 + static_cast<i64>(rng() % 3);
      if (space * e > (i64{1} << 16)) e = 1;
      sc.extents.push_back(e);
      space *= e;
    }
    sc.a.labels = labels;
    std::shuffle(labels.begin(), labels.end(), rng);
    sc.b.labels = labels;
    sc.a.strides = dense_strides(kerntest::extents_of(sc.a.labels, sc.extents), false);
    sc.b.strides = dense_strides(kerntest::extents_of(sc.b.labels, sc.extents), rng() % 2 == 0);
    check_dot<T>(rng, sc, std::string(kerntest::type_name<T>()) + " permuted #" + std::to_string(c), st);
    if (::testing::Test::HasFailure()) return;
    // The same record term by term.
    const lowered_step l = kerntest::lower(sc);
    full_dot_record r;
    ASSERT_TRUE(describe_full_dot(l, r));
    if (r.tile_n == 0) continue;
    const std::vector<T> a = kerntest::random_operand<T>(rng, sc.a, sc.extents, guards);
    const std::vector<T> b = kerntest::random_operand<T>(rng, sc.b, sc.extents, guards);
    T tiled{}, by_term{}, want{};
    evaluate_full_dot<T>(r, a.data(), b.data(), &tiled);
    r.tile_n = 0;
    evaluate_full_dot<T>(r, a.data(), b.data(), &by_term);
    evaluate_lowered<T>(l, a.data(), b.data(), &want);
    const double scale = static_cast<double>(r.count) * kerntest::eps_of<T>() * 4.0;
    double mag = 0;
    for (std::size_t i = 0; i + guards < a.size(); ++i) mag = std::max(mag, kerntest::magnitude(a[i]));
    for (std::size_t i = 0; i + guards < b.size(); ++i) mag = std::max(mag, kerntest::magnitude(b[i]));
    EXPECT_LE(kerntest::magnitude(tiled - want), scale * mag * mag * static_cast<double>(r.count));
    EXPECT_LE(kerntest::magnitude(by_term - want), scale * mag * mag * static_cast<double>(r.count));
  }
}

TEST(FullDot, RandomPermutedDotsTiled) {
  const std::uint64_t seed = 5550123;
  std::printf("[full dot] permuted: seed %llu (+0..3 by dtype), 40 dots per dtype\n", static_cast<unsigned long long>(seed));
  dot_stats st;
  for_each_dtype(seed, [&](auto tag, std::uint64_t s) { random_permuted_dots<decltype(tag)>(s, 40, st); });
  std::printf("[full dot] permuted: %d checked, %d tiled\n", st.checked, st.tiled);
  EXPECT_GT(st.tiled, 40) << "the tiled indexing must be exercised";
}

TEST(FullDot, LargeStepsAndTheirGrid) {
  // 2^20 terms, the size of regular3-n130's last step: dense and alike, so term i is element i.
  full_dot_record r;
  ASSERT_TRUE(describe_full_dot(dot_step(20, 2, false), r));
  EXPECT_EQ(r.count, i64{1} << 20);
  EXPECT_EQ(r.contiguous, 1);
  EXPECT_EQ(r.pow2, 1);
  EXPECT_EQ(r.blocks, std::min<i64>((i64{1} << 20) / (full_dot_threads * full_dot_terms_per_thread), full_dot_max_blocks));
  // B's modes in the other order: not contiguous, and term i reads B at the reversed digits. Tiles
  // of A's 5 fastest modes and B's 5 fastest (A's 5 slowest): 1024 terms, 1024 tiles.
  ASSERT_TRUE(describe_full_dot(dot_step(20, 2, true), r));
  EXPECT_EQ(r.contiguous, 0);
  std::int64_t ao = 0, bo = 0;
  full_dot_offsets(r, 1, ao, bo);
  EXPECT_EQ(ao, 1);
  EXPECT_EQ(bo, i64{1} << 19);
  EXPECT_EQ(r.tile_n, 10);
  EXPECT_EQ(r.tile_count, 1024);
  EXPECT_EQ(r.outer_count, 1024);
  EXPECT_EQ(r.blocks, full_dot_tile_blocks);
  check_tiles(r);
  // Its launches: in f32 groups of 4 tiles (16 KiB of B), one a block; in f64 and c64 groups of 2 on
  // 264 blocks; in c128 one tile at a time.
  EXPECT_EQ(full_dot_grid_of(r, 4).group, 4);
  EXPECT_EQ(full_dot_grid_of(r, 4).blocks, 256);
  EXPECT_EQ(full_dot_grid_of(r, 8).group, 2);
  EXPECT_EQ(full_dot_grid_of(r, 8).blocks, full_dot_tile_blocks);
  EXPECT_EQ(full_dot_grid_of(r, 16).group, 1);
  EXPECT_EQ(full_dot_grid_of(r, 16).blocks, full_dot_tile_blocks);
  // 3^14 terms: the division decode; tiles of 3^4 (A's fastest 81) and 3^4 (B's): 6561 terms, too
  // many for a tile, so term by term on a grid of at most full_dot_max_blocks.
  ASSERT_TRUE(describe_full_dot(dot_step(14, 3, true), r));
  EXPECT_EQ(r.pow2, 0);
  EXPECT_EQ(r.count, 4782969);
  EXPECT_EQ(r.tile_n, 0);
  EXPECT_EQ(r.blocks, full_dot_max_blocks);
  // A small one: one block.
  ASSERT_TRUE(describe_full_dot(dot_step(3, 2, false), r));
  EXPECT_EQ(r.blocks, 1);
  EXPECT_EQ(full_dot_grid_of(r, 4).group, 1) << "untiled: the record's grid";
  EXPECT_EQ(full_dot_grid_of(r, 4).blocks, 1);
  // The host evaluator on the reversed step against evaluate_lowered, in f64: tiled, then term by term.
  const lowered_step l = dot_step(14, 2, true);
  ASSERT_TRUE(describe_full_dot(l, r));
  EXPECT_EQ(r.tile_count, 1024);
  EXPECT_EQ(r.outer_count, 16);
  std::vector<double> a(16384), b(16384);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 1.0 + static_cast<double>(i % 7);
    b[i] = 0.5 - static_cast<double>(i % 5);
  }
  double got = 0, want = 0;
  evaluate_full_dot<double>(r, a.data(), b.data(), &got);
  evaluate_lowered<double>(l, a.data(), b.data(), &want);
  EXPECT_EQ(got, want) << "integer-valued terms: exact in any order";
  r.tile_n = 0;
  evaluate_full_dot<double>(r, a.data(), b.data(), &got);
  EXPECT_EQ(got, want);
}

TEST(FullDot, SwizzleIsAPermutationOfEachRow) {
  // A group's slots in shared memory (full_dot_swizzle): each 128-byte row of slots maps onto
  // itself one to one, so the group's share stays inside full_dot_group_bytes; a row's worth of
  // stores one row apart fall in as many banks (k rows apart: in 1/k as many); a warp reading
  // consecutive slots reads one row.
  for (const int bytes : {4, 8, 16}) {
    const int slots = full_dot_group_bytes / bytes, row = 128 / bytes;
    std::vector<int> seen(static_cast<std::size_t>(slots), 0);
    for (int s = 0; s < slots; ++s) {
      const int w = full_dot_swizzle(s, bytes);
      ASSERT_GE(w, 0);
      ASSERT_LT(w, slots);
      EXPECT_EQ(w / row, s / row) << "slot " << s << " left its row (" << bytes << "-byte elements)";
      ++seen[static_cast<std::size_t>(w)];
    }
    for (int c : seen) EXPECT_EQ(c, 1) << bytes << "-byte elements";
    for (const int stride : {row, 2 * row, 4 * row}) {  // stores one row apart or more
      std::vector<int> banks;
      for (int k = 0; k < row; ++k) banks.push_back(full_dot_swizzle(k * stride, bytes) % row);
      std::sort(banks.begin(), banks.end());
      EXPECT_EQ(std::unique(banks.begin(), banks.end()) - banks.begin(), row / (stride / row))
          << "stride " << stride << ", " << bytes << "-byte elements";
    }
  }
}

TEST(FullDot, RefusesWhatIsNoFullDot) {
  full_dot_record r;
  r.n = -7;  // untouched on refusal
  lowered_step l = dot_step(4, 2, false);
  l.d.modes = {0};
  l.d.extents = {2};
  EXPECT_FALSE(describe_full_dot(l, r)) << "a result of two elements";
  l = dot_step(4, 2, false);
  l.kind = lowered_kind::reduction;
  EXPECT_FALSE(describe_full_dot(l, r)) << "a unary step";
  EXPECT_FALSE(describe_full_dot(dot_step(full_dot_max_modes + 1, 2, false), r)) << "too many modes";
  EXPECT_EQ(r.n, -7);
  EXPECT_TRUE(describe_full_dot(dot_step(full_dot_max_modes, 1, false), r)) << "extent-1 modes do not count";
  EXPECT_EQ(r.n, 0);
  EXPECT_EQ(r.count, 1);
}

}  // namespace
}  // namespace tnrt
