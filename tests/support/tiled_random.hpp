#pragma once
// Random material for the tests of the tiled streaming kernel (src/core/tiled.hpp): random Big x
// Small steps with every role (free, batch, s_free, contracted, one-sided sums), diagonals and
// random layouts; steps shaped like the reference network's large steps (all extents 2, Big and D
// column-major, Small's modes scattered through Big); and the record checks shared by the host
// test (tests/unit/test_tiled.cpp) and the GPU test (tests/gpu/test_cuda_tiled.cpp).
// Header-only, on top of tests/support/kernel_random.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/step_lowering.hpp"
#include "core/tiled.hpp"
#include "core/tiled_index.hpp"
#include "support/kernel_random.hpp"

namespace tnrt::kerntest {

/// What describe_tiled should conclude, from the roles alone (extent-1 modes count as 1).
struct tiled_expectation {
  i64 d_elements = 1;
  i64 big_elements = 1;  // distinct labels of Big (a diagonal counts once)
  i64 inner_big = 1;     // batch and contracted modes of Big: the slab's fixed part
  i64 inner_d = 1;       // batch and s_free modes: D tile's fixed part
  i64 k_count = 1;       // every contracted mode, one-sided sums included
  i64 small_span = 1;
  bool one_sided = false, diagonal = false, batch = false;
};

/// Label counts and extents of a random tiled step.
struct tiled_gen {
  i64 max_big = 1 << 15;       // Big's elements
  i64 max_space = 1 << 18;     // the iteration space (every label's extent)
  i64 max_small = 1 << 11;     // Small's elements
  int percent_large_free = 20;  // a free mode takes a large extent (16 .. 128, some prime)
  int percent_diagonal = 6;
  /// Steps for run_table (f32 plans with 8 to 64 contracted combinations): one to three s_free
  /// modes, two to four contracted ones, no one-sided sums, diagonals or extent-1 modes.
  bool table_like = false;
};

namespace detail {
inline bool contains(const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace detail

/// A random step D = Big x Small: Small (lhs or rhs at random) with s_free, batch and contracted
/// modes, Big with free, batch and contracted modes, labels summed out of Big only or Small only,
/// occasional diagonals, random layouts (row/column-major, permuted, padded). Small has fewer
/// elements than Big in the lowered form, so it is the operand describe_tiled stages.
inline step_case random_tiled_step(std::mt19937_64& rng, tiled_expectation& ex, const tiled_gen& g = {}) {
  static constexpr i64 large[] = {16, 24, 32, 48, 64, 96, 128, 67, 100, 37};
  for (;;) {
    step_case s;
    const bool tl = g.table_like;
    const int n_free = static_cast<int>(rng() % 6) + (tl ? 1 : 0);
    const int n_batch = static_cast<int>(rng() % (tl ? 2 : 3));
    const int n_sfree = static_cast<int>(rng() % (tl ? 3 : 4)) + (tl ? 1 : 0);
    const int n_con = static_cast<int>(rng() % (tl ? 3 : 4)) + (tl ? 2 : 0);
    const int n_sum_big = !tl && rng() % 4 == 0 ? 1 : 0;
    const int n_sum_small = !tl && rng() % 4 == 0 ? 1 : 0;
    const int n = n_free + n_batch + n_sfree + n_con + n_sum_big + n_sum_small;
    std::vector<label_t> pool(static_cast<std::size_t>(n));
    std::iota(pool.begin(), pool.end(), label_t{0});
    std::shuffle(pool.begin(), pool.end(), rng);
    s.extents.assign(static_cast<std::size_t>(n), 1);
    std::vector<label_t> big, small, d;
    tiled_expectation e;
    i64 space = 1, small_elems = 1;
    std::size_t next = 0;
    auto pick = [&](i64 lo, i64 hi) { return lo + static_cast<i64>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); };
    auto take = [&](int count, bool in_big, bool in_small, bool in_d, auto extent_of) {
      for (int i = 0; i < count; ++i) {
        const label_t l = pool[next++];
        const i64 x = !g.table_like && rng() % 8 == 0 ? 1 : extent_of();
        s.extents[static_cast<std::size_t>(l)] = x;
        space *= x;
        if (in_big) {
          e.big_elements *= x;
          for (int r = multiplicity(rng, g.percent_diagonal); r > 0; --r) big.push_back(l);
        }
        if (in_small) {
          small_elems *= x;
          for (int r = multiplicity(rng, g.percent_diagonal); r > 0; --r) small.push_back(l);
        }
        if (in_d) {
          d.push_back(l);
          e.d_elements *= x;
        }
        if (in_big && !in_d) e.inner_big *= x;              // contracted or summed in Big
        if (in_big && in_small && in_d) e.inner_big *= x;   // batch
        if (in_d && in_small) e.inner_d *= x;               // batch, s_free
        if (!in_d) e.k_count *= x;                          // every contracted mode
        if (!in_d && in_big != in_small && x > 1) e.one_sided = true;
        if (in_big && in_small && in_d && x > 1) e.batch = true;
      }
    };
    take(n_free, true, false, true, [&] { return static_cast<int>(rng() % 100) < g.percent_large_free ? large[rng() % std::size(large)] : pick(2, 9); });
    take(n_batch, true, true, true, [&] { return pick(2, 4); });
    take(n_sfree, false, true, true, [&] { return pick(2, 6); });
    take(n_con, true, true, false, [&] { return pick(2, 6); });
    take(n_sum_big, true, false, false, [&] { return pick(2, 3); });
    take(n_sum_small, false, true, false, [&] { return pick(2, 3); });
    if (e.big_elements > g.max_big || space > g.max_space || small_elems > g.max_small) continue;
    if (g.table_like && (e.k_count < 8 || e.k_count > 64)) continue;
    auto has_repeat = [](std::vector<label_t> v) {
      std::sort(v.begin(), v.end());
      return std::adjacent_find(v.begin(), v.end()) != v.end();
    };
    e.diagonal = has_repeat(big) || has_repeat(small);
    if (!place_big_small(rng, s, big, small, d)) continue;
    e.small_span = span_of(s.small_side == 0 ? s.a : s.b, s.extents);
    ex = e;
    return s;
  }
}

/// A step shaped like the reference network's large steps: every extent 2, Big of rank `big_rank`
/// column-major, Small of rank `small_rank` (s_free, batch and contracted modes, at least one of
/// the two latter) whose batch and contracted modes sit at random positions of Big; D column-major
/// with Small's s_free modes first, then Big's free modes in Big's order, then the batch modes.
/// `small_side`: 0 Small is lhs, 1 rhs.
inline step_case reference_like_step(std::mt19937_64& rng, int big_rank, int small_rank, int small_side, tiled_expectation& ex) {
  step_case s;
  const int n_shared = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(small_rank - 1));  // batch + contracted, in Big
  const int n_sfree = small_rank - n_shared;
  const int n_batch = static_cast<int>(rng() % static_cast<std::uint64_t>(n_shared + 1));
  const int n_con = n_shared - n_batch;
  const int n_free = big_rank - n_shared;
  const int n = big_rank + n_sfree;
  s.extents.assign(static_cast<std::size_t>(n), 2);
  std::vector<label_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), label_t{0});
  std::shuffle(ids.begin(), ids.end(), rng);  // labels are arbitrary numbers
  std::size_t next = 0;
  std::vector<label_t> free_l, batch_l, con_l, sfree_l;
  for (int i = 0; i < n_free; ++i) free_l.push_back(ids[next++]);
  for (int i = 0; i < n_batch; ++i) batch_l.push_back(ids[next++]);
  for (int i = 0; i < n_con; ++i) con_l.push_back(ids[next++]);
  for (int i = 0; i < n_sfree; ++i) sfree_l.push_back(ids[next++]);
  // Big: the free modes in order, the shared modes inserted at random positions.
  std::vector<label_t> big = free_l;
  for (label_t l : batch_l) big.insert(big.begin() + static_cast<std::ptrdiff_t>(rng() % (big.size() + 1)), l);
  for (label_t l : con_l) big.insert(big.begin() + static_cast<std::ptrdiff_t>(rng() % (big.size() + 1)), l);
  std::vector<label_t> small = sfree_l;
  small.insert(small.end(), batch_l.begin(), batch_l.end());
  small.insert(small.end(), con_l.begin(), con_l.end());
  std::shuffle(small.begin(), small.end(), rng);
  std::vector<label_t> d = sfree_l;
  for (label_t l : big)
    if (detail::contains(free_l, l)) d.push_back(l);
  d.insert(d.end(), batch_l.begin(), batch_l.end());
  s.a.labels = small_side == 0 ? small : big;
  s.b.labels = small_side == 0 ? big : small;
  s.d.labels = d;
  s.small_side = small_side;
  for (operand_case* o : {&s.a, &s.b, &s.d}) {
    o->layout = layout_kind::column_major;
    o->strides = dense_strides(extents_of(o->labels, s.extents), true);
  }
  tiled_expectation e;
  e.d_elements = i64{1} << d.size();
  e.big_elements = i64{1} << big.size();
  e.inner_big = i64{1} << n_shared;
  e.inner_d = i64{1} << (n_sfree + n_batch);
  e.k_count = i64{1} << n_con;
  e.small_span = i64{1} << small_rank;
  e.batch = n_batch > 0;
  ex = e;
  return s;
}

