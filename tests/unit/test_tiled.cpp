// The tiled streaming kernel's plan and arithmetic (src/core/tiled.hpp), on the host:
//  - describe_tiled + evaluate_tiled against evaluate_lowered (the trusted reference) on many random
//    Big x Small steps (fixed, logged seeds) in all four dtypes: Small lhs or rhs, free, batch,
//    s_free and contracted modes, labels summed out of Big only or Small only, occasional
//    diagonals, free modes of large (some prime) extents, row/column-major, permuted and padded
//    layouts; each step under several limits (min_contig_bytes 4 / 256 / 4096, min_tile_d 1 / 64 /
//    1024, a small max_tile_d, a small max_shared_bytes) with min_d_elements 1. Errors per element
//    within 2 (N + 2) eps sum|terms|. Operands are allocated as their span followed by NaN guards
//    (their padding NaN too); D's padding and guards hold a sentinel that must survive. Steps the
//    roles put outside the limits must be refused and the record left untouched.
//  - every accepted record: the lists' products (tile_big, tile_d, k_count, tile_count), the
//    outer divisors, the caps (tiled_max_tile_big, max_tile_d and threads x tiled_outputs,
//    tiled_max_k_for, max_shared_bytes by shared_bytes, tile_count in 32 bits, group within
//    stage_bytes), Big's and D's tiles taking the same free modes, the k table equal to
//    tiled_index::k_entry, vector copies (vec) only where each group of vec slots is vec contiguous,
//    16-byte aligned elements in every tile (and never for operands one element off alignment); through the tiled_index functions, every slab slot below
//    tile_big and Small offset below small_span (and the packed halves exact), Big staged exactly
//    once per element and never outside it, D written exactly once per element and never its
//    padding.
//  - coalescing: steps shaped like the reference network's large steps (extents 2, Big rank ~20
//    column-major, Small rank 4..9 with batch and contracted modes anywhere in Big, D with the
//    s_free modes first) under the default limits: the slab's and D tile's leading entries form
//    contiguous runs of at least min_contig_bytes. The reference network's steps 303, 373, 302,
//    388, 364, 387, 312 and 301 at full size (rank 25..28, dry runs), and step 303 at a reduced
//    rank evaluated numerically.
//    Where no tile within the limits can reach a run (e.g. step 301: 256 results per free
//    combination leave room for 16 of the 32 Big needs), only the reachable one is required, and
//    the tile must still grow to min_tile_d unless one more free mode breaks a limit.
//  - refusals: unary reductions, Small over max_small_bytes or 0xFFFF elements, D under
//    min_d_elements, k_count over tiled_max_k, batch/contracted parts over the caps, D tile's
//    fixed part over max_tile_d or tiled_threads x tiled_outputs_per_thread, negative strides,
//    more than tiled_max_outer outer groups (contiguous ones merged); the record untouched. Strides
//    of 2^31 inside a tile refused or kept exactly, outside it kept in 64 bits.
//  - planning time: a free mode of extent 2^30 is planned in well under 0.1 s (describe_tiled runs
//    for every step of every eager call).
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/step_lowering.hpp"
#include "core/tiled.hpp"
#include "core/tiled_index.hpp"
#include "support/kernel_random.hpp"
#include "support/tiled_random.hpp"

namespace tnrt {
namespace {

using kerntest::i64;

constexpr std::size_t guards = 8;

// The limit sets every random step is planned under (min_d_elements 1 so small steps qualify).
struct named_limits {
  const char* name;
  tiled_limits lim;
};
const named_limits limit_sets[] = {
    {"contig 256, tile_d >= 64", tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024}},
    {"contig 4, tile_d >= 1", tiled_limits{48 * 1024, 1, 4, 1, 8192, 96 * 1024}},
    {"contig 4096, tile_d >= 1024", tiled_limits{48 * 1024, 1, 4096, 1024, 8192, 96 * 1024}},
    {"contig 256, max_tile_d 256", tiled_limits{48 * 1024, 1, 256, 1024, 256, 96 * 1024}},
    {"contig 64, shared 12 KiB", tiled_limits{8 * 1024, 1, 64, 1, 8192, 12 * 1024}},
    {"contig 256, contracted first", tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, true}},
    {"contig 4, contracted first, small stages", tiled_limits{48 * 1024, 1, 4, 1, 8192, 96 * 1024, 2 * 1024, true}},
    {"contig 256, scalar results", tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, false, false}},
    {"contig 256, D's leading modes first", tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, false, true, true}},
    {"contig 256, coefficients from a table", tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, false, true, false, true}},
    {"contig 4, contracted first, table, small stages", tiled_limits{48 * 1024, 1, 4, 1, 8192, 96 * 1024, 2 * 1024, true, true, false, true}},
};

struct tiled_stats {
  int steps = 0, accepted = 0, refused_expected = 0, refused_within = 0;
  int multi_tile = 0, split = 0, small_is_rhs = 0, batch = 0, one_sided = 0, diagonal = 0, contracted = 0, vector_copies = 0, grouped = 0, partial_group = 0;
  int run_values = 0, run_coefs = 0, d_first_coefs = 0, run_table = 0;
};

// The lowered operand without its stride-0 (broadcast) modes: the elements it really holds.
std::vector<i64> element_offsets(const strided_operand& o) {
  std::vector<i64> e, s;
  for (std::size_t i = 0; i < o.modes.size(); ++i)
    if (o.strides[i] != 0) {
      e.push_back(o.extents[i]);
      s.push_back(o.strides[i]);
    }
  return kerntest::all_offsets(e, s);
}

// A tile free mode taken in part: some slab extent is not the extent of any mode of Big.
bool has_split(const tiled_record& r, const strided_operand& big) {
  for (int i = 0; i < r.n_big; ++i) {
    bool whole = false;
    for (std::size_t m = 0; m < big.modes.size(); ++m)
      if (big.strides[m] == r.big_stride[i] && big.extents[m] == r.big_extent[i]) whole = true;
    if (!whole) return true;
  }
  return false;
}

