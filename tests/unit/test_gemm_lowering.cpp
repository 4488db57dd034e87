// lower_to_gemm (src/core/gemm_lowering.hpp): a contraction step as one strided-batched column-major
// GEMM. Every accepted form is evaluated (evaluate_gemm, the loops cuBLAS's call stands for) against
// evaluate_lowered, the trusted reference, on operands whose padding and tails are NaN, so a form
// that reads outside an operand or writes outside D fails; forms that must exist and forms that
// must be refused are checked by name.
#include <gtest/gtest.h>

#include <complex>
#include <map>
#include <set>
#include <random>
#include <string>

#include "core/gemm_lowering.hpp"
#include "support/kernel_random.hpp"

namespace tnrt {
namespace {

using kerntest::i64;
constexpr std::size_t guards = 8;

/// A step from label lists and per-operand strides (empty strides: row-major).
kerntest::step_case make_case(std::vector<label_t> a, std::vector<label_t> b, std::vector<label_t> d, std::vector<i64> extents,
                              bool column_major = false) {
  kerntest::step_case sc;
  sc.a.labels = std::move(a);
  sc.b.labels = std::move(b);
  sc.d.labels = std::move(d);
  sc.extents = std::move(extents);
  for (kerntest::operand_case* o : {&sc.a, &sc.b, &sc.d}) o->strides = dense_strides(kerntest::extents_of(o->labels, sc.extents), column_major);
  return sc;
}

/// Evaluates the form against evaluate_lowered; true when the form exists.
template <class T>
bool check_form(std::mt19937_64& rng, const kerntest::step_case& sc, const std::string& where) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const std::optional<gemm_form> g = lower_to_gemm(l);
  if (!g) return false;
  SCOPED_TRACE("gemm: swapped " + std::to_string(g->swapped) + " trans " + std::to_string(g->trans_x) + std::to_string(g->trans_y) + " m n k batch " +
               std::to_string(g->m) + " " + std::to_string(g->n) + " " + std::to_string(g->k) + " " + std::to_string(g->batch) + " ld " +
               std::to_string(g->ldx) + " " + std::to_string(g->ldy) + " " + std::to_string(g->ldc) + " strides " + std::to_string(g->stride_x) +
               " " + std::to_string(g->stride_y) + " " + std::to_string(g->stride_c));
  EXPECT_GE(g->ldc, g->m);
  EXPECT_GE(g->ldx, g->trans_x ? g->k : g->m);
  EXPECT_GE(g->ldy, g->trans_y ? g->n : g->k);
  EXPECT_EQ(g->m * g->n * g->batch, kerntest::product(l.d.extents)) << "C covers D";
  const kerntest::step_data<T> data = kerntest::make_step_data<T>(rng, sc, l, guards);
  std::vector<T> got(data.span_d + guards, kerntest::sentinel_value<T>());
  evaluate_gemm<T>(*g, data.a.data(), data.b.data(), got.data());
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, data.a, data.b, data.span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got, data.want, bound, tol);
  return true;
}

TEST(GemmLowering, MatrixProductBothLayouts) {
  std::mt19937_64 rng(1);
  // ij,jk->ik row-major: D's k is contiguous, so C is D transposed: B^T A^T.
  const auto row = make_case({0, 1}, {1, 2}, {0, 2}, {3, 4, 5});
  ASSERT_TRUE(check_form<double>(rng, row, "row-major"));
  const gemm_form g = *lower_to_gemm(kerntest::lower(row));
  EXPECT_TRUE(g.swapped);
  EXPECT_FALSE(g.trans_x);
  EXPECT_FALSE(g.trans_y);
  EXPECT_EQ(g.m, 5);
  EXPECT_EQ(g.n, 3);
  EXPECT_EQ(g.k, 4);
  EXPECT_EQ(g.batch, 1);
  const auto col = make_case({0, 1}, {1, 2}, {0, 2}, {3, 4, 5}, true);
  ASSERT_TRUE(check_form<double>(rng, col, "column-major"));
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(col))->swapped);
  // ji,jk->ik: A stored transposed.
  const auto at = make_case({1, 0}, {1, 2}, {0, 2}, {3, 4, 5}, true);
  ASSERT_TRUE(check_form<double>(rng, at, "A transposed"));
  EXPECT_TRUE(lower_to_gemm(kerntest::lower(at))->trans_x);
}