/// The most results one tile may hold under `lim` for this element size and number of contracted
/// combinations (each thread keeps its results' Small coefficients in registers: tiled_outputs).
/// (Threads of the run_coefs layout hold tiled_vec_d times as many: tiled_outputs_for.)
inline i64 max_tile_d_of(const tiled_limits& lim, std::size_t element_bytes, i64 k_count, std::int32_t vec_kind = tiled_scalar) {
  return std::min<i64>(lim.max_tile_d, i64{tiled_threads} * tiled_outputs_for(element_bytes, tiled_k_max(k_count), vec_kind));
}

/// Whether a tile of `free` elements of free modes (times the inner parts) fits the caps and the
/// shared memory (tiled_shared_bytes, which tiled_record::shared_bytes uses too).
inline bool tile_fits(const tiled_expectation& e, i64 free, std::size_t element_bytes, const tiled_limits& lim) {
  const i64 tb = e.inner_big * free, td = e.inner_d * free;
  if (tb > tiled_max_tile_big(element_bytes) || td > max_tile_d_of(lim, element_bytes, e.k_count)) return false;
  return tiled_shared_bytes(tb, 1, e.small_span, element_bytes) <= static_cast<std::size_t>(lim.max_shared_bytes);
}

/// Necessary conditions of describe_tiled's limits, from the roles alone: when this is false the
/// step must be refused. (A step meeting them may still be refused, e.g. for too many modes.)
inline bool within_tiled_limits(const tiled_expectation& e, std::size_t element_bytes, const tiled_limits& lim) {
  const auto eb = static_cast<i64>(element_bytes);
  if (e.small_span * eb > lim.max_small_bytes || e.small_span > 0xFFFF) return false;
  if (e.d_elements < lim.min_d_elements) return false;
  if (e.k_count > tiled_max_k_for(element_bytes)) return false;
  return tile_fits(e, 1, element_bytes, lim);  // the smallest tile: no free mode in it
}