template <class T>
void check_tiled_step(std::mt19937_64& rng, const kerntest::step_case& sc, const kerntest::tiled_expectation& ex, const std::string& where,
                      tiled_stats& st) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const kerntest::step_data<T> sd = kerntest::make_step_data<T>(rng, sc, l, guards);
  const std::vector<T>& a = sd.a;
  const std::vector<T>& b = sd.b;
  const std::vector<T>& want = sd.want;
  const std::size_t span_a = sd.span_a, span_b = sd.span_b, span_d = sd.span_d;
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a, b, span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  const strided_operand& big_l = sc.small_side == 0 ? l.b : l.a;
  const std::vector<i64> big_offsets = element_offsets(big_l);
  const std::vector<i64> d_offsets = element_offsets(l.d);
  const void* small_ptr = sd.small;
  const void* big_ptr = sd.big;
  ++st.steps;
  for (const named_limits& nl : limit_sets) {
    SCOPED_TRACE(std::string("limits: ") + nl.name);
    std::vector<T> got(span_d + guards, kerntest::sentinel_value<T>());
    tiled_record r;
    r.n_big = -5;
    const bool fit = describe_tiled(l, sizeof(T), a.data(), b.data(), got.data(), r, nl.lim);
    if (!kerntest::within_tiled_limits(ex, sizeof(T), nl.lim)) {
      EXPECT_FALSE(fit) << "outside the limits: small span " << ex.small_span << " D " << ex.d_elements << " inner_big " << ex.inner_big << " inner_d "
                        << ex.inner_d << " k " << ex.k_count;
      EXPECT_EQ(r.n_big, -5) << "a refused record must be left untouched";
      ++st.refused_expected;
      continue;
    }
    if (!fit) {
      EXPECT_EQ(r.n_big, -5) << "a refused record must be left untouched";
      ++st.refused_within;
      continue;
    }
    ++st.accepted;
    SCOPED_TRACE("record: " + kerntest::describe(r));
    EXPECT_EQ(r.small, small_ptr) << "the operand with fewer elements is staged";
    EXPECT_EQ(r.big, big_ptr);
    EXPECT_EQ(r.d, static_cast<void*>(got.data()));
    kerntest::check_tiled_shape(r, ex, sizeof(T), nl.lim);
    kerntest::check_tiled_vec(r, sizeof(T));
    kerntest::check_tiled_vec_results(r, sizeof(T), nl.lim);
    kerntest::check_tiled_offsets(r, big_offsets, static_cast<i64>(sc.small_side == 0 ? span_b : span_a), d_offsets, static_cast<i64>(span_d));
    if (::testing::Test::HasFailure()) return;
    // The same plan for operands one element off a 16-byte boundary: no vector copies of Big there.
    {
      tiled_record shifted;
      ASSERT_TRUE(describe_tiled(l, sizeof(T), a.data() + 1, b.data() + 1, got.data(), shifted, nl.lim));
      kerntest::check_tiled_vec(shifted, sizeof(T));
      EXPECT_EQ(shifted.tile_big, r.tile_big);
      // D one element off: the same layout, stored result by result.
      tiled_record shifted_d;
      ASSERT_TRUE(describe_tiled(l, sizeof(T), a.data(), b.data(), got.data() + 1, shifted_d, nl.lim));
      EXPECT_EQ(shifted_d.vec_kind, r.vec_kind);
      EXPECT_EQ(shifted_d.vec_store, 0);
    }
    evaluate_tiled<T>(r);
    if (kerntest::check_d<T>(l, got, want, bound, tol) > 0) return;
    if (r.tile_count > 1) ++st.multi_tile;
    if (has_split(r, big_l)) ++st.split;
    if (sc.small_side == 1) ++st.small_is_rhs;
    if (ex.batch) ++st.batch;
    if (ex.one_sided) ++st.one_sided;
    if (ex.diagonal) ++st.diagonal;
    if (r.n_k > 0) ++st.contracted;
    if (r.vec > 1) ++st.vector_copies;
    if (r.vec_kind == tiled_run_values) ++st.run_values;
    if (r.vec_kind == tiled_run_coefs) ++st.run_coefs;
    if (r.vec_kind == tiled_run_coefs && r.d_first != 0) ++st.d_first_coefs;
    if (r.vec_kind == tiled_run_table) ++st.run_table;
    if (r.group > 1) ++st.grouped;
    if (r.group > 1 && r.tile_count % r.group != 0) ++st.partial_group;
  }
}

template <class T>
void random_tiled_steps(std::uint64_t seed, int count, tiled_stats& st, const kerntest::tiled_gen& g = {}) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    kerntest::tiled_expectation ex;
    const kerntest::step_case sc = kerntest::random_tiled_step(rng, ex, g);
    check_tiled_step<T>(rng, sc, ex, std::string(kerntest::type_name<T>()) + " seed " + std::to_string(seed) + " step #" + std::to_string(i), st);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Tiled, RandomStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 424242;
  const int per_dtype = 250;
  std::printf("[tiled] seed %llu (+0..3 by dtype), %d steps per dtype, %zu limit sets each\n", static_cast<unsigned long long>(seed), per_dtype,
              std::size(limit_sets));
  tiled_stats st;
  random_tiled_steps<float>(seed, per_dtype, st);
  random_tiled_steps<double>(seed + 1, per_dtype, st);
  random_tiled_steps<std::complex<float>>(seed + 2, per_dtype, st);
  random_tiled_steps<std::complex<double>>(seed + 3, per_dtype, st);
  const int plans = st.steps * static_cast<int>(std::size(limit_sets));
  std::printf("[tiled] %d steps, %d plans: %d accepted and checked (several tiles %d, split free mode %d, small is rhs %d, batch %d, one-sided sums %d, "
              "diagonals %d, contracted %d, vector copies %d, tiles grouped %d, a partial last group %d, results in runs by value offsets %d / "
              "sharing coefficients %d (%d of them with D's modes first) / from a table %d), %d refused as expected, %d refused though the roles fit\n",
              st.steps, plans, st.accepted, st.multi_tile, st.split, st.small_is_rhs, st.batch, st.one_sided, st.diagonal, st.contracted,
              st.vector_copies, st.grouped, st.partial_group, st.run_values, st.run_coefs, st.d_first_coefs, st.run_table, st.refused_expected,
              st.refused_within);
  EXPECT_EQ(st.steps, 4 * per_dtype);
  EXPECT_EQ(st.refused_within, 0) << "steps within the limits (small operands, few modes) must be taken";
  EXPECT_GT(st.accepted, plans / 2) << "too few plans accepted: the test would pass vacuously";
  EXPECT_GT(st.multi_tile, plans / 4);
  EXPECT_GT(st.split, 50);
  EXPECT_GT(st.small_is_rhs, plans / 8);
  EXPECT_GT(st.batch, plans / 8);
  EXPECT_GT(st.one_sided, plans / 10);
  EXPECT_GT(st.diagonal, 30);
  EXPECT_GT(st.vector_copies, 100);
  EXPECT_GT(st.partial_group, 50);
  EXPECT_GT(st.run_values, 50);
  EXPECT_GT(st.run_coefs, 50);
  EXPECT_GT(st.d_first_coefs, 10);
  EXPECT_GT(st.run_table, 2);  // f32 with 8+ combinations is rare here: TableLikeSteps covers it
  EXPECT_GT(st.refused_expected, 50);
}

