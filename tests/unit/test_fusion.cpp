// Fused small steps (src/core/fusion.hpp), on the host:
//  - plan_fusion on random trees (fixed, logged seeds) and on the reference network, against an
//    independent recursive statement of the rule: the absorbed steps are exactly those of the
//    maximal subtrees whose every step has operands and result of at most max_elements elements
//    and whose leaves are inputs, keeping only subtrees of at least min_subtree_steps steps; each
//    subtree in topological order with its root last; library_steps the rest, in order;
//    is_absorbed / is_root consistent.
//  - describe_small_step + evaluate_small_step against evaluate_lowered (the trusted reference) on
//    hundreds of random steps in all four dtypes (row/column-major, permuted and padded layouts,
//    diagonals, one-sided sums, batch labels, outer products, scalars, unary steps). Errors are
//    bounded per element by 2 (N + 2) eps sum|terms| (N terms summed in two different orders).
//    Inputs are followed by NaN guards (a read past the operand shows up), D's padding holds a
//    sentinel that must survive, and every element of D must be written.
//  - records refused: too many modes, strides or counts beyond 32 bits (record left untouched).
//  - a whole-tree host simulation of the compiled program: absorbed subtrees first, through
//    evaluate_small_step, then the library steps through evaluate_lowered, vs tnrt::cpu::contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/fusion.hpp"
#include "core/small_step_index.hpp"
#include "core/step_lowering.hpp"
#include "support/kernel_random.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {
namespace {

using kerntest::i64;

// ---- plan_fusion against an independent statement of the rule ----------------------------------

struct expected_plan {
  std::vector<std::set<int>> subtrees;  // step sets of the absorbed subtrees
  std::set<int> absorbed;
};

expected_plan expected_fusion(const problem& p, const fusion_limits& lim) {
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  const auto labels = operand_labels(p.net, p.tree);
  auto fits = [&](int id) { return element_count(p.net.shape_of(labels[static_cast<std::size_t>(id)])) <= lim.max_elements; };
  auto is_step = [&](int id) { return id >= 0 && static_cast<std::size_t>(id) >= n; };
  // all_small(k): step k and every step below it fit.
  std::function<bool(int)> all_small = [&](int k) -> bool {
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    if (!fits(s.lhs) || (s.rhs >= 0 && !fits(s.rhs)) || !fits(static_cast<int>(n) + k)) return false;
    for (int id : {s.lhs, s.rhs})
      if (is_step(id) && !all_small(id - static_cast<int>(n))) return false;
    return true;
  };
  std::function<void(int, std::set<int>&)> collect = [&](int k, std::set<int>& out) {
    out.insert(k);
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    for (int id : {s.lhs, s.rhs})
      if (is_step(id)) collect(id - static_cast<int>(n), out);
  };
  std::vector<int> consumer(steps, -1);
  for (std::size_t k = 0; k < steps; ++k)
    for (int id : {p.tree.steps[k].lhs, p.tree.steps[k].rhs})
      if (is_step(id)) consumer[static_cast<std::size_t>(id) - n] = static_cast<int>(k);
  expected_plan e;
  for (std::size_t k = 0; k < steps; ++k) {
    if (!all_small(static_cast<int>(k))) continue;
    const int c = consumer[k];
    if (c >= 0 && all_small(c)) continue;  // not maximal
    std::set<int> sub;
    collect(static_cast<int>(k), sub);
    if (static_cast<int>(sub.size()) < lim.min_subtree_steps) continue;
    e.subtrees.push_back(sub);
    e.absorbed.insert(sub.begin(), sub.end());
  }
  return e;
}

void check_plan(const problem& p, const fusion_limits& lim, const fusion_plan& f, const std::string& where) {
  SCOPED_TRACE(where);
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  const expected_plan e = expected_fusion(p, lim);
  ASSERT_EQ(f.is_absorbed.size(), steps);
  ASSERT_EQ(f.subtrees(), e.subtrees.size()) << "number of subtrees";
  if (f.subtrees() > 0) {
    EXPECT_EQ(f.subtree_begin.front(), 0);
    EXPECT_EQ(static_cast<std::size_t>(f.subtree_begin.back()), f.absorbed.size());
  }
  std::vector<std::set<int>> got;
  std::set<int> absorbed;
  for (std::size_t s = 0; s < f.subtrees(); ++s) {
    const auto b = static_cast<std::size_t>(f.subtree_begin[s]), end = static_cast<std::size_t>(f.subtree_begin[s + 1]);
    ASSERT_LT(b, end) << "empty subtree " << s;
    ASSERT_LE(end, f.absorbed.size());
    EXPECT_GE(static_cast<int>(end - b), lim.min_subtree_steps) << "subtree " << s << " below min_subtree_steps";
    std::set<int> sub;
    for (std::size_t i = b; i < end; ++i) {
      const int k = f.absorbed[i];
      ASSERT_GE(k, 0);
      ASSERT_LT(static_cast<std::size_t>(k), steps);
      // topological: every step operand of k is earlier in the same subtree
      const step& st = p.tree.steps[static_cast<std::size_t>(k)];
      for (int id : {st.lhs, st.rhs}) {
        if (id < 0 || static_cast<std::size_t>(id) < n) continue;
        const int child = id - static_cast<int>(n);
        EXPECT_TRUE(sub.count(child) == 1) << "subtree " << s << ": step " << k << " comes before its operand step " << child
                                           << " (or that step is outside the subtree)";
      }
      EXPECT_TRUE(absorbed.insert(k).second) << "step " << k << " absorbed twice";
      sub.insert(k);
    }
    // levels: 0 for a step whose operands are inputs, else 1 + its operand steps' largest; the
    // subtree's entries never go down a level, and the root alone is on the top one.
    ASSERT_EQ(f.level.size(), f.absorbed.size());
    for (std::size_t i = b; i < end; ++i) {
      const step& st = p.tree.steps[static_cast<std::size_t>(f.absorbed[i])];
      int want = 0;
      for (int id : {st.lhs, st.rhs}) {
        if (id < 0 || static_cast<std::size_t>(id) < n) continue;
        const auto at = std::find(f.absorbed.begin() + static_cast<std::ptrdiff_t>(b),
                                  f.absorbed.begin() + static_cast<std::ptrdiff_t>(end), id - static_cast<int>(n));
        ASSERT_NE(at, f.absorbed.begin() + static_cast<std::ptrdiff_t>(end));
        want = std::max(want, 1 + f.level[static_cast<std::size_t>(at - f.absorbed.begin())]);
      }
      EXPECT_EQ(f.level[i], want) << "level of step " << f.absorbed[i];
      if (i > b) {
        EXPECT_LE(f.level[i - 1], f.level[i]) << "subtree " << s << " goes down a level at entry " << i;
      }
      if (i + 1 < end) {
        EXPECT_LT(f.level[i], f.level[end - 1]) << "subtree " << s << ": the root must be alone on the top level";
      }
    }
    // the root is last: no other step of the subtree consumes it; every other step is consumed inside.
    const int root = f.absorbed[end - 1];
    EXPECT_TRUE(f.is_root(root)) << "subtree " << s << " root " << root;
    for (std::size_t i = b; i + 1 < end; ++i) {
      EXPECT_FALSE(f.is_root(f.absorbed[i])) << "step " << f.absorbed[i] << " is not its subtree's root";
      bool consumed_inside = false;
      for (std::size_t j = b; j < end; ++j) {
        const step& st = p.tree.steps[static_cast<std::size_t>(f.absorbed[j])];
        if (st.lhs == static_cast<int>(n) + f.absorbed[i] || st.rhs == static_cast<int>(n) + f.absorbed[i]) consumed_inside = true;
      }
      EXPECT_TRUE(consumed_inside) << "step " << f.absorbed[i] << " of subtree " << s << " is consumed outside it";
    }
    got.push_back(sub);
  }
  // the same subtrees as the rule (order of subtrees aside)
  auto sorted = [](std::vector<std::set<int>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(got), sorted(e.subtrees)) << "absorbed subtrees differ from the rule";
  EXPECT_EQ(absorbed, e.absorbed);
  // is_absorbed, library_steps: the complement, in order
  std::vector<int> library;
  for (std::size_t k = 0; k < steps; ++k) {
    EXPECT_EQ(f.is_absorbed[k] != 0, absorbed.count(static_cast<int>(k)) == 1) << "is_absorbed[" << k << "]";
    if (absorbed.count(static_cast<int>(k)) == 0) library.push_back(static_cast<int>(k));
  }
  EXPECT_EQ(f.library_steps, library) << "library_steps must be the non-absorbed steps in order";
  EXPECT_EQ(f.absorbed.size() + f.library_steps.size(), steps);
}

kerntest::tree_spec fusion_tree_spec() {
  kerntest::tree_spec spec;
  spec.min_inputs = 2;
  spec.max_inputs = 14;
  spec.max_labels = 14;
  spec.max_extent = 4;
  spec.max_rank = 5;
  spec.max_elements = 1 << 16;
  return spec;
}

TEST(PlanFusion, RandomTreesMatchTheRule) {
  const std::uint64_t base = 7100;
  std::printf("[plan_fusion] seeds %llu..%llu\n", static_cast<unsigned long long>(base), static_cast<unsigned long long>(base + 299));
  int with_subtrees = 0, total_subtrees = 0, total_absorbed = 0, total_steps = 0;
  const fusion_limits limit_sets[] = {{1024, 2}, {64, 2}, {16, 1}, {1, 2}, {256, 3}, {1 << 20, 2}};
  for (std::uint64_t i = 0; i < 300; ++i) {
    std::uint64_t used = 0;
    const problem p = kerntest::random_tree_problem(fusion_tree_spec(), base * 1000 + i * 37, dtype::f32, &used);
    for (const fusion_limits& lim : limit_sets) {
      const fusion_plan f = plan_fusion(p, lim);
      check_plan(p, lim, f,
                 p.source + " max_elements " + std::to_string(lim.max_elements) + " min_subtree_steps " + std::to_string(lim.min_subtree_steps));
      if (HasFatalFailure()) return;
      if (f.subtrees() > 0) ++with_subtrees;
      total_subtrees += static_cast<int>(f.subtrees());
      total_absorbed += static_cast<int>(f.absorbed.size());
      total_steps += static_cast<int>(p.tree.steps.size());
    }
  }
  std::printf("[plan_fusion] %d plans with subtrees; %d subtrees, %d of %d steps absorbed\n", with_subtrees, total_subtrees, total_absorbed,
              total_steps);
  EXPECT_GT(with_subtrees, 100) << "the random trees should often have fusable subtrees";
}

TEST(PlanFusion, HandBuiltTree) {
  // ((x0 x1) (x2 x3)) then x4 (large): steps 0, 1, 2 small and one subtree; step 3 large.
  problem p;
  p.net.extents = {2, 2, 2, 64, 2};
  p.net.label_names = {"a", "b", "c", "d", "e"};
  p.net.inputs = {{0, 1}, {1, 2}, {2, 4}, {4, 0}, {0, 3, 2}};
  p.net.output = {3};
  p.tree.steps = {step{0, 1, {0, 2}}, step{2, 3, {2, 0}}, step{5, 6, {0, 2}}, step{7, 4, {3}}};
  validate(p.net, p.tree);
  const fusion_plan f = plan_fusion(p, fusion_limits{16, 2});
  check_plan(p, fusion_limits{16, 2}, f, "hand-built");
  ASSERT_EQ(f.subtrees(), 1U);
  EXPECT_EQ(f.absorbed, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(f.library_steps, (std::vector<int>{3}));
  EXPECT_TRUE(f.is_root(2));
  // min_subtree_steps above the subtree's size: nothing absorbed
  const fusion_plan none = plan_fusion(p, fusion_limits{16, 4});
  EXPECT_EQ(none.subtrees(), 0U);
  EXPECT_TRUE(none.absorbed.empty());
  EXPECT_EQ(none.library_steps, (std::vector<int>{0, 1, 2, 3}));
  // everything small: the whole tree is one subtree
  const fusion_plan all = plan_fusion(p, fusion_limits{1 << 20, 2});
  ASSERT_EQ(all.subtrees(), 1U);
  EXPECT_EQ(all.absorbed, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(all.library_steps.empty());
  // a step that fits no record (step_fits): neither it nor what is above it is absorbed, the rest is
  const std::vector<char> fits{1, 0, 1, 1};
  fusion_limits lim{1 << 20, 2};
  lim.step_fits = &fits;
  const fusion_plan some = plan_fusion(p, lim);
  EXPECT_EQ(some.subtrees(), 0U) << "step 0 alone is under min_subtree_steps; 1, 2, 3 sit on step 1";
  EXPECT_EQ(some.library_steps, (std::vector<int>{0, 1, 2, 3}));
  const std::vector<char> top{1, 1, 1, 0};
  lim.step_fits = &top;
  const fusion_plan below = plan_fusion(p, lim);
  ASSERT_EQ(below.subtrees(), 1U);
  EXPECT_EQ(below.absorbed, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(below.library_steps, (std::vector<int>{3}));
}

std::filesystem::path source_dir() {
  const char* env = std::getenv("TNRT_SOURCE_DIR");
  return env != nullptr ? std::filesystem::path(env) : std::filesystem::path();
}

TEST(PlanFusion, ReferenceNetwork) {
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const auto path = source_dir() / "data" / "tensornetwork_permutation_optimized.json";
  const problem p = load_tree_json_file(path.string(), tree_json_options{});
  const fusion_limits lim{};
  const fusion_plan f = plan_fusion(p, lim);
  check_plan(p, lim, f, "reference network");
  std::printf("[reference network] %zu steps: %zu subtrees, %zu absorbed, %zu library steps\n", p.tree.steps.size(), f.subtrees(),
              f.absorbed.size(), f.library_steps.size());
  EXPECT_GE(f.subtrees(), 20U);
  EXPECT_GE(f.absorbed.size(), 400U);
  // every absorbed step fits a record under each intermediate layout
  for (layout_policy pol : all_layouts) {
    const kerntest::lowered_tree lt = kerntest::lower_tree(p, pol);
    int refused = 0;
    for (int k : f.absorbed) {
      small_step_record r;
      if (!describe_small_step(lt.steps[static_cast<std::size_t>(k)], nullptr, nullptr, nullptr, r)) ++refused;
    }
    EXPECT_EQ(refused, 0) << kerntest::name_of_policy(pol);
  }
}

// ---- describe_small_step + evaluate_small_step vs evaluate_lowered -----------------------------

struct step_stats {
  int checked = 0, refused = 0, unary = 0, scalar_out = 0, pow2 = 0, staged = 0;
};

// Operand buffers: span elements, then `guards` NaN elements.
constexpr std::size_t guards = 8;

template <class T>
void check_small_step(std::mt19937_64& rng, const kerntest::step_case& sc, const std::string& where, step_stats& st) {
  SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  SCOPED_TRACE("lowered: " + kerntest::describe(l));
  const std::vector<T> a = kerntest::random_operand<T>(rng, sc.a, sc.extents, guards);
  const std::vector<T> b = sc.unary ? std::vector<T>{} : kerntest::random_operand<T>(rng, sc.b, sc.extents, guards);
  const auto span_d = static_cast<std::size_t>(kerntest::span_of(sc.d, sc.extents));
  // Padding inside the operands' spans stays NaN: neither evaluation may read it.
  std::vector<T> want(span_d + guards, kerntest::sentinel_value<T>()), got(span_d + guards, kerntest::sentinel_value<T>());
  evaluate_lowered<T>(l, a.data(), sc.unary ? nullptr : b.data(), want.data());

  small_step_record r;
  r.n_out = -7;  // untouched on refusal
  if (!describe_small_step(l, a.data(), sc.unary ? nullptr : b.data(), got.data(), r)) {
    EXPECT_EQ(r.n_out, -7) << "a refused record must be left untouched";
    ++st.refused;
    return;
  }
  ++st.checked;
  st.unary += sc.unary ? 1 : 0;
  st.scalar_out += sc.d.labels.empty() ? 1 : 0;
  EXPECT_EQ(r.b == nullptr, sc.unary) << "a reduction's record has no B";
  EXPECT_LE(r.n_out, small_step_max_modes);
  EXPECT_LE(r.n_sum, small_step_max_modes);
  i64 out_count = 1, sum_count = 1;
  for (int i = 0; i < r.n_out; ++i) out_count *= r.out_extent[i];
  for (int i = 0; i < r.n_sum; ++i) sum_count *= r.sum_extent[i];
  EXPECT_EQ(out_count, r.out_count);
  EXPECT_EQ(sum_count, r.sum_count);
  EXPECT_EQ(r.out_count, kerntest::product(l.d.extents)) << "one thread per element of D";
  EXPECT_EQ(r.sum_count, kerntest::sum_length(l));
  // pow2 exactly when every extent is a power of two; its shift-and-mask decode must give the
  // division decode's result bit for bit (the same terms in the same order).
  bool all_pow2 = true;
  for (int i = 0; i < r.n_out; ++i) all_pow2 = all_pow2 && std::has_single_bit(static_cast<unsigned>(r.out_extent[i]));
  for (int i = 0; i < r.n_sum; ++i) all_pow2 = all_pow2 && std::has_single_bit(static_cast<unsigned>(r.sum_extent[i]));
  EXPECT_EQ(r.pow2 != 0, all_pow2);
  // The spans the kernel stages in shared memory: 1 + the largest offset any term reads.
  i64 max_a = 0, max_b = 0;
  for (std::int32_t o = 0; o < r.out_count; ++o) {
    std::int64_t ao = 0, bo = 0, dof = 0;
    small_step_index::out_offsets(r, o, ao, bo, dof);
    for (std::int32_t k = 0; k < r.sum_count; ++k) {
      std::int64_t ak = 0, bk = 0;
      small_step_index::sum_offsets(r, k, ak, bk);
      max_a = std::max(max_a, ao + ak);
      max_b = std::max(max_b, bo + bk);
    }
  }
  if (max_a < small_step_stage_elements && (sc.unary || max_b < small_step_stage_elements)) {
    ++st.staged;
    EXPECT_EQ(r.a_span, max_a + 1);
    EXPECT_EQ(r.b_span, sc.unary ? 0 : max_b + 1);
  } else {
    EXPECT_EQ(r.a_span, 0);
    EXPECT_EQ(r.b_span, 0);
  }
  // Not staged when asked so (options::fuse_stage false): the same record, spans 0.
  small_step_record unstaged;
  ASSERT_TRUE(describe_small_step(l, a.data(), sc.unary ? nullptr : b.data(), got.data(), unstaged, false));
  EXPECT_EQ(unstaged.a_span, 0);
  EXPECT_EQ(unstaged.b_span, 0);
  EXPECT_EQ(unstaged.out_count, r.out_count);
  EXPECT_EQ(unstaged.sum_count, r.sum_count);
  EXPECT_EQ(unstaged.pow2, r.pow2);
  evaluate_small_step<T>(r);
  if (r.pow2 != 0) {
    ++st.pow2;
    std::vector<T> by_division(got.size(), kerntest::sentinel_value<T>());
    small_step_record div = r;
    div.pow2 = 0;
    div.d = by_division.data();
    evaluate_small_step<T>(div);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_TRUE(kerntest::same_bits_value(got[i], by_division[i])) << "element " << i << ": the two decodes differ";
  }

  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a, b, span_d + guards);
  const double tol = 2.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  kerntest::check_d<T>(l, got, want, bound, tol);
}

template <class T>
void random_small_steps(std::uint64_t seed, int count, step_stats& st) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const kerntest::step_case sc = kerntest::random_general_step(rng);
    check_small_step<T>(rng, sc, std::string(kerntest::type_name<T>()) + " seed " + std::to_string(seed) + " step #" + std::to_string(i), st);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(SmallStepRecord, RandomStepsMatchEvaluateLowered) {
  const std::uint64_t seed = 424242;
  std::printf("[small steps] seed %llu (+0..3 by dtype), 400 steps per dtype\n", static_cast<unsigned long long>(seed));
  step_stats st;
  random_small_steps<float>(seed, 400, st);
  random_small_steps<double>(seed + 1, 400, st);
  random_small_steps<std::complex<float>>(seed + 2, 400, st);
  random_small_steps<std::complex<double>>(seed + 3, 400, st);
  std::printf("[small steps] %d checked (%d unary, %d scalar results), %d refused\n", st.checked, st.unary, st.scalar_out, st.refused);
  EXPECT_EQ(st.refused, 0) << "no random step here has more than 12 modes";
  EXPECT_GT(st.unary, 100);
  EXPECT_GT(st.scalar_out, 50);
  EXPECT_GT(st.pow2, 100) << "the power-of-two decode must be exercised";
  EXPECT_GT(st.staged, 1000) << "operands staged in shared memory";
  EXPECT_LT(st.pow2, st.checked) << "and the division decode too";
}

// A hand-made lowered step: n_out output modes and n_sum summed modes of extent `e`.
lowered_step wide_step(int n_out, int n_sum, i64 e, int n_ones = 0) {
  lowered_step l;
  std::int32_t mode = 0;
  std::vector<i64> a_ext;
  for (int i = 0; i < n_out + n_sum + n_ones; ++i) {
    const i64 ext = i < n_out + n_sum ? e : 1;
    l.a.modes.push_back(mode);
    l.a.extents.push_back(ext);
    l.b.modes.push_back(mode);
    l.b.extents.push_back(ext);
    if (i < n_out || i >= n_out + n_sum) {
      l.d.modes.push_back(mode);
      l.d.extents.push_back(ext);
    }
    ++mode;
  }
  l.a.strides = dense_strides(l.a.extents, false);
  l.b.strides = dense_strides(l.b.extents, true);
  l.d.strides = dense_strides(l.d.extents, false);
  return l;
}

TEST(SmallStepRecord, RefusesWhatDoesNotFit) {
  small_step_record r;
  r.n_out = -3;
  EXPECT_TRUE(describe_small_step(wide_step(small_step_max_modes, 2, 2), nullptr, nullptr, nullptr, r)) << "12 output modes fit";
  EXPECT_EQ(r.n_out, small_step_max_modes);
  r.n_out = -3;
  EXPECT_FALSE(describe_small_step(wide_step(small_step_max_modes + 1, 1, 2), nullptr, nullptr, nullptr, r)) << "13 output modes";
  EXPECT_EQ(r.n_out, -3) << "record untouched";
  EXPECT_TRUE(describe_small_step(wide_step(1, small_step_max_modes, 2), nullptr, nullptr, nullptr, r)) << "12 summed modes fit";
  r.n_out = -3;
  EXPECT_FALSE(describe_small_step(wide_step(1, small_step_max_modes + 1, 2), nullptr, nullptr, nullptr, r)) << "13 summed modes";
  EXPECT_EQ(r.n_out, -3);
  // extent-1 modes never count
  EXPECT_TRUE(describe_small_step(wide_step(3, 3, 2, 20), nullptr, nullptr, nullptr, r));
  EXPECT_EQ(r.n_out, 3);
  EXPECT_EQ(r.n_sum, 3);
  // a stride beyond 32 bits
  lowered_step big = wide_step(2, 1, 2);
  big.a.strides[0] = i64{1} << 33;
  r.n_out = -3;
  EXPECT_FALSE(describe_small_step(big, nullptr, nullptr, nullptr, r)) << "stride 2^33";
  EXPECT_EQ(r.n_out, -3);
  // a count beyond 32 bits (never reached by small steps, but the record must refuse it)
  lowered_step huge = wide_step(0, 0, 1);
  huge.a.modes = {0, 1};
  huge.a.extents = {1 << 20, 1 << 12};
  huge.a.strides = {1 << 12, 1};
  huge.b = huge.a;
  huge.d = huge.a;
  r.n_out = -3;
  EXPECT_FALSE(describe_small_step(huge, nullptr, nullptr, nullptr, r)) << "2^32 outputs";
  EXPECT_EQ(r.n_out, -3);
}

// ---- the whole tree on the host, as the compiled program runs it --------------------------------

// Runs `p` with the absorbed subtrees through evaluate_small_step first (in subtree order), then
// the library steps through evaluate_lowered, and also every step through evaluate_lowered (the
// reference chain) and |values| through it (the bound). Compares the result to cpu::contract.
template <class T>
void simulate_tree(const problem& p, const fusion_limits& lim, layout_policy pol, std::uint64_t data_seed, const std::string& where,
                   int& fused_steps) {
  SCOPED_TRACE(where);
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  const kerntest::lowered_tree lt = kerntest::lower_tree(p, pol);
  const auto labels = operand_labels(p.net, p.tree);
  const auto in = kerntest::random_tree_inputs(p, data_seed);
  const fusion_plan f = plan_fusion(p, lim);

  std::vector<std::vector<T>> buf(n + steps), ref(n + steps);
  std::vector<std::vector<double>> mag(n + steps);
  std::vector<char> ready(n + steps, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const T* x = in[i].as<T>();
    buf[i].assign(x, x + in[i].size());
    ref[i] = buf[i];
    for (const T& v : buf[i]) mag[i].push_back(kerntest::magnitude(v));
    ready[i] = 1;
  }
  for (std::size_t k = 0; k < steps; ++k) {
    const auto e = static_cast<std::size_t>(element_count(p.net.shape_of(labels[n + k])));
    buf[n + k].assign(e, kerntest::guard_value<T>());
    ref[n + k].assign(e, T{});
    mag[n + k].assign(e, 0.0);
  }
  auto run_small = [&](int k) {
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    ASSERT_TRUE(ready[static_cast<std::size_t>(s.lhs)] != 0 && (s.rhs < 0 || ready[static_cast<std::size_t>(s.rhs)] != 0))
        << "absorbed step " << k << " runs before its operands";
    small_step_record r;
    ASSERT_TRUE(describe_small_step(lt.steps[static_cast<std::size_t>(k)], buf[static_cast<std::size_t>(s.lhs)].data(),
                                    s.rhs >= 0 ? buf[static_cast<std::size_t>(s.rhs)].data() : nullptr, buf[n + static_cast<std::size_t>(k)].data(), r))
        << "absorbed step " << k << " does not fit a record";
    evaluate_small_step<T>(r);
    ready[n + static_cast<std::size_t>(k)] = 1;
  };
  auto run_library = [&](int k) {
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    ASSERT_TRUE(ready[static_cast<std::size_t>(s.lhs)] != 0 && (s.rhs < 0 || ready[static_cast<std::size_t>(s.rhs)] != 0))
        << "library step " << k << " runs before its operands";
    evaluate_lowered<T>(lt.steps[static_cast<std::size_t>(k)], buf[static_cast<std::size_t>(s.lhs)].data(),
                        s.rhs >= 0 ? buf[static_cast<std::size_t>(s.rhs)].data() : nullptr, buf[n + static_cast<std::size_t>(k)].data());
    ready[n + static_cast<std::size_t>(k)] = 1;
  };
  for (int k : f.absorbed) {
    run_small(k);
    if (::testing::Test::HasFatalFailure()) return;
  }
  fused_steps += static_cast<int>(f.absorbed.size());
  for (int k : f.library_steps) {
    run_library(k);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (std::size_t k = 0; k < steps; ++k) {
    const step& s = p.tree.steps[k];
    evaluate_lowered<T>(lt.steps[k], ref[static_cast<std::size_t>(s.lhs)].data(), s.rhs >= 0 ? ref[static_cast<std::size_t>(s.rhs)].data() : nullptr,
                        ref[n + k].data());
    evaluate_lowered<double>(lt.steps[k], mag[static_cast<std::size_t>(s.lhs)].data(), s.rhs >= 0 ? mag[static_cast<std::size_t>(s.rhs)].data() : nullptr,
                             mag[n + k].data());
  }
  const std::size_t res = static_cast<std::size_t>(p.tree.result_id(n));
  const host_tensor want = cpu::contract(p, in);
  ASSERT_EQ(static_cast<std::size_t>(want.size()), buf[res].size());
  const double tol = 64.0 * static_cast<double>(steps + 1) * kerntest::eps_of<T>();
  // sum over the tree's steps of their lengths bounds the rounding of any product-sum chain
  int bad = 0;
  for (std::size_t i = 0; i < buf[res].size() && bad < 5; ++i) {
    const double bound = mag[res][i] * 16.0;  // generous factor: cpu::contract sums in its own order
    const double e_cpu = static_cast<double>(std::abs(buf[res][i] - want.as<T>()[i]));
    const double e_ref = static_cast<double>(std::abs(buf[res][i] - ref[res][i]));
    if (!(e_cpu <= tol * bound) || !(e_ref <= tol * bound)) {
      ADD_FAILURE() << "result element " << i << ": fused " << buf[res][i] << ", cpu::contract " << want.as<T>()[i] << ", lowered chain "
                    << ref[res][i] << " (bound " << mag[res][i] << ")";
      ++bad;
    }
  }
}

// ---- groups and the shared scratch, as the kernel runs them ----------------------------------------

// The absorbed subtrees of `p` run as the fused kernel runs them: records grouped by
// group_small_steps, intermediates at plan_fusion_scratch's offsets in ONE shared scratch block,
// roots and inputs in buffers of their own. A group runs last record first (the kernel gives no
// order inside a group), so a group whose results overlapped what another record of it reads, or
// each other, would change a root. The roots must
// equal, bit for bit, those of the steps run one by one in buffers of their own. Also checks the
// groups' shape. Returns the number of groups with more than one record.
int grouped_scratch_run(const problem& p, const fusion_limits& lim, layout_policy pol, std::uint64_t data_seed,
                        const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(p.type, dtype::f64) << "grouped_scratch_run computes in double";
  if (p.type != dtype::f64) return 0;
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  const fusion_plan f = plan_fusion(p, lim);
  if (f.subtrees() == 0) return 0;
  const kerntest::lowered_tree lt = kerntest::lower_tree(p, pol);
  const auto labels = operand_labels(p.net, p.tree);
  const auto in = kerntest::random_tree_inputs(p, data_seed);
  const std::vector<int> consumer = step_consumers(p.net, p.tree);
  auto elements = [&](std::size_t id) { return static_cast<std::size_t>(element_count(p.net.shape_of(labels[id]))); };
  const fusion_scratch fs = plan_fusion_scratch(
      f, consumer, [&](int k) { return elements(n + static_cast<std::size_t>(k)) * sizeof(double); }, 256);
  std::vector<double> scratch(fs.bytes / sizeof(double) + 1, kerntest::guard_value<double>());
  std::vector<std::vector<double>> own(n + steps), alone(n + steps);  // inputs and roots; every operand, one by one
  for (std::size_t i = 0; i < n; ++i) own[i].assign(in[i].as<double>(), in[i].as<double>() + in[i].size());
  alone = own;
  auto is_root = [&](std::size_t k) {
    return consumer[k] < 0 || f.is_absorbed[static_cast<std::size_t>(consumer[k])] == 0;
  };
  auto ptr = [&](int id) -> double* {
    const auto u = static_cast<std::size_t>(id);
    if (u < n || is_root(u - n)) return own[u].data();
    return scratch.data() + fs.offset[u - n] / sizeof(double);
  };
  std::vector<small_step_record> records(f.absorbed.size());
  for (std::size_t i = 0; i < f.absorbed.size(); ++i) {
    const auto k = static_cast<std::size_t>(f.absorbed[i]);
    const step& st = p.tree.steps[k];
    if (is_root(k)) own[n + k].assign(elements(n + k), kerntest::guard_value<double>());
    alone[n + k].assign(elements(n + k), kerntest::guard_value<double>());
    if (!is_root(k)) {
      EXPECT_EQ(fs.offset[k] % 256, 0U) << "scratch offset of step " << k;
      EXPECT_LE(fs.offset[k] + elements(n + k) * sizeof(double), fs.bytes)
          << "scratch of step " << k << " past the block";
    }
    EXPECT_TRUE(describe_small_step(lt.steps[k], ptr(st.lhs), st.rhs >= 0 ? ptr(st.rhs) : nullptr,
                                    ptr(static_cast<int>(n + k)), records[i],
                                    i % 3 == 0))  // some staged (a_span > 0): those stay alone
        << "step " << k;
  }
  if (::testing::Test::HasFailure()) return 0;
  group_small_steps(f, records, true);
  int multi = 0;
  for (std::size_t t = 0; t < f.subtrees(); ++t) {
    const auto b = static_cast<std::size_t>(f.subtree_begin[t]), e = static_cast<std::size_t>(f.subtree_begin[t + 1]);
    for (std::size_t i = b; i < e;) {
      const auto g = static_cast<std::size_t>(records[i].group_left);
      EXPECT_GE(g, 1U);
      EXPECT_LE(g, static_cast<std::size_t>(small_step_group_max));
      EXPECT_LE(i + g, e) << "a group leaves its subtree";
      if (::testing::Test::HasFailure()) return 0;
      std::int64_t outputs = 0;
      for (std::size_t x = i; x < i + g; ++x) {
        EXPECT_EQ(records[x].group_left, static_cast<std::int32_t>(i + g - x));
        EXPECT_EQ(f.level[x], f.level[i]) << "a group spans two levels";
        if (g > 1) {
          EXPECT_EQ(records[x].a_span, 0) << "a staged record shares its group";
        }
        outputs += records[x].out_count;
      }
      if (g > 1) {
        EXPECT_LE(outputs, small_step_group_outputs);
        ++multi;
      }
      // Run the group last record first: the planned order (first record first) would hide a result
      // placed over what an earlier record of the group still reads.
      for (std::size_t x = g; x-- > 0;) evaluate_small_step<double>(records[i + x]);
      i += g;
    }
  }
  // One by one, each result in a buffer of its own.
  for (int kk : f.absorbed) {
    const auto k = static_cast<std::size_t>(kk);
    const step& st = p.tree.steps[k];
    small_step_record r;
    EXPECT_TRUE(describe_small_step(lt.steps[k], alone[static_cast<std::size_t>(st.lhs)].data(),
                                    st.rhs >= 0 ? alone[static_cast<std::size_t>(st.rhs)].data() : nullptr,
                                    alone[n + k].data(), r));
    evaluate_small_step<double>(r);
    if (is_root(k)) {
      const auto& got = own[n + k];
      const auto& want = alone[n + k];
      for (std::size_t x = 0; x < want.size(); ++x)
        if (std::memcmp(&got[x], &want[x], sizeof(double)) != 0) {
          ADD_FAILURE() << "root step " << k << " element " << x << ": grouped over shared scratch " << got[x]
                        << ", one by one " << want[x];
          break;
        }
    }
  }
  return multi;
}

TEST(FusionGroups, SharedScratchAndGroupsKeepEveryRoot) {
  const std::uint64_t base = 5309;
  std::printf("[groups] seeds from %llu\n", static_cast<unsigned long long>(base));
  kerntest::tree_spec spec = fusion_tree_spec();
  spec.max_inputs = 24;
  const fusion_limits limit_sets[] = {{1024, 2}, {64, 2}, {1 << 20, 2}};
  const layout_policy policies[] = {layout_policy::column_major, layout_policy::row_major, layout_policy::follow};
  int multi = 0;
  for (int i = 0; i < 150; ++i) {
    std::uint64_t used = 0;
    const problem p = kerntest::random_tree_problem(spec, base + static_cast<std::uint64_t>(i) * 17, dtype::f64, &used);
    multi += grouped_scratch_run(p, limit_sets[static_cast<std::size_t>(i) % 3],
                                 policies[static_cast<std::size_t>(i / 3) % 3], used + 1,
                                 p.source + " (" + std::to_string(p.tree.steps.size()) + " steps)");
    if (HasFailure()) return;
  }
  std::printf("[groups] %d groups of several records over the random trees\n", multi);
  EXPECT_GT(multi, 50);
  if (source_dir().empty())
    GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest): reference network left out";
  tree_json_options opt;
  opt.type = dtype::f64;
  const problem ref =
      load_tree_json_file((source_dir() / "data" / "tensornetwork_permutation_optimized.json").string(), opt);
  for (layout_policy pol : policies) {
    const int m = grouped_scratch_run(ref, fusion_limits{}, pol, 2718,
                                      "reference network " + std::string(kerntest::name_of_policy(pol)));
    std::printf("[groups] reference network, %s: %d groups of several records\n", kerntest::name_of_policy(pol), m);
    EXPECT_GT(m, 20);
  }
}

TEST(FusionGroups, BalancedTreeGroupsCrossALaunchOfRecords) {
  // The GPU test's trees (test_cuda_kernels.cpp, SmallStepsAbsorbedSubtrees): with 80 matrices the
  // level-3 group is records 70..74, which the from-host path's launches of 72 records split.
  static_assert(small_step_group_max == 8, "the expected groups below assume 8");
  const problem p = kerntest::balanced_matrix_tree(dtype::f64, 80, 4);  // f64: grouped_scratch_run's type
  const fusion_plan f = plan_fusion(p, fusion_limits{1024, 2});
  ASSERT_EQ(f.subtrees(), 1U);
  ASSERT_EQ(f.absorbed.size(), 79U);
  EXPECT_EQ(f.level.back(), 6);
  const kerntest::lowered_tree lt = kerntest::lower_tree(p, layout_policy::column_major);
  std::vector<small_step_record> records(f.absorbed.size());
  for (std::size_t i = 0; i < f.absorbed.size(); ++i)
    ASSERT_TRUE(describe_small_step(lt.steps[static_cast<std::size_t>(f.absorbed[i])], nullptr, nullptr, nullptr,
                                    records[i], false));
  group_small_steps(f, records, true);
  std::vector<int> starts;
  for (std::size_t i = 0; i < records.size(); i += static_cast<std::size_t>(records[i].group_left))
    starts.push_back(static_cast<int>(i));
  EXPECT_EQ(starts, (std::vector<int>{0, 8, 16, 24, 32, 40, 48, 56, 60, 68, 70, 75, 77, 78}));
  EXPECT_EQ(records[70].group_left, 5);
  EXPECT_EQ(records[72].group_left, 3);
  // and run so over the shared scratch (every third record staged there, so alone: more groups)
  EXPECT_GT(grouped_scratch_run(p, fusion_limits{1024, 2}, layout_policy::column_major, 77, "balanced tree of 80"), 5);
}

TEST(FusionGroups, OffKeepsEveryRecordAlone) {
  problem p;  // ((x0 x1) (x2 x3)): steps 0 and 1 on level 0, step 2 on level 1
  p.net.extents = {2, 2, 2, 2};
  p.net.label_names = {"a", "b", "c", "d"};
  p.net.inputs = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  p.net.output = {};
  p.tree.steps = {step{0, 1, {0, 2}}, step{2, 3, {2, 0}}, step{4, 5, {}}};
  validate(p.net, p.tree);
  const fusion_plan f = plan_fusion(p, fusion_limits{16, 2});
  ASSERT_EQ(f.absorbed, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(f.level, (std::vector<int>{0, 0, 1}));
  std::vector<small_step_record> records(3);
  for (auto& r : records) r.out_count = 4;
  group_small_steps(f, records, true);
  EXPECT_EQ(records[0].group_left, 2);
  EXPECT_EQ(records[1].group_left, 1);
  EXPECT_EQ(records[2].group_left, 1);
  group_small_steps(f, records, false);
  for (const auto& r : records) EXPECT_EQ(r.group_left, 1);
  records[0].a_span = 4;  // staged: alone
  group_small_steps(f, records, true);
  EXPECT_EQ(records[0].group_left, 1);
  EXPECT_EQ(records[1].group_left, 1);
  std::vector<small_step_record> wrong(2);
  EXPECT_THROW(group_small_steps(f, wrong, true), internal_error);
}

TEST(FusedTreeSimulation, MatchesCpuContract) {
  const std::uint64_t base = 90210;
  std::printf("[tree simulation] seeds from %llu\n", static_cast<unsigned long long>(base));
  kerntest::tree_spec spec = fusion_tree_spec();
  spec.max_elements = 1 << 13;
  const fusion_limits limit_sets[] = {{1024, 2}, {64, 2}, {16, 1}, {1 << 20, 1}};
  const layout_policy policies[] = {layout_policy::column_major, layout_policy::row_major, layout_policy::follow, layout_policy::planned};
  const dtype types[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};
  int trees = 0, fused = 0;
  for (int i = 0; i < 120; ++i) {
    const dtype t = types[static_cast<std::size_t>(i) % 4];
    std::uint64_t used = 0;
    const problem p = kerntest::random_tree_problem(spec, base + static_cast<std::uint64_t>(i) * 101, t, &used);
    const fusion_limits& lim = limit_sets[static_cast<std::size_t>(i / 4) % std::size(limit_sets)];
    const layout_policy pol = policies[static_cast<std::size_t>(i / 3) % std::size(policies)];
    const std::string where = p.source + " " + std::string(name_of(t)) + " " + kerntest::name_of_policy(pol) + " max_elements " +
                              std::to_string(lim.max_elements) + " (" + std::to_string(p.tree.steps.size()) + " steps)";
    visit_dtype(t, [&](auto zero) {
      using T = decltype(zero);
      simulate_tree<T>(p, lim, pol, used + 1, where, fused);
    });
    ++trees;
    if (HasFailure()) return;
  }
  std::printf("[tree simulation] %d trees, %d steps run fused\n", trees, fused);
  EXPECT_GT(fused, 200);
}

TEST(FusedTreeSimulation, ReferenceNetworkF64) {
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const auto path = source_dir() / "data" / "tensornetwork_permutation_optimized.json";
  tree_json_options opt;
  opt.type = dtype::f64;
  const problem p = load_tree_json_file(path.string(), opt);
  // Only the absorbed subtrees: each root, computed fused, against the lowered chain.
  const fusion_plan f = plan_fusion(p, fusion_limits{});
  const std::size_t n = p.net.inputs.size();
  const auto labels = operand_labels(p.net, p.tree);
  const auto in = kerntest::random_tree_inputs(p, 5150);
  for (layout_policy pol : {layout_policy::column_major, layout_policy::follow, layout_policy::planned}) {
    const kerntest::lowered_tree lt = kerntest::lower_tree(p, pol);
    std::vector<std::vector<double>> fused(n + p.tree.steps.size()), ref(n + p.tree.steps.size());
    for (std::size_t i = 0; i < n; ++i) {
      fused[i].assign(in[i].as<double>(), in[i].as<double>() + in[i].size());
      ref[i] = fused[i];
    }
    double worst = 0;
    for (int k : f.absorbed) {
      const auto ks = static_cast<std::size_t>(k);
      const step& s = p.tree.steps[ks];
      const auto e = static_cast<std::size_t>(element_count(p.net.shape_of(labels[n + ks])));
      fused[n + ks].assign(e, kerntest::guard_value<double>());
      ref[n + ks].assign(e, 0.0);
      small_step_record r;
      ASSERT_TRUE(describe_small_step(lt.steps[ks], fused[static_cast<std::size_t>(s.lhs)].data(),
                                      s.rhs >= 0 ? fused[static_cast<std::size_t>(s.rhs)].data() : nullptr, fused[n + ks].data(), r));
      evaluate_small_step<double>(r);
      evaluate_lowered<double>(lt.steps[ks], ref[static_cast<std::size_t>(s.lhs)].data(), s.rhs >= 0 ? ref[static_cast<std::size_t>(s.rhs)].data() : nullptr,
                               ref[n + ks].data());
      for (std::size_t i = 0; i < e; ++i) {
        const double scale = std::max(1.0, std::abs(ref[n + ks][i]));
        worst = std::max(worst, std::abs(fused[n + ks][i] - ref[n + ks][i]) / scale);
      }
    }
    std::printf("[reference network, %s] %zu absorbed steps: worst scaled difference %.3e\n", kerntest::name_of_policy(pol), f.absorbed.size(), worst);
    EXPECT_LE(worst, 1e-9);
  }
}

// Grid runs: maximal stretches of consecutive fitting steps, none shorter than min_run, in order;
// a step that does not fit ends a run.
TEST(GridRuns, ConsecutiveFittingStepsFormRuns) {
  using runs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(plan_grid_runs({}, 2), runs{});
  EXPECT_EQ(plan_grid_runs({1, 1, 1}, 2), (runs{{0, 3}}));
  EXPECT_EQ(plan_grid_runs({1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1}, 2), (runs{{2, 4}, {6, 9}}));
  EXPECT_EQ(plan_grid_runs({1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1}, 1), (runs{{0, 1}, {2, 4}, {6, 9}, {10, 11}}));
  EXPECT_EQ(plan_grid_runs({1, 1, 0, 1, 1, 1}, 3), (runs{{3, 6}}));
  EXPECT_EQ(plan_grid_runs({0, 0}, 1), runs{});
}

// A record joins a run only unstaged and within the three limits; the limits are inclusive.
TEST(GridRuns, StepFitsByOutputsAndMultiplyAdds) {
  small_step_record r;
  r.out_count = 1 << 10;
  r.sum_count = 1 << 6;
  grid_step_limits lim;
  lim.max_outputs = 1 << 10;
  lim.max_madds = 1 << 16;
  EXPECT_TRUE(grid_step_fits(r, lim));
  lim.max_madds = (1 << 16) - 1;
  EXPECT_FALSE(grid_step_fits(r, lim));
  lim.max_madds = 1 << 16;
  lim.max_outputs = (1 << 10) - 1;
  EXPECT_FALSE(grid_step_fits(r, lim));
  lim.max_outputs = 1 << 10;
  lim.max_sum = (1 << 6) - 1;  // each thread sums one element's terms alone
  EXPECT_FALSE(grid_step_fits(r, lim));
  lim.max_sum = 1 << 6;
  EXPECT_TRUE(grid_step_fits(r, lim));
  r.a_span = 16;  // staged: the grid kernel reads operands in place only
  EXPECT_FALSE(grid_step_fits(r, lim));
  r.a_span = 0;
  r.out_count = 0;
  EXPECT_FALSE(grid_step_fits(r, lim));
}

}  // namespace
}  // namespace tnrt