/// Product of the leading entries whose stride equals the running product: the length of the
/// contiguous run those entries cover.
inline i64 leading_dense_run(const std::int32_t* extent, const std::int32_t* stride, int n) {
  i64 run = 1;
  for (int i = 0; i < n; ++i) {
    if (stride[i] != run) break;
    run *= extent[i];
  }
  return run;
}

/// Record invariants that need no memory: the lists' products, the outer divisors, the caps and
/// the shared memory, against the expectation.
inline void check_tiled_shape(const tiled_record& r, const tiled_expectation& e, std::size_t element_bytes, const tiled_limits& lim) {
  ASSERT_GE(r.n_big, 0);
  ASSERT_LE(r.n_big, tiled_max_modes);
  ASSERT_GE(r.n_d, 0);
  ASSERT_LE(r.n_d, tiled_max_modes);
  ASSERT_GE(r.n_k, 0);
  ASSERT_LE(r.n_k, tiled_max_modes);
  ASSERT_GE(r.n_outer, 0);
  ASSERT_LE(r.n_outer, tiled_max_outer);
  i64 p = 1;
  for (int i = 0; i < r.n_big; ++i) {
    EXPECT_GE(r.big_extent[i], 2) << "slab entry " << i << ": extent-1 entries are useless";
    EXPECT_GT(r.big_stride[i], 0) << "slab entry " << i;
    p *= r.big_extent[i];
  }
  EXPECT_EQ(p, r.tile_big) << "product of big_extent";
  p = 1;
  for (int i = 0; i < r.n_d; ++i) {
    EXPECT_GE(r.d_extent[i], 2) << "D entry " << i;
    EXPECT_GT(r.d_stride[i], 0) << "D entry " << i;
    p *= r.d_extent[i];
  }
  EXPECT_EQ(p, r.tile_d) << "product of d_extent";
  p = 1;
  for (int i = 0; i < r.n_k; ++i) {
    EXPECT_GE(r.k_extent[i], 2) << "k entry " << i;
    p *= r.k_extent[i];
  }
  EXPECT_EQ(p, r.k_count) << "product of k_extent";
  p = 1;
  for (int i = 0; i < r.n_outer; ++i) {
    EXPECT_EQ(r.outer_div[i], p) << "outer_div[" << i << "] is not the prefix product";
    EXPECT_GE(r.outer_extent[i], 2) << "outer group " << i;
    EXPECT_GT(r.outer_big[i], 0) << "outer group " << i;
    EXPECT_GT(r.outer_d[i], 0) << "outer group " << i;
    p *= r.outer_extent[i];
  }
  EXPECT_EQ(p, r.tile_count) << "product of outer_extent";
  EXPECT_LE(r.tile_big, tiled_max_tile_big(element_bytes));
  EXPECT_LE(r.tile_d, max_tile_d_of(lim, element_bytes, r.k_count, r.vec_kind));
  EXPECT_LE(r.k_count, tiled_max_k_for(element_bytes));
  EXPECT_LE(r.tile_count, i64{std::numeric_limits<std::int32_t>::max()}) << "the kernel numbers tiles in 32 bits";
  // Tiles grouped per pipeline stage: at least one, no more than there are tiles, and more than one
  // only while the group's slabs stay within stage_bytes.
  EXPECT_GE(r.group, 1);
  EXPECT_LE(r.group, std::max<i64>(1, r.tile_count));
  EXPECT_LE(r.group, tiled_max_group);
  if (r.group > 1) {
    EXPECT_LE(i64{r.group} * r.tile_big * static_cast<i64>(element_bytes), lim.stage_bytes) << "group " << r.group;
  }
  EXPECT_LE(r.shared_bytes(element_bytes), static_cast<std::size_t>(lim.max_shared_bytes));
  EXPECT_EQ(r.small_span, e.small_span);
  EXPECT_EQ(r.k_count, e.k_count);
  // The tile: inner part times the free modes taken (the same on both sides).
  EXPECT_EQ(r.tile_big % e.inner_big, 0) << "tile_big " << r.tile_big << " inner_big " << e.inner_big;
  EXPECT_EQ(r.tile_d % e.inner_d, 0) << "tile_d " << r.tile_d << " inner_d " << e.inner_d;
  EXPECT_EQ(r.tile_big / e.inner_big, r.tile_d / e.inner_d) << "Big's and D's tiles take different free modes";
  EXPECT_EQ(r.tile_count * r.tile_d, e.d_elements) << "tiles x tile_d must cover D";
  EXPECT_EQ(r.tile_count * r.tile_big, e.big_elements) << "tiles x tile_big must cover Big";
}