// run_table: f32 steps with 8 to 64 contracted combinations and s_free modes (the generator's
// table_like shapes), under every limit set; the table plans (coefficients from a shared-memory
// table built by tiled_index::table_entry) must match evaluate_lowered like the others, and the
// table's rows must give every result Small's offsets (check_tiled_vec_results).
TEST(Tiled, TableLikeStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 515151;
  const int count = 300;
  kerntest::tiled_gen g;
  g.table_like = true;
  g.max_small = 1 << 12;
  tiled_stats st;
  random_tiled_steps<float>(seed, count, st, g);
  std::printf("[tiled table] seed %llu, %d f32 steps: %d plans accepted, %d from a table, %d in runs by value offsets, %d sharing coefficients\n",
              static_cast<unsigned long long>(seed), count, st.accepted, st.run_table, st.run_values, st.run_coefs);
  EXPECT_EQ(st.steps, count);
  EXPECT_EQ(st.refused_within, 0);
  EXPECT_GT(st.run_table, 30) << "too few table plans: the test would pass vacuously";
}

// ---- coalescing on steps shaped like the reference network's -------------------------------------

// The free modes a tile needs so that Big's and D's leading modes form runs of `target` elements:
// Big's fastest modes up to the target (its free modes join the tile; batch and contracted modes are
// in every tile), then D's likewise. Returns the free elements for Big alone and for both.
struct run_needs {
  i64 free_big = 1, free_both = 1;
};

run_needs needs_of(const kerntest::step_case& sc, i64 target) {
  const std::vector<label_t>& big = sc.small_side == 0 ? sc.b.labels : sc.a.labels;
  const std::vector<label_t>& small = sc.small_side == 0 ? sc.a.labels : sc.b.labels;
  auto in = [](const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  auto memory_order = [](const kerntest::operand_case& o) {
    std::vector<std::size_t> idx(o.labels.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return o.strides[x] < o.strides[y]; });
    std::vector<label_t> ls;
    for (std::size_t i : idx) ls.push_back(o.labels[i]);
    return ls;
  };
  std::vector<label_t> taken;
  run_needs n;
  auto walk = [&](const std::vector<label_t>& order) {
    i64 run = 1;
    for (label_t l : order) {
      if (run >= target) break;
      const i64 e = sc.extents[static_cast<std::size_t>(l)];
      if (e == 1) continue;
      run *= e;
      const bool is_free = in(big, l) && !in(small, l) && in(sc.d.labels, l);
      if (is_free && !in(taken, l)) {
        taken.push_back(l);
        n.free_both *= e;
      }
    }
  };
  walk(memory_order(sc.small_side == 0 ? sc.b : sc.a));
  n.free_big = n.free_both;
  walk(memory_order(sc.d));
  return n;
}

struct coalescing_stats {
  int checked = 0, big_only = 0, neither = 0;
};

// Where a tile within the limits can make Big's and D's runs at least min_contig_bytes long, the
// record's leading entries do so (Big first: the planner favours the loads).
void expect_coalesced(const kerntest::step_case& sc, const kerntest::tiled_expectation& ex, const tiled_record& r, std::size_t element_bytes,
                      const tiled_limits& lim, coalescing_stats& st) {
  const i64 target = (lim.min_contig_bytes + static_cast<i64>(element_bytes) - 1) / static_cast<i64>(element_bytes);
  const i64 big_run = kerntest::leading_dense_run(r.big_extent, r.big_stride, r.n_big);
  const i64 d_run = kerntest::leading_dense_run(r.d_extent, r.d_stride, r.n_d);
  const run_needs need = needs_of(sc, target);
  const bool both = kerntest::tile_fits(ex, need.free_both, element_bytes, lim);
  const bool big = kerntest::tile_fits(ex, need.free_big, element_bytes, lim);
  if (both) {
    ++st.checked;
  } else if (big) {
    ++st.big_only;
  } else {
    ++st.neither;
  }
  if (big) {
    EXPECT_GE(big_run, std::min(target, ex.big_elements)) << "the slab's leading entries cover only " << big_run << " contiguous elements of Big (a tile of "
                                                          << need.free_big << " free elements would reach " << target << ")";
  }
  if (both) {
    EXPECT_GE(d_run, std::min(target, ex.d_elements)) << "D tile's leading entries cover only " << d_run << " contiguous elements of D (a tile of "
                                                      << need.free_both << " free elements would reach " << target << ")";
  }
  // Vector copies of 16 bytes wherever the slab starts with a dense run of that many elements
  // (extents 2 here: every other stride is a multiple of it).
  kerntest::check_tiled_vec(r, element_bytes);
  const i64 v = 16 / static_cast<i64>(element_bytes);
  if (v > 1 && big_run >= v && reinterpret_cast<std::uintptr_t>(r.big) % 16 == 0) {
    EXPECT_EQ(r.vec, v) << "the slab starts with a dense run of " << big_run << " elements: copies of 16 bytes apply";
  }
  // The tile grows to min_tile_d results unless one more free mode (extent 2 here) breaks a limit
  // or there is none left.
  if (r.tile_d < lim.min_tile_d && r.tile_count > 1) {
    EXPECT_FALSE(kerntest::tile_fits(ex, 2 * (r.tile_d / ex.inner_d), element_bytes, lim))
        << "tile_d " << r.tile_d << " below min_tile_d " << lim.min_tile_d << " though a larger tile fits";
  }
}

template <class T>
void reference_like_dry(std::mt19937_64& rng, int i, int& accepted, coalescing_stats& st) {
  const int big_rank = 18 + static_cast<int>(rng() % 9);   // 18..26
  const int small_rank = 4 + static_cast<int>(rng() % 6);  // 4..9
  kerntest::tiled_expectation ex;
  kerntest::step_case sc;
  do {  // D at most 2^30 elements (the reference network's largest is 2^28): D's tile spans its batch modes in 32 bits
    sc = kerntest::reference_like_step(rng, big_rank, small_rank, static_cast<int>(rng() % 2), ex);
  } while (ex.d_elements > (i64{1} << 30));
  SCOPED_TRACE(std::string(kerntest::type_name<T>()) + " reference-like step #" + std::to_string(i) + "\n  " + kerntest::describe(sc));
  const tiled_limits lim;  // the defaults
  tiled_record r;
  r.n_big = -5;
  const bool fit = describe_tiled(kerntest::lower(sc), sizeof(T), nullptr, nullptr, nullptr, r, lim);
  if (!kerntest::within_tiled_limits(ex, sizeof(T), lim)) {
    EXPECT_FALSE(fit) << "outside the limits: D " << ex.d_elements << " k " << ex.k_count << " inner_big " << ex.inner_big << " inner_d " << ex.inner_d;
    EXPECT_EQ(r.n_big, -5) << "a refused record must be left untouched";
    return;
  }
  ASSERT_TRUE(fit) << "a reference-shaped step within the limits must be taken";
  ++accepted;
  SCOPED_TRACE("record: " + kerntest::describe(r));
  kerntest::check_tiled_shape(r, ex, sizeof(T), lim);
  expect_coalesced(sc, ex, r, sizeof(T), lim, st);
}