TEST(GemmLowering, BatchedAndMergedGroups) {
  std::mt19937_64 rng(2);
  // bij,bjk->bik, row-major: strided-batched.
  const auto bmm = make_case({0, 1, 2}, {0, 2, 3}, {0, 1, 3}, {3, 4, 5, 2});
  ASSERT_TRUE(check_form<std::complex<float>>(rng, bmm, "bmm"));
  const gemm_form g = *lower_to_gemm(kerntest::lower(bmm));
  EXPECT_EQ(g.batch, 3);
  EXPECT_EQ(g.k, 5);
  // two m labels, two k labels, two batch labels, all consecutive: merged.
  //   A: b1 b2 i1 i2 j1 j2   B: b1 b2 j1 j2 k   D: b1 b2 i1 i2 k
  const auto merged = make_case({0, 1, 2, 3, 4, 5}, {0, 1, 4, 5, 6}, {0, 1, 2, 3, 6}, {2, 3, 2, 3, 3, 2, 4});
  ASSERT_TRUE(check_form<float>(rng, merged, "merged groups"));
  const gemm_form h = *lower_to_gemm(kerntest::lower(merged));
  EXPECT_EQ(h.batch, 6);
  EXPECT_EQ(h.k, 6);
  EXPECT_EQ(h.m * h.n, 6 * 4);
  // a batch label between the free ones in D (D: i b k): batch stride inside C's columns.
  const auto inner_batch = make_case({0, 1, 2}, {0, 2, 3}, {1, 0, 3}, {3, 4, 5, 2});
  EXPECT_TRUE(check_form<double>(rng, inner_batch, "batch inside D"));
  // outer product (no k) and dot product (no m, n).
  EXPECT_TRUE(check_form<double>(rng, make_case({0}, {1}, {0, 1}, {4, 5}), "outer"));
  EXPECT_TRUE(check_form<double>(rng, make_case({0, 1}, {0, 1}, {}, {4, 5}), "dot"));
  // extent-1 labels anywhere.
  EXPECT_TRUE(check_form<double>(rng, make_case({0, 3, 1}, {1, 2, 3}, {3, 0, 2}, {3, 4, 5, 1}), "extent 1"));
}

TEST(GemmLowering, RefusesWhatIsNotOneGemm) {
  // a one-sided sum (j summed in A only): B gets a stride-0 mode.
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(make_case({0, 1}, {2}, {0, 2}, {3, 4, 5}))));
  // m labels not consecutive in A (A: i1 j i2).
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(make_case({0, 1, 2}, {1, 3}, {0, 2, 3}, {3, 4, 5, 2}))));
  // merged labels in different orders in A and D.
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(make_case({0, 1, 2}, {2, 3}, {1, 0, 3}, {3, 4, 5, 2}))));
  // neither free group contiguous in D (D: k i b, batch innermost).
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(make_case({0, 1, 2}, {0, 2, 3}, {3, 1, 0}, {3, 4, 5, 2}))));
  // a reduction.
  kerntest::step_case red = make_case({0, 1}, {}, {0}, {3, 4});
  red.unary = true;
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(red)));
  // padding between merged modes.
  kerntest::step_case pad = make_case({0, 1, 2}, {1, 2, 3}, {0, 3}, {3, 4, 5, 2});
  pad.a.strides = {40, 8, 1};  // j (4) then k (5) but j's stride 8 != 5
  EXPECT_FALSE(lower_to_gemm(kerntest::lower(pad)));
}

// Random general steps (every layout kind, diagonals, one-sided sums): every accepted form agrees
// with the reference.
template <class T>
void random_steps(std::uint64_t seed, int count, int& accepted, int& contractions) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const kerntest::step_case sc = kerntest::random_general_step(rng);
    if (sc.unary) continue;
    ++contractions;
    if (check_form<T>(rng, sc, "seed " + std::to_string(seed) + " #" + std::to_string(i))) ++accepted;
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(GemmLowering, RandomGeneralSteps) {
  int accepted = 0, contractions = 0;
  random_steps<double>(11, 3000, accepted, contractions);
  random_steps<std::complex<double>>(12, 1000, accepted, contractions);
  random_steps<float>(13, 1000, accepted, contractions);
  EXPECT_GT(accepted, contractions / 10) << accepted << " of " << contractions << " contractions had a GEMM form";
}