/// Vector copies of Big (vec elements each, 16 bytes): allowed only where every group of vec slab
/// slots is vec contiguous elements of Big at a 16-byte aligned address in every tile (the slab's
/// offsets, the outer strides and the base all multiples of vec).
inline void check_tiled_vec(const tiled_record& r, std::size_t element_bytes) {
  const i64 v = r.vec;
  ASSERT_TRUE(v == 1 || v * static_cast<i64>(element_bytes) == 16) << "vec " << v << " for elements of " << element_bytes << " bytes";
  if (v == 1) return;
  ASSERT_EQ(r.tile_big % v, 0) << "vec " << v;
  for (std::int32_t j = 0; j < r.tile_big; j += static_cast<std::int32_t>(v)) {
    const std::int32_t base = tiled_index::big_offset(r, j);
    ASSERT_EQ(base % v, 0) << "slot " << j << ": offset " << base << " breaks the vector alignment";
    for (std::int32_t i = 1; i < v; ++i) ASSERT_EQ(tiled_index::big_offset(r, j + i), base + i) << "slots " << j << ".." << j + v - 1 << " are not contiguous";
  }
  for (int g = 0; g < r.n_outer; ++g) ASSERT_EQ(r.outer_big[g] % v, 0) << "outer group " << g << ": Big stride " << r.outer_big[g];
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(r.big) % 16, 0U) << "Big's base is not 16-byte aligned";
}