TEST(Tiled, ReferenceShapedStepsAreCoalesced) {
  const std::uint64_t seed = 20240;
  std::printf("[tiled coalescing] seed %llu (+0..3 by dtype), 200 dry runs per dtype\n", static_cast<unsigned long long>(seed));
  int accepted = 0;
  coalescing_stats st;
  for (int t = 0; t < 4; ++t) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(t));
    for (int i = 0; i < 200 && !::testing::Test::HasFailure(); ++i) {
      switch (t) {
        case 0: reference_like_dry<float>(rng, i, accepted, st); break;
        case 1: reference_like_dry<double>(rng, i, accepted, st); break;
        case 2: reference_like_dry<std::complex<float>>(rng, i, accepted, st); break;
        default: reference_like_dry<std::complex<double>>(rng, i, accepted, st); break;
      }
    }
  }
  std::printf("[tiled coalescing] %d accepted: both runs reachable %d (checked), only Big's %d, neither %d\n", accepted, st.checked, st.big_only, st.neither);
  EXPECT_GT(accepted, 700);
  EXPECT_GT(st.checked, 500);
}

// The same shapes at a reduced rank (Big 2^10 .. 2^13 elements), evaluated: default limits but
// min_d_elements 1.
TEST(Tiled, ReferenceShapedStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 31415;
  std::printf("[tiled reference-shaped] seed %llu, 60 steps per dtype\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  tiled_limits lim;
  lim.min_d_elements = 1;
  int accepted = 0, refused = 0;
  coalescing_stats cst;
  auto one = [&](auto zero, int i) {
    using T = decltype(zero);
    const int big_rank = 10 + static_cast<int>(rng() % 4);
    const int small_rank = 4 + static_cast<int>(rng() % 6);
    kerntest::tiled_expectation ex;
    const kerntest::step_case sc = kerntest::reference_like_step(rng, big_rank, small_rank, static_cast<int>(rng() % 2), ex);
    SCOPED_TRACE(std::string(kerntest::type_name<T>()) + " reduced reference-like step #" + std::to_string(i) + "\n  " + kerntest::describe(sc));
    const lowered_step l = kerntest::lower(sc);
    std::vector<T> a(static_cast<std::size_t>(kerntest::span_of(sc.a, sc.extents)) + guards, kerntest::guard_value<T>());
    std::vector<T> b(static_cast<std::size_t>(kerntest::span_of(sc.b, sc.extents)) + guards, kerntest::guard_value<T>());
    for (std::size_t k = 0; k + guards < a.size(); ++k) a[k] = kerntest::random_value<T>(rng);
    for (std::size_t k = 0; k + guards < b.size(); ++k) b[k] = kerntest::random_value<T>(rng);
    const std::size_t nd = static_cast<std::size_t>(ex.d_elements) + guards;
    std::vector<T> want(nd, kerntest::sentinel_value<T>()), got(nd, kerntest::sentinel_value<T>());
    tiled_record r;
    const bool fit = describe_tiled(l, sizeof(T), a.data(), b.data(), got.data(), r, lim);
    if (!kerntest::within_tiled_limits(ex, sizeof(T), lim)) {
      EXPECT_FALSE(fit) << "outside the limits: k " << ex.k_count << " inner_big " << ex.inner_big << " inner_d " << ex.inner_d;
      ++refused;
      return;
    }
    ASSERT_TRUE(fit) << "a reference-shaped step within the limits must be taken";
    ++accepted;
    SCOPED_TRACE("record: " + kerntest::describe(r));
    kerntest::check_tiled_shape(r, ex, sizeof(T), lim);
    expect_coalesced(sc, ex, r, sizeof(T), lim, cst);
    const strided_operand& big_l = sc.small_side == 0 ? l.b : l.a;
    kerntest::check_tiled_offsets(r, element_offsets(big_l), ex.big_elements, element_offsets(l.d), ex.d_elements);
    evaluate_lowered<T>(l, a.data(), b.data(), want.data());
    evaluate_tiled<T>(r);
    const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
    kerntest::check_d<T>(l, got, want, kerntest::magnitude_bound<T>(l, a, b, nd), tol);
  };
  for (int i = 0; i < 60 && !::testing::Test::HasFailure(); ++i) one(float{}, i);
  for (int i = 0; i < 60 && !::testing::Test::HasFailure(); ++i) one(double{}, i);
  for (int i = 0; i < 60 && !::testing::Test::HasFailure(); ++i) one(std::complex<float>{}, i);
  for (int i = 0; i < 60 && !::testing::Test::HasFailure(); ++i) one(std::complex<double>{}, i);
  std::printf("[tiled reference-shaped] %d accepted and checked (both runs reachable %d, only Big's %d, neither %d), %d refused as expected\n", accepted,
              cst.checked, cst.big_only, cst.neither, refused);
  EXPECT_EQ(accepted + refused, 240);
  EXPECT_GT(accepted, 180);
  EXPECT_GT(cst.checked, 150);
}

// ---- the reference network's steps --------------------------------------------------------------

// Labels of steps of data/tensornetwork_permutation_optimized.json (extent 2 each; the network is
// column-major, first label fastest): A x B -> Y.
struct reference_step {
  int id;
  std::vector<label_t> a, b, y;
};
const reference_step reference_steps[] = {
    {303,
     {92, 188, 113, 52, 117, 131, 12, 39, 216},
     {87, 113, 185, 37, 129, 28, 63, 117, 53, 12, 131, 30, 174, 21, 45, 68, 92, 14, 4, 13, 197, 214, 188, 152, 120, 35, 215},
     {52, 39, 216, 87, 185, 37, 129, 28, 63, 53, 30, 174, 21, 45, 68, 14, 4, 13, 197, 214, 152, 120, 35, 215, 92, 113, 131, 12}},
    {373,
     {87, 143, 151, 114, 56},
     {5, 52, 39, 216, 37, 28, 174, 21, 45, 197, 214, 152, 120, 35, 154, 87, 14, 56, 112, 185, 13, 82, 85, 143, 170, 63, 114, 192},
     {151, 5, 52, 39, 216, 37, 28, 174, 21, 45, 197, 214, 152, 120, 35, 154, 14, 112, 185, 13, 82, 85, 170, 63, 192, 143, 114, 56}},
    {302,
     {41, 87, 113, 185, 98},
     {37, 129, 28, 63, 117, 53, 12, 131, 30, 174, 21, 45, 68, 92, 14, 4, 13, 197, 214, 188, 152, 98, 120, 35, 41, 215},
     {87, 113, 185, 37, 129, 28, 63, 117, 53, 12, 131, 30, 174, 21, 45, 68, 92, 14, 4, 13, 197, 214, 188, 152, 120, 35, 215}},
    {388,
     {39, 6, 56, 21, 159, 85, 28, 214},
     {5, 52, 39, 216, 28, 21, 45, 197, 214, 152, 120, 35, 154, 14, 112, 185, 13, 82, 85, 170, 63, 192, 114, 56, 166, 6, 151, 37},
     {159, 5, 52, 216, 45, 197, 152, 120, 35, 154, 14, 112, 185, 13, 82, 170, 63, 192, 114, 166, 151, 37, 6, 21, 85, 28, 214}},
    {364,
     {5, 109, 52, 39, 216, 37, 28, 63, 53, 174, 21, 45, 68, 197, 214, 152, 120, 35, 12, 154, 87, 14, 56, 112, 185, 129, 13},
     {82, 68, 12, 63, 85, 143, 53, 129, 170},
     {5, 109, 52, 39, 216, 37, 28, 174, 21, 45, 197, 214, 152, 120, 35, 154, 87, 14, 56, 112, 185, 13, 82, 85, 143, 170, 63, 53}},
    {387,
     {151, 5, 52, 39, 216, 37, 28, 174, 21, 45, 197, 214, 152, 120, 35, 154, 14, 112, 185, 13, 82, 85, 170, 63, 192, 143, 114, 56},
     {37, 174, 151, 166, 143, 6},
     {5, 52, 39, 216, 28, 21, 45, 197, 214, 152, 120, 35, 154, 14, 112, 185, 13, 82, 85, 170, 63, 192, 114, 56, 166, 6, 151, 37}},
    {312,
     {87, 30, 14, 4, 5, 109},
     {52, 39, 216, 87, 185, 37, 129, 28, 63, 53, 174, 21, 45, 68, 14, 4, 13, 197, 214, 152, 120, 35, 215, 92, 12, 154, 30},
     {5, 109, 52, 39, 216, 185, 37, 129, 28, 63, 53, 174, 21, 45, 68, 13, 197, 214, 152, 120, 35, 215, 92, 12, 154, 87, 14}},
    {301,
     {98, 37, 120, 35, 132, 41, 215, 129, 177, 28},
     {63, 117, 53, 12, 215, 131, 30, 174, 120, 21, 45, 98, 68, 92, 14, 35, 4, 13, 41, 197, 214, 188, 177, 132, 152},
     {37, 129, 28, 63, 117, 53, 12, 131, 30, 174, 21, 45, 68, 92, 14, 4, 13, 197, 214, 188, 152, 98, 120, 35, 41, 215}},
};

// The step as a step_case, column-major, without the labels in `drop` (to reduce its rank).
kerntest::step_case reference_case(const reference_step& rs, const std::vector<label_t>& drop = {}) {
  kerntest::step_case s;
  s.extents.assign(256, 2);
  auto keep = [&](const std::vector<label_t>& ls) {
    std::vector<label_t> out;
    for (label_t l : ls)
      if (std::find(drop.begin(), drop.end(), l) == drop.end()) out.push_back(l);
    return out;
  };
  s.a.labels = keep(rs.a);
  s.b.labels = keep(rs.b);
  s.d.labels = keep(rs.y);
  s.small_side = s.a.labels.size() <= s.b.labels.size() ? 0 : 1;
  for (kerntest::operand_case* o : {&s.a, &s.b, &s.d}) {
    o->layout = kerntest::layout_kind::column_major;
    o->strides = dense_strides(kerntest::extents_of(o->labels, s.extents), true);
  }
  return s;
}

kerntest::tiled_expectation expectation_of(const kerntest::step_case& s) {
  const std::vector<label_t>& big = s.small_side == 0 ? s.b.labels : s.a.labels;
  const std::vector<label_t>& small = s.small_side == 0 ? s.a.labels : s.b.labels;
  auto in = [](const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<label_t> all = big;
  for (label_t l : small)
    if (!in(all, l)) all.push_back(l);
  kerntest::tiled_expectation e;
  e.d_elements = i64{1} << s.d.labels.size();
  e.big_elements = i64{1} << big.size();
  e.small_span = i64{1} << small.size();
  for (label_t l : all) {
    const bool b = in(big, l), sm = in(small, l), d = in(s.d.labels, l);
    if (b && (sm || !d)) e.inner_big *= 2;  // batch, contracted in Big
    if (d && sm) e.inner_d *= 2;            // batch, s_free
    if (!d) e.k_count *= 2;
    if (b && sm && d) e.batch = true;
    if (!d && b != sm) e.one_sided = true;
  }
  return e;
}

template <class T>
void reference_step_dry(const reference_step& rs) {
  const kerntest::step_case sc = reference_case(rs);
  SCOPED_TRACE(std::string(kerntest::type_name<T>()) + " reference step " + std::to_string(rs.id) + "\n  " + kerntest::describe(sc));
  const kerntest::tiled_expectation ex = expectation_of(sc);
  const tiled_limits lim;
  tiled_record r;
  ASSERT_TRUE(describe_tiled(kerntest::lower(sc), sizeof(T), nullptr, nullptr, nullptr, r, lim));
  SCOPED_TRACE("record: " + kerntest::describe(r));
  kerntest::check_tiled_shape(r, ex, sizeof(T), lim);
  coalescing_stats st;
  expect_coalesced(sc, ex, r, sizeof(T), lim, st);
  // D's leading free modes staged first: the same shape checks; on step 387 (Big leads with a batch
  // mode, D with free ones) it is what lets D's runs share coefficients.
  tiled_limits dl = lim;
  dl.d_first = true;
  tiled_record rd;
  ASSERT_TRUE(describe_tiled(kerntest::lower(sc), sizeof(T), nullptr, nullptr, nullptr, rd, dl));
  kerntest::check_tiled_shape(rd, ex, sizeof(T), dl);
  kerntest::check_tiled_vec_results(rd, sizeof(T), dl);
  if (rs.id == 387 && sizeof(T) < 16) {
    EXPECT_NE(r.vec_kind, tiled_run_coefs);
    EXPECT_EQ(rd.vec_kind, tiled_run_coefs);
  }
  // The plans compiled mode times against the default one: valid, distinct, unbound, and among them
  // the one with D's modes first wherever that differs from the default.
  const std::vector<tiled_record> alts = tiled_alternatives(kerntest::lower(sc), sizeof(T), lim, r);
  EXPECT_FALSE(alts.empty()) << "contracted modes first always gives another slab on these steps";
  bool has_d_first = false;
  for (std::size_t i = 0; i < alts.size(); ++i) {
    kerntest::check_tiled_shape(alts[i], ex, sizeof(T), lim);
    EXPECT_EQ(alts[i].big, nullptr);
    EXPECT_FALSE(same_tiled_plan(alts[i], r)) << "alternative " << i << " is the default plan again";
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(same_tiled_plan(alts[i], alts[j])) << "alternatives " << j << " and " << i;
    has_d_first = has_d_first || same_tiled_plan(alts[i], rd);
  }
  if (!same_tiled_plan(rd, r)) {
    EXPECT_TRUE(has_d_first) << "D's modes first differs from the default but is not among the alternatives";
  }
  if (sizeof(T) == 4)
    std::printf("[tiled reference] step %d f32, D's modes first: results %s, tile %d Big / %d D, 16-byte copies %s\n", rs.id,
                rd.vec_kind == tiled_run_values ? "in runs (values at fixed offsets)" : rd.vec_kind == tiled_run_coefs ? "in runs sharing coefficients" : "scalar",
                rd.tile_big, rd.tile_d, rd.vec_planned > 1 ? "yes" : "no");
  if (sizeof(T) == 4)
    std::printf("[tiled reference] step %d f32: %lld tiles of %d Big / %d D elements, k %d, %d outer groups, %zu B shared, results %s; runs Big %lld D %lld%s\n", rs.id,
                static_cast<long long>(r.tile_count), r.tile_big, r.tile_d, r.k_count, r.n_outer, r.shared_bytes(4),
                r.vec_kind == tiled_run_values ? "in runs (values at fixed offsets)" : r.vec_kind == tiled_run_coefs ? "in runs sharing coefficients" : "scalar",
                static_cast<long long>(kerntest::leading_dense_run(r.big_extent, r.big_stride, r.n_big)),
                static_cast<long long>(kerntest::leading_dense_run(r.d_extent, r.d_stride, r.n_d)),
                st.checked == 1 ? "" : st.big_only == 1 ? " (no tile within the limits reaches D's run)" : " (no tile within the limits reaches the runs)");
}

TEST(Tiled, ReferenceNetworkStepsFullSize) {
  for (const reference_step& rs : reference_steps) {
    reference_step_dry<float>(rs);
    reference_step_dry<double>(rs);
    reference_step_dry<std::complex<float>>(rs);
    reference_step_dry<std::complex<double>>(rs);
  }
}

// Step 303 with ten of Big's free labels dropped (Big 2^17, D 2^18 elements), evaluated under the
// default limits.
TEST(Tiled, ReferenceStep303ReducedRank) {
  const kerntest::step_case sc = reference_case(reference_steps[0], {30, 174, 21, 45, 68, 14, 4, 13, 197, 214});
  ASSERT_EQ(sc.b.labels.size(), 17U);
  ASSERT_EQ(sc.d.labels.size(), 18U);
  SCOPED_TRACE(kerntest::describe(sc));
  const kerntest::tiled_expectation ex = expectation_of(sc);
  const lowered_step l = kerntest::lower(sc);
  using T = float;
  std::mt19937_64 rng(303);
  std::vector<T> a(static_cast<std::size_t>(ex.small_span) + guards, kerntest::guard_value<T>());
  std::vector<T> b(static_cast<std::size_t>(ex.big_elements) + guards, kerntest::guard_value<T>());
  for (std::size_t k = 0; k + guards < a.size(); ++k) a[k] = kerntest::random_value<T>(rng);
  for (std::size_t k = 0; k + guards < b.size(); ++k) b[k] = kerntest::random_value<T>(rng);
  const std::size_t nd = static_cast<std::size_t>(ex.d_elements) + guards;
  std::vector<T> want(nd, kerntest::sentinel_value<T>()), got(nd, kerntest::sentinel_value<T>());
  const tiled_limits lim;
  tiled_record r;
  ASSERT_TRUE(describe_tiled(l, sizeof(T), a.data(), b.data(), got.data(), r, lim));
  SCOPED_TRACE("record: " + kerntest::describe(r));
  EXPECT_EQ(r.small, static_cast<const void*>(a.data()));
  kerntest::check_tiled_shape(r, ex, sizeof(T), lim);
  coalescing_stats st;
  expect_coalesced(sc, ex, r, sizeof(T), lim, st);
  kerntest::check_tiled_offsets(r, element_offsets(l.b), ex.big_elements, element_offsets(l.d), ex.d_elements);
  evaluate_lowered<T>(l, a.data(), b.data(), want.data());
  evaluate_tiled<T>(r);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got, want, kerntest::magnitude_bound<T>(l, a, b, nd), tol);
}

// ---- refusals and limits ------------------------------------------------------------------------

// Labels: 0 free (`outer`), 1 s_free (`m`), 2 contracted (`k`), 3 batch (`batch`). Big [o, k, b],
// Small [m, k, b] with its strides padded by `small_pad` per k, D [m, o, b]; column-major.
struct hand_case {
  i64 outer = 256, m = 2, k = 2, batch = 1, small_pad = 0;
};

kerntest::step_case hand_step(const hand_case& h) {
  kerntest::step_case s;
  s.extents = {h.outer, h.m, h.k, h.batch};
  s.a.labels = {0, 2, 3};
  s.a.strides = dense_strides({h.outer, h.k, h.batch}, true);
  s.b.labels = {1, 2, 3};
  s.b.strides = {1, h.m + h.small_pad, (h.m + h.small_pad) * h.k};
  s.d.labels = {1, 0, 3};
  s.d.strides = dense_strides({h.m, h.outer, h.batch}, true);
  s.small_side = 1;
  return s;
}

bool fits(const hand_case& h, std::size_t element_bytes, const tiled_limits& lim, tiled_record* out = nullptr) {
  tiled_record r;
  r.n_big = -5;
  r.tile_count = -7;
  const bool ok = describe_tiled(kerntest::lower(hand_step(h)), element_bytes, nullptr, nullptr, nullptr, r, lim);
  if (!ok) {
    EXPECT_EQ(r.n_big, -5) << "a refused record must be left untouched";
    EXPECT_EQ(r.tile_count, -7) << "a refused record must be left untouched";
  }
  if (out != nullptr) *out = r;
  return ok;
}

const tiled_limits loose{48 * 1024, 1, 256, 64, 8192, 96 * 1024};

TEST(Tiled, RefusesUnaryReductions) {
  kerntest::step_case s;
  s.unary = true;
  s.extents = {1 << 17, 4};
  s.a.labels = {0, 1};
  s.a.strides = {4, 1};
  s.d.labels = {0};
  s.d.strides = {1};
  tiled_record r;
  r.n_big = -5;
  EXPECT_FALSE(describe_tiled(kerntest::lower(s), 4, nullptr, nullptr, nullptr, r, loose));
  EXPECT_EQ(r.n_big, -5);
}

TEST(Tiled, SmallOperandSizeLimit) {
  // Small [m = 64, k = 48] = 3072 elements: f32 12 KiB.
  tiled_record r;
  EXPECT_TRUE(fits(hand_case{256, 64, 48, 1, 0}, 4, tiled_limits{12 * 1024, 1, 256, 64, 8192, 96 * 1024}, &r)) << "exactly at max_small_bytes";
  EXPECT_EQ(r.small_span, 3072);
  EXPECT_FALSE(fits(hand_case{256, 64, 48, 1, 0}, 4, tiled_limits{12 * 1024 - 1, 1, 256, 64, 8192, 96 * 1024})) << "one byte over";
  EXPECT_FALSE(fits(hand_case{256, 64, 48, 1, 0}, 8, tiled_limits{12 * 1024, 1, 256, 64, 8192, 96 * 1024})) << "f64: 24 KiB";
  // Padding counts: the span, not the element count, must fit.
  EXPECT_FALSE(fits(hand_case{256, 64, 48, 1, 1}, 4, tiled_limits{12 * 1024, 1, 256, 64, 8192, 96 * 1024})) << "span 3072 + 47 padding elements";
  // Offsets in Small are packed into 16 bits: a span of 0xFFFF is the most, whatever the bytes.
  const tiled_limits huge{1 << 22, 1, 256, 64, 8192, 1 << 22};
  // Small [m = 2, k = 2] with k's stride padded to 65533 (span 0xFFFF) or 65534 (0x10000).
  EXPECT_TRUE(fits(hand_case{2048, 2, 2, 1, 65531}, 4, huge, &r)) << "span 0xFFFF";
  EXPECT_EQ(r.small_span, 0xFFFF);
  EXPECT_FALSE(fits(hand_case{2048, 2, 2, 1, 65532}, 4, huge)) << "span 0x10000";
}

TEST(Tiled, MinDElements) {
  // D [m = 2, o = 256, b = 2] = 1024 elements.
  EXPECT_TRUE(fits(hand_case{256, 2, 2, 2, 0}, 4, tiled_limits{48 * 1024, 1024, 256, 64, 8192, 96 * 1024}));
  EXPECT_FALSE(fits(hand_case{256, 2, 2, 2, 0}, 4, tiled_limits{48 * 1024, 1025, 256, 64, 8192, 96 * 1024}));
  // The defaults: 65536.
  EXPECT_TRUE(fits(hand_case{1 << 15, 2, 2, 1, 0}, 4, tiled_limits{}));
  EXPECT_FALSE(fits(hand_case{(1 << 15) - 1, 2, 2, 1, 0}, 4, tiled_limits{}));
}

TEST(Tiled, InnerPartsOverTheCaps) {
  const tiled_limits lim{1 << 20, 1, 256, 64, 8192, 1 << 20};
  // Contracted combinations: at most tiled_max_k_for(element bytes) (a table in the record, the
  // coefficients in registers): 64 f32, 16 c128.
  const auto k32 = static_cast<i64>(tiled_max_k_for(4)), k128 = static_cast<i64>(tiled_max_k_for(16));
  EXPECT_LE(k32, tiled_max_k);
  EXPECT_TRUE(fits(hand_case{256, 2, k32, 1, 0}, 4, lim)) << "k = " << k32 << " f32";
  EXPECT_FALSE(fits(hand_case{256, 2, k32 + 1, 1, 0}, 4, lim)) << "k = " << k32 + 1 << " f32";
  EXPECT_TRUE(fits(hand_case{256, 2, k128, 1, 0}, 16, lim)) << "k = " << k128 << " c128";
  EXPECT_FALSE(fits(hand_case{256, 2, k128 + 1, 1, 0}, 16, lim)) << "k = " << k128 + 1 << " c128";
  // The slab's fixed part (batch x contracted in Big) must fit tiled_max_tile_big: 4096 f32, 1024 c128.
  EXPECT_EQ(tiled_max_tile_big(4), 4096);
  EXPECT_EQ(tiled_max_tile_big(16), 1024);
  EXPECT_TRUE(fits(hand_case{256, 2, 16, 64, 0}, 16, lim)) << "k x batch = 1024, c128";
  EXPECT_FALSE(fits(hand_case{256, 2, 16, 65, 0}, 16, lim)) << "k x batch = 1040, c128";
  // D tile's fixed part (batch x s_free) must fit max_tile_d ...
  EXPECT_TRUE(fits(hand_case{256, 64, 2, 2, 0}, 4, tiled_limits{1 << 20, 1, 256, 64, 128, 1 << 20})) << "m x batch = 128";
  EXPECT_FALSE(fits(hand_case{256, 65, 2, 2, 0}, 4, tiled_limits{1 << 20, 1, 256, 64, 128, 1 << 20})) << "m x batch = 130";
  // ... and the kernel's threads x results per thread, whatever max_tile_d says.
  const i64 most = i64{tiled_threads} * tiled_outputs(4, tiled_k_max(2));
  tiled_record r;
  EXPECT_TRUE(fits(hand_case{1 << 16, most, 2, 1, 0}, 4, lim, &r)) << "m = " << most;
  EXPECT_LE(r.tile_d, most);
  EXPECT_FALSE(fits(hand_case{1 << 16, most + 1, 2, 1, 0}, 4, lim)) << "m = " << most + 1;
  // Shared memory: the smallest tile must fit.
  EXPECT_FALSE(fits(hand_case{256, 64, 48, 1, 0}, 4, tiled_limits{48 * 1024, 1, 256, 64, 8192, 12 * 1024})) << "Small alone fills 12 KiB";
}

TEST(Tiled, RefusesNegativeStrides) {
  lowered_step l = kerntest::lower(hand_step(hand_case{}));
  l.a.strides[0] = -l.a.strides[0];
  tiled_record r;
  r.n_big = -5;
  EXPECT_FALSE(describe_tiled(l, 4, nullptr, nullptr, nullptr, r, loose));
  EXPECT_EQ(r.n_big, -5);
}

// The record keeps strides inside a tile in 32 bits: a step whose tile would span more than 2^31
// elements of Big or D must be refused or described exactly, never truncated. Dry runs.
TEST(Tiled, HugeStridesAreNotTruncated) {
  // Big [o = 4096 (stride 1), k = 2 (stride 2^31)], Small [m = 2, k = 2], D [m, o].
  lowered_step l;
  const i64 big = i64{1} << 31;
  l.a.modes = {0, 1};
  l.a.extents = {4096, 2};
  l.a.strides = {1, big};
  l.b.modes = {2, 1};
  l.b.extents = {2, 2};
  l.b.strides = {1, 2};
  l.d.modes = {2, 0};
  l.d.extents = {2, 4096};
  l.d.strides = {1, 2};
  tiled_record r;
  if (describe_tiled(l, 4, nullptr, nullptr, nullptr, r, loose)) {
    for (int i = 0; i < r.n_big; ++i) EXPECT_TRUE(r.big_stride[i] == 1 || r.big_stride[i] == big) << "slab stride " << r.big_stride[i];
  }
  // D's s_free mode slowest with a stride of 2^31.
  l.a.strides = {1, 4096};
  l.d.modes = {0, 2};
  l.d.extents = {4096, 2};
  l.d.strides = {1, big};
  if (describe_tiled(l, 4, nullptr, nullptr, nullptr, r, loose)) {
    for (int i = 0; i < r.n_d; ++i) EXPECT_TRUE(r.d_stride[i] == 1 || r.d_stride[i] == big) << "D stride " << r.d_stride[i];
  }
  // Outer strides are 64-bit: a free mode of stride 2^31 outside the tile is fine.
  // Big [o = 4096, k = 2, f = 2 (stride 2^31)], D [o, m, f (stride 2^31)].
  l.a.modes = {0, 1, 3};
  l.a.extents = {4096, 2, 2};
  l.a.strides = {1, 4096, big};
  l.d.modes = {0, 2, 3};
  l.d.extents = {4096, 2, 2};
  l.d.strides = {1, 4096, big};
  ASSERT_TRUE(describe_tiled(l, 4, nullptr, nullptr, nullptr, r, loose));
  SCOPED_TRACE("record: " + kerntest::describe(r));
  bool outer_f = false;
  for (int i = 0; i < r.n_outer; ++i) outer_f = outer_f || (r.outer_big[i] == big && r.outer_d[i] == big);
  EXPECT_TRUE(outer_f) << "the mode of stride 2^31 should be an outer group with its 64-bit strides";
  for (int i = 0; i < r.n_big; ++i) EXPECT_LT(r.big_stride[i], 8192) << "slab stride";
  for (int i = 0; i < r.n_d; ++i) EXPECT_LT(r.d_stride[i], 8192) << "D stride";
}

// Free modes of extent 2 (dry runs): 40 whose outer part is contiguous in Big and D alike merge into
// one outer group; 50 of which no two outer ones are (D's slow modes in the reverse of Big's order)
// would need more than tiled_max_outer groups (and 2^38 tiles): refused.
kerntest::step_case many_free_modes(int n_free, bool reverse_slow) {
  kerntest::step_case s;
  s.extents.assign(static_cast<std::size_t>(n_free) + 2, 2);
  const label_t k = n_free, m = n_free + 1;
  s.a.labels = {k, m};  // Small [k, m]
  s.b.labels = {k};     // Big [k, f0 ..]
  s.d.labels = {m};     // D [m, f0 ..]
  for (label_t f = 0; f < n_free; ++f) {
    s.b.labels.push_back(f);
    s.d.labels.push_back(f);
  }
  if (reverse_slow) std::reverse(s.d.labels.begin() + 13, s.d.labels.end());  // [m, f0 .. f11, f_last .. f12]
  s.small_side = 0;
  for (kerntest::operand_case* o : {&s.a, &s.b, &s.d}) o->strides = dense_strides(kerntest::extents_of(o->labels, s.extents), true);
  return s;
}

TEST(Tiled, OuterGroups) {
  const kerntest::step_case s = many_free_modes(40, false);
  kerntest::tiled_expectation ex;
  ex.d_elements = i64{1} << 41;
  ex.big_elements = i64{1} << 41;
  ex.inner_big = 2;
  ex.inner_d = 2;
  ex.k_count = 2;
  ex.small_span = 4;
  tiled_record r;
  ASSERT_TRUE(describe_tiled(kerntest::lower(s), 4, nullptr, nullptr, nullptr, r)) << kerntest::describe(s);
  SCOPED_TRACE("record: " + kerntest::describe(r));
  kerntest::check_tiled_shape(r, ex, 4, tiled_limits{});
  EXPECT_EQ(r.n_outer, 1) << "the outer modes are contiguous in Big and D alike";
  tiled_record refused;
  refused.n_big = -5;
  EXPECT_FALSE(describe_tiled(kerntest::lower(many_free_modes(50, true)), 4, nullptr, nullptr, nullptr, refused, tiled_limits{}))
      << "more than tiled_max_outer outer groups";
  EXPECT_EQ(refused.n_big, -5);
}

// A free mode of extent 2^30 (Big [o, k = 2], Small [m = 2, k], D [m, o]; a dry run) needs a
// divisor of o within the tile's room (4096 f32 elements of Big). describe_tiled runs on the host
// for every step of every eager call (src/cuda/eager.cpp), so its cost must not grow with the
// extents: bench/micro/planning_bench times this step (counting down from o itself took ~2^30
// steps, seconds); the test checks the plan.
TEST(Tiled, HugeFreeModeIsSplitWithinTheTile) {
  const i64 o = i64{1} << 30;
  lowered_step l;
  l.a.modes = {0, 1};
  l.a.extents = {o, 2};
  l.a.strides = {1, o};
  l.b.modes = {2, 1};
  l.b.extents = {2, 2};
  l.b.strides = {1, 2};
  l.d.modes = {2, 0};
  l.d.extents = {2, o};
  l.d.strides = {1, 2};
  tiled_record r;
  ASSERT_TRUE(describe_tiled(l, 4, nullptr, nullptr, nullptr, r));
  SCOPED_TRACE("record: " + kerntest::describe(r));
  EXPECT_EQ(r.tile_count * r.tile_d, 2 * o);
  EXPECT_GE(kerntest::leading_dense_run(r.big_extent, r.big_stride, r.n_big), 64);
}

// bind_tiled (what eager does on a repeated call: plan once with no pointers, bind per call) gives
// the same record as describing with the pointers, 16-byte copies included exactly when Big's base
// is 16-byte aligned; rebinding an aligned base after a misaligned one restores them.
TEST(Tiled, BindEqualsDescribeWithPointers) {
  std::mt19937_64 rng(5150);
  int checked = 0, vectorized = 0;
  alignas(16) static float buffer[64];
  for (int i = 0; i < 200; ++i) {
    kerntest::tiled_expectation ex;
    const kerntest::step_case sc = kerntest::reference_like_step(rng, 14 + i % 4, 4 + i % 5, i % 2, ex);
    const lowered_step l = kerntest::lower(sc);
    tiled_record planned;
    if (!describe_tiled(l, 4, nullptr, nullptr, nullptr, planned, tiled_limits{48 * 1024, 1})) continue;
    for (std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
      const void* a = buffer + shift;
      const void* b = buffer + 2 * shift;  // both misaligned when shifted
      void* d = buffer + 32;
      tiled_record direct;
      ASSERT_TRUE(describe_tiled(l, 4, a, b, d, direct, tiled_limits{48 * 1024, 1}));
      tiled_record bound = planned;
      bind_tiled(bound, a, b, d);
      EXPECT_EQ(kerntest::describe(bound), kerntest::describe(direct)) << "step " << i << " shift " << shift;
      EXPECT_EQ(bound.small, sc.small_side == 0 ? a : b) << "Small is the operand with fewer elements";
      EXPECT_EQ(bound.big, sc.small_side == 0 ? b : a);
      EXPECT_EQ(bound.d, d);
      EXPECT_EQ(bound.vec, shift == 0 ? planned.vec_planned : 1) << "16-byte copies only from an aligned Big";
      if (shift == 0 && bound.vec > 1) ++vectorized;
    }
    tiled_record rebound = planned;
    bind_tiled(rebound, buffer + 1, buffer + 1, buffer);
    bind_tiled(rebound, buffer, buffer, buffer);
    EXPECT_EQ(rebound.vec, planned.vec) << "an aligned rebind restores the planned copies";
    ++checked;
  }
  std::printf("[tiled bind] %d steps, %d with 16-byte copies\n", checked, vectorized);
  EXPECT_GT(checked, 100);
  EXPECT_GT(vectorized, 10);
}

}  // namespace
}  // namespace tnrt