// GEMM-shaped steps: groups laid out consecutively in random group orders, dense row- or
// column-major, labels within a group in one order everywhere; the form must exist whenever D's m
// or n group is its innermost (extent > 1), and agree with the reference.
TEST(GemmLowering, RandomGemmShapedSteps) {
  std::mt19937_64 rng(21);
  int accepted = 0, must = 0;
  for (int it = 0; it < 2000; ++it) {
    std::vector<std::vector<label_t>> groups(4);  // batch, m, n, k
    std::vector<i64> extents;
    label_t next = 0;
    for (auto& g : groups)
      for (int c = static_cast<int>(rng() % 3); c > 0; --c) {
        g.push_back(next++);
        extents.push_back(1 + static_cast<i64>(rng() % 4));
      }
    auto concat = [&](std::vector<int> order) {
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<label_t> out;
      for (int gi : order) out.insert(out.end(), groups[static_cast<std::size_t>(gi)].begin(), groups[static_cast<std::size_t>(gi)].end());
      return out;
    };
    kerntest::step_case sc = make_case(concat({0, 1, 3}), concat({0, 3, 2}), concat({0, 1, 2}), extents);
    int majors = 0;
    for (kerntest::operand_case* o : {&sc.a, &sc.b, &sc.d}) {
      const bool column = rng() % 2 == 0;
      majors += column ? 1 : 0;
      o->strides = dense_strides(kerntest::extents_of(o->labels, sc.extents), column);
    }
    // Row- and column-major operands order a group's labels oppositely in memory: one GEMM only
    // when no group has two labels of extent > 1.
    bool one_order = majors == 0 || majors == 3;
    if (!one_order) {
      one_order = true;
      for (const auto& g : groups) {
        int big = 0;
        for (label_t l : g) big += sc.extents[static_cast<std::size_t>(l)] > 1 ? 1 : 0;
        if (big > 1) one_order = false;
      }
    }
    // Each operand's innermost mode of extent > 1 (by stride; -1: none) must be in one of the two
    // groups of its matrix: D's in m or n, A's in m or k, B's in k or n.
    const auto innermost = [&](const kerntest::operand_case& o) {
      int inner = -1;
      i64 best = -1;
      for (std::size_t i = 0; i < o.labels.size(); ++i) {
        if (sc.extents[static_cast<std::size_t>(o.labels[i])] == 1) continue;
        if (best < 0 || o.strides[i] < best) {
          best = o.strides[i];
          inner = o.labels[i];
        }
      }
      return inner;
    };
    const auto in_groups = [&](int label, int g1, int g2) {
      if (label < 0) return true;
      for (int gi : {g1, g2}) {
        const auto& g = groups[static_cast<std::size_t>(gi)];
        if (std::find(g.begin(), g.end(), label) != g.end()) return true;
      }
      return false;
    };
    const bool must_accept = one_order && in_groups(innermost(sc.d), 1, 2) && in_groups(innermost(sc.a), 1, 3) && in_groups(innermost(sc.b), 3, 2);
    const bool got = check_form<double>(rng, sc, "gemm-shaped #" + std::to_string(it));
    if (must_accept) {
      ++must;
      EXPECT_TRUE(got) << "#" << it << ": " << kerntest::describe(sc);
    }
    accepted += got ? 1 : 0;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(must, 500);
  EXPECT_GE(accepted, must);
}

// ---- lower_to_gemm_with_copies -------------------------------------------------------------------

/// Copies operand `o` (extents, strides) from `src` into `dst` at `dst_strides`.
template <class T>
void host_copy(const strided_operand& o, const std::vector<i64>& dst_strides, const T* src, T* dst) {
  const std::vector<i64> from = kerntest::all_offsets(o.extents, o.strides);
  const std::vector<i64> to = kerntest::all_offsets(o.extents, dst_strides);
  for (std::size_t i = 0; i < from.size(); ++i) dst[to[i]] = src[from[i]];
}

/// Runs the form with copies as a program would (copy A and B, GEMM, copy D into place) and checks
/// it against evaluate_lowered; true when a form with copies exists.
template <class T>
bool check_copies(std::mt19937_64& rng, const kerntest::step_case& sc, const std::string& where) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const std::optional<gemm_with_copies> c = lower_to_gemm_with_copies(l);
  if (!c) return false;
  EXPECT_FALSE(lower_to_gemm(l)) << "a step that is one GEMM as it lies needs no copies";
  EXPECT_TRUE(c->copied[0] || c->copied[1] || c->copied[2]);
  const strided_operand* orig[3] = {&l.a, &l.b, &l.d};
  const strided_operand* lay[3] = {&c->step.a, &c->step.b, &c->step.d};
  for (int op = 0; op < 3; ++op) {
    EXPECT_EQ(c->elements[op], kerntest::product(orig[op]->extents));
    EXPECT_EQ(lay[op]->modes, orig[op]->modes);
    EXPECT_EQ(lay[op]->extents, orig[op]->extents);
    if (!c->copied[op]) {
      EXPECT_EQ(lay[op]->strides, orig[op]->strides) << "operand " << op << " is not copied";
    }
  }
  const kerntest::step_data<T> data = kerntest::make_step_data<T>(rng, sc, l, guards);
  std::vector<T> a2, b2, d2;
  const T* a = data.a.data();
  const T* b = data.b.data();
  if (c->copied[0]) {
    a2.assign(static_cast<std::size_t>(c->elements[0]), kerntest::sentinel_value<T>());
    host_copy(l.a, c->step.a.strides, data.a.data(), a2.data());
    a = a2.data();
  }
  if (c->copied[1]) {
    b2.assign(static_cast<std::size_t>(c->elements[1]), kerntest::sentinel_value<T>());
    host_copy(l.b, c->step.b.strides, data.b.data(), b2.data());
    b = b2.data();
  }
  std::vector<T> got(data.span_d + guards, kerntest::sentinel_value<T>());
  if (c->copied[2]) {
    d2.assign(static_cast<std::size_t>(c->elements[2]), kerntest::sentinel_value<T>());
    evaluate_gemm<T>(c->gemm, a, b, d2.data());
    host_copy(c->step.d, l.d.strides, d2.data(), got.data());
  } else {
    evaluate_gemm<T>(c->gemm, a, b, got.data());
  }
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, data.a, data.b, data.span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got, data.want, bound, tol);
  return true;
}