/// Vector layouts of a thread's results (tiled_vec_kind): only under vector_results, only with
/// 16 bytes' worth of results per vector, and what the kernel assumes of every run of vec_d results
/// e0 .. e0 + vec_d - 1 (e0 a multiple of vec_d) holds: D offsets off(e0) + u with off(e0) a
/// multiple of vec_d in every tile; run_values: slots slot(e0) + vec_slot[u]; run_coefs: slots
/// slot(e0) + u (a multiple of vec_d, and so is every contracted slot), one Small offset. 16-byte
/// stores (vec_store) only from a 16-byte aligned D.
inline void check_tiled_vec_results(const tiled_record& r, std::size_t element_bytes, const tiled_limits& lim) {
  if (r.vec_kind == tiled_scalar) {
    EXPECT_EQ(r.vec_d, 1);
    EXPECT_EQ(r.vec_store, 0);
    return;
  }
  ASSERT_TRUE(lim.vector_results) << "vector layout " << r.vec_kind << " though the limits ask for scalar results";
  ASSERT_TRUE(r.vec_kind == tiled_run_values || r.vec_kind == tiled_run_coefs || r.vec_kind == tiled_run_table) << "vec_kind " << r.vec_kind;
  if (r.vec_kind == tiled_run_table) {
    ASSERT_TRUE(lim.table_results) << "run_table though the limits do not ask for it";
    // The table: a row for every combination of D's modes that Small has, weights the prefix
    // products of those modes' extents; Small's offset of every entry of D's tile is its row's
    // plus nothing else (the kernel reads coefficients only from the table).
    i64 rows = 1;
    for (int j = 0; j < r.n_d; ++j) {
      if (r.d_small[j] == 0) {
        EXPECT_EQ(r.d_row[j], 0) << "D entry " << j << " is absent from Small but has a table weight";
        continue;
      }
      EXPECT_EQ(r.d_row[j], rows) << "D entry " << j;
      rows *= r.d_extent[j];
    }
    ASSERT_EQ(rows, r.table_rows);
    EXPECT_LE(rows * tiled_k_max(r.k_count), tiled_max_table);
    const std::int32_t km = tiled_k_max(r.k_count);
    for (std::int32_t e = 0; e < r.tile_d; ++e) {
      std::int32_t off = 0;
      std::uint32_t p = 0;
      tiled_index::d_entry(r, e, off, p);
      const std::int32_t row = tiled_index::table_row(r, e);
      ASSERT_LT(row, r.table_rows);
      for (std::int32_t k = 0; k < km; ++k) {
        const std::int32_t at = tiled_index::table_entry(r, row * km + k, km);
        if (k >= r.k_count) {
          ASSERT_EQ(at, -1);
        } else {
          ASSERT_EQ(at, static_cast<std::int32_t>((p >> 16U) + (r.k_pack[k] >> 16U))) << "result " << e << ", combination " << k;
        }
      }
    }
  } else {
    EXPECT_EQ(r.table_rows, 0);
  }
  const std::int32_t v = r.vec_d;
  ASSERT_EQ(static_cast<std::size_t>(v) * element_bytes, 16U) << "vec_d " << v;
  ASSERT_EQ(r.tile_d % v, 0);
  EXPECT_EQ(r.vec_store, reinterpret_cast<std::uintptr_t>(r.d) % 16 == 0 ? 1 : 0) << "16-byte stores exactly when D is aligned";
  if (r.vec_kind == tiled_run_values || r.vec_kind == tiled_run_table) {
    ASSERT_EQ(tiled_outputs_for(element_bytes, tiled_k_max(r.k_count), r.vec_kind) % v, 0) << "a thread's results must be whole vectors";
    // The kernel loads a result's values as vectors when k_dense: every offset keeps that alignment.
    if (r.k_dense != 0) {
      for (std::int32_t u = 0; u < v; ++u) ASSERT_EQ(r.vec_slot[u] % r.k_count, 0) << "vec_slot[" << u << "] " << r.vec_slot[u];
    }
  } else {
    ASSERT_EQ(r.tile_big % v, 0);
    for (std::int32_t k = 0; k < r.k_count; ++k) ASSERT_EQ((tiled_index::k_entry(r, k) & 0xFFFFU) % static_cast<std::uint32_t>(v), 0U) << "k " << k;
  }
  for (int g = 0; g < r.n_outer; ++g) ASSERT_EQ(r.outer_d[g] % v, 0) << "outer group " << g << ": D stride " << r.outer_d[g];
  for (std::int32_t e0 = 0; e0 < r.tile_d; e0 += v) {
    std::int32_t off0 = 0;
    std::uint32_t p0 = 0;
    tiled_index::d_entry(r, e0, off0, p0);
    ASSERT_EQ(off0 % v, 0) << "result " << e0 << ": D offset " << off0 << " breaks the 16-byte alignment";
    if (r.vec_kind == tiled_run_coefs) {
      ASSERT_EQ((p0 & 0xFFFFU) % static_cast<std::uint32_t>(v), 0U) << "result " << e0 << ": slot " << (p0 & 0xFFFFU);
    }
    for (std::int32_t u = 1; u < v; ++u) {
      std::int32_t off = 0;
      std::uint32_t p = 0;
      tiled_index::d_entry(r, e0 + u, off, p);
      ASSERT_EQ(off, off0 + u) << "results " << e0 << ".." << e0 + v - 1 << " are not adjacent in D";
      if (r.vec_kind == tiled_run_values || r.vec_kind == tiled_run_table) {
        ASSERT_EQ(p & 0xFFFFU, (p0 & 0xFFFFU) + static_cast<std::uint32_t>(r.vec_slot[u]))
            << "result " << e0 + u << ": slot not at its run's offset " << r.vec_slot[u];
      } else {
        ASSERT_EQ(p & 0xFFFFU, (p0 & 0xFFFFU) + static_cast<std::uint32_t>(u)) << "result " << e0 + u << ": slot not adjacent";
        ASSERT_EQ(p >> 16U, p0 >> 16U) << "result " << e0 + u << " does not share its run's coefficients";
      }
    }
  }
}

/// Every offset the record forms, through the tiled_index functions: slab slots and Small offsets
/// below tile_big and small_span (and the packed halves agree with an independent decomposition),
/// Big read exactly once per element of Big and nowhere else, D written exactly once per element
/// of D and nowhere else. `big_offsets` / `d_offsets` are all offsets of Big's / D's elements.
inline void check_tiled_offsets(const tiled_record& r, const std::vector<i64>& big_offsets, i64 big_span, const std::vector<i64>& d_offsets,
                                i64 d_span) {
  std::vector<std::uint32_t> k_pack(static_cast<std::size_t>(r.k_count));
  i64 max_k_slot = 0, max_k_small = 0;
  for (std::int32_t k = 0; k < r.k_count; ++k) {
    const std::uint32_t kp = tiled_index::k_entry(r, k);
    k_pack[static_cast<std::size_t>(k)] = kp;
    i64 slot = 0, sm = 0, rest = k;
    for (int i = 0; i < r.n_k; ++i) {
      const i64 x = rest % r.k_extent[i];
      rest /= r.k_extent[i];
      slot += x * r.k_slot[i];
      sm += x * r.k_small[i];
    }
    ASSERT_EQ(static_cast<i64>(kp & 0xFFFFU), slot) << "k entry " << k << ": slot does not fit the packed word";
    ASSERT_EQ(static_cast<i64>(kp >> 16U), sm) << "k entry " << k << ": Small offset does not fit the packed word";
    ASSERT_EQ(r.k_pack[k], kp) << "k entry " << k << ": the record's k table differs from tiled_index::k_entry";
    max_k_slot = std::max(max_k_slot, slot);
    max_k_small = std::max(max_k_small, sm);
  }
  std::vector<std::int32_t> d_off(static_cast<std::size_t>(r.tile_d));
  for (std::int32_t e = 0; e < r.tile_d; ++e) {
    std::uint32_t packed = 0;
    tiled_index::d_entry(r, e, d_off[static_cast<std::size_t>(e)], packed);
    i64 off = 0, slot = 0, sm = 0, rest = e;
    for (int i = 0; i < r.n_d; ++i) {
      const i64 x = rest % r.d_extent[i];
      rest /= r.d_extent[i];
      off += x * r.d_stride[i];
      slot += x * r.d_slot[i];
      sm += x * r.d_small[i];
    }
    ASSERT_EQ(d_off[static_cast<std::size_t>(e)], off) << "D entry " << e;
    ASSERT_EQ(static_cast<i64>(packed & 0xFFFFU), slot) << "D entry " << e << ": slot does not fit the packed word";
    ASSERT_EQ(static_cast<i64>(packed >> 16U), sm) << "D entry " << e << ": Small offset does not fit the packed word";
    ASSERT_LT(slot + max_k_slot, r.tile_big) << "D entry " << e << ": a slot beyond the slab";
    ASSERT_LT(sm + max_k_small, r.small_span) << "D entry " << e << ": a Small offset beyond small_span";
    ASSERT_GE(off, 0);
  }
  std::vector<std::int32_t> big_off(static_cast<std::size_t>(r.tile_big));
  for (std::int32_t j = 0; j < r.tile_big; ++j) big_off[static_cast<std::size_t>(j)] = tiled_index::big_offset(r, j);
  std::vector<int> big_reads(static_cast<std::size_t>(big_span), 0), d_writes(static_cast<std::size_t>(d_span), 0);
  for (i64 t = 0; t < r.tile_count; ++t) {
    i64 ob = 0, od = 0;
    tiled_index::outer_offsets(r, t, ob, od);
    for (std::int32_t o : big_off) {
      const i64 at = ob + o;
      ASSERT_TRUE(at >= 0 && at < big_span) << "tile " << t << ": Big read at " << at << " outside its span " << big_span;
      ++big_reads[static_cast<std::size_t>(at)];
    }
    for (std::int32_t o : d_off) {
      const i64 at = od + o;
      ASSERT_TRUE(at >= 0 && at < d_span) << "tile " << t << ": D written at " << at << " outside its span " << d_span;
      ++d_writes[static_cast<std::size_t>(at)];
    }
  }
  std::vector<char> in_big(static_cast<std::size_t>(big_span), 0), in_d(static_cast<std::size_t>(d_span), 0);
  for (i64 o : big_offsets) in_big[static_cast<std::size_t>(o)] = 1;
  for (i64 o : d_offsets) in_d[static_cast<std::size_t>(o)] = 1;
  int bad = 0;
  for (std::size_t i = 0; i < big_reads.size() && bad < 5; ++i)
    if (big_reads[i] != (in_big[i] != 0 ? 1 : 0)) {
      ADD_FAILURE() << "Big offset " << i << (in_big[i] != 0 ? " (an element)" : " (padding)") << " staged " << big_reads[i] << " times";
      ++bad;
    }
  for (std::size_t i = 0; i < d_writes.size() && bad < 5; ++i)
    if (d_writes[i] != (in_d[i] != 0 ? 1 : 0)) {
      ADD_FAILURE() << "D offset " << i << (in_d[i] != 0 ? " (an element)" : " (padding)") << " written " << d_writes[i] << " times";
      ++bad;
    }
}