// Whether copies can make the step one GEMM at all: every mode of extent > 1 in two or three
// operands, none broadcast (stride 0), none twice in an operand.
bool copies_can_help(const lowered_step& l) {
  if (l.kind != lowered_kind::contraction) return false;
  std::map<std::int32_t, int> holders;
  for (const strided_operand* o : {&l.a, &l.b, &l.d}) {
    std::set<std::int32_t> seen;
    for (std::size_t i = 0; i < o->modes.size(); ++i) {
      if (o->extents[i] == 1) continue;
      if (o->strides[i] == 0 || !seen.insert(o->modes[i]).second) return false;
      ++holders[o->modes[i]];
    }
  }
  for (const auto& [mode, count] : holders)
    if (count < 2) return false;
  return true;
}

TEST(GemmLowering, CopiesTheFewestElements) {
  std::mt19937_64 rng(31);
  // A's m labels split by its k label (A: i1 j i2): only A is copied, though copying B or D costs less.
  auto a_only = make_case({0, 1, 2}, {1, 3}, {0, 2, 3}, {3, 4, 5, 2});
  ASSERT_TRUE(check_copies<double>(rng, a_only, "A copied"));
  auto c = *lower_to_gemm_with_copies(kerntest::lower(a_only));
  EXPECT_TRUE(c.copied[0]);
  EXPECT_FALSE(c.copied[1]);
  EXPECT_FALSE(c.copied[2]);
  EXPECT_EQ(c.elements[0], 60);
  EXPECT_EQ(c.copied_elements(), 60.0);
  EXPECT_EQ(c.multiply_adds(), 3.0 * 4 * 5 * 2);  // i1 j i2 k: every label once
  // batch innermost in A and in D (column-major b i j, j k b, b i k): A and D are copied, B stays.
  auto ad = make_case({0, 1, 2}, {2, 3, 0}, {0, 1, 3}, {3, 4, 5, 2}, true);
  ASSERT_TRUE(check_copies<float>(rng, ad, "A and D"));
  c = *lower_to_gemm_with_copies(kerntest::lower(ad));
  EXPECT_TRUE(c.copied[0]);
  EXPECT_FALSE(c.copied[1]);
  EXPECT_TRUE(c.copied[2]);
  // one GEMM as it lies (even with A's batch between its m and k): no copies offered
  EXPECT_FALSE(lower_to_gemm_with_copies(kerntest::lower(make_case({0, 1}, {1, 2}, {0, 2}, {3, 4, 5}))));
  EXPECT_FALSE(lower_to_gemm_with_copies(kerntest::lower(make_case({1, 0, 2}, {0, 2, 3}, {0, 1, 3}, {3, 4, 5, 2}))));
  // a one-sided sum: nothing helps
  EXPECT_FALSE(lower_to_gemm_with_copies(kerntest::lower(make_case({0, 1}, {2}, {0, 2}, {3, 4, 5}))));
}

// Random general steps: a form with copies exists exactly when the step is no GEMM as it lies and
// copies can help, and every one agrees with the reference.
TEST(GemmLowering, RandomStepsWithCopies) {
  std::mt19937_64 rng(41);
  int with_copies = 0, contractions = 0;
  for (int i = 0; i < 4000 && !::testing::Test::HasFailure(); ++i) {
    const kerntest::step_case sc = kerntest::random_general_step(rng);
    if (sc.unary) continue;
    ++contractions;
    const lowered_step l = kerntest::lower(sc);
    std::string where = std::to_string(i);
    where.insert(0, "step ");
    const bool got = i % 3 == 0 ? check_copies<std::complex<float>>(rng, sc, where) : check_copies<double>(rng, sc, where);
    EXPECT_EQ(got, !lower_to_gemm(l) && copies_can_help(l)) << "#" << i << ": " << kerntest::describe(sc);
    with_copies += got ? 1 : 0;
  }
  EXPECT_GT(with_copies, contractions / 10) << with_copies << " of " << contractions;
}

}  // namespace
}  // namespace tnrt