inline std::string describe(const tiled_record& r) {
  std::ostringstream os;
  os << "tile_count " << r.tile_count << " tile_big " << r.tile_big << " tile_d " << r.tile_d << " k_count " << r.k_count << " small_span " << r.small_span
     << " vec " << r.vec << " group " << r.group << " vec_kind " << r.vec_kind << " vec_d " << r.vec_d << " vec_store " << r.vec_store
     << "\n    slab (extent/stride):";
  for (int i = 0; i < r.n_big; ++i) os << " " << r.big_extent[i] << "/" << r.big_stride[i];
  os << "\n    D tile (extent/stride/slot/small):";
  for (int i = 0; i < r.n_d; ++i) os << " " << r.d_extent[i] << "/" << r.d_stride[i] << "/" << r.d_slot[i] << "/" << r.d_small[i];
  os << "\n    k (extent/slot/small):";
  for (int i = 0; i < r.n_k; ++i) os << " " << r.k_extent[i] << "/" << r.k_slot[i] << "/" << r.k_small[i];
  os << "\n    outer (extent/div/big/d):";
  for (int i = 0; i < r.n_outer; ++i) os << " " << r.outer_extent[i] << "/" << r.outer_div[i] << "/" << r.outer_big[i] << "/" << r.outer_d[i];
  return os.str();
}

}  // namespace tnrt::kerntest
