// planned_strides (src/core/mode_orders): intermediates in mode orders of their own. Every
// intermediate's strides are a dense permutation of its extents, the inputs and the final result stay
// row-major, a whole tree evaluated step by step on those strides (core lower_step and
// evaluate_lowered) gives the CPU engine's result, and the heaviest step, when the pass is free to
// order all three of its operands, is one GEMM as it lies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/gemm_lowering.hpp"
#include "core/mode_orders.hpp"
#include "core/step_lowering.hpp"
#include "support/random_problem.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace {

// True when `st` lays out a dense tensor of these labels' extents (each element once, no gaps).
bool dense_permutation(const std::vector<label_t>& l, const std::vector<std::int64_t>& st, const std::vector<std::int64_t>& extents) {
  if (st.size() != l.size()) return false;
  std::vector<std::size_t> pos(l.size());
  std::iota(pos.begin(), pos.end(), std::size_t{0});
  std::stable_sort(pos.begin(), pos.end(), [&](std::size_t x, std::size_t y) { return st[x] < st[y]; });
  std::int64_t next = 1;
  for (std::size_t i : pos) {
    const std::int64_t e = extents[static_cast<std::size_t>(l[i])];
    if (e == 1) continue;  // any stride serves an extent-1 mode
    if (st[i] != next) return false;
    next *= e;
  }
  return true;
}

TEST(ModeOrders, IntermediatesAreDensePermutationsAndEndsStayRowMajor) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const problem p = test::random_problem(seed, dtype::f64, 1, 4, 8);
    const auto st = planned_strides(p);
    const auto labels = operand_labels(p.net, p.tree);
    ASSERT_EQ(st.size(), labels.size()) << p.source;
    const std::size_t n = p.net.inputs.size();
    for (std::size_t id = 0; id < st.size(); ++id) {
      const bool end = id < n || id + 1 == st.size();
      if (end) {
        EXPECT_EQ(st[id], dense_strides(p.net.shape_of(labels[id]), false)) << p.source << ", operand " << id;
      } else {
        EXPECT_TRUE(dense_permutation(labels[id], st[id], p.net.extents)) << p.source << ", operand " << id;
      }
    }
    EXPECT_EQ(planned_strides(p), st) << "deterministic";
  }
}

// Every step of p's tree, lowered on the strides `st` (by operand id) and evaluated into `buf`
// (the inputs' buffers filled, laid out on their strides).
void evaluate_steps(const problem& p, const std::vector<std::vector<std::int64_t>>& st, std::vector<std::vector<double>>& buf) {
  const auto labels = operand_labels(p.net, p.tree);
  const std::size_t n = p.net.inputs.size();
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    const auto a = static_cast<std::size_t>(s.lhs);
    const labelled_layout la{&labels[a], st[a]};
    const labelled_layout ld{&labels[n + k], st[n + k]};
    buf[n + k].assign(static_cast<std::size_t>(p.net.elements_of(s.out)), 0.0);
    if (s.rhs < 0) {
      evaluate_lowered(lower_step(la, nullptr, ld, p.net.extents), buf[a].data(), static_cast<const double*>(nullptr), buf[n + k].data());
    } else {
      const auto b = static_cast<std::size_t>(s.rhs);
      const labelled_layout lb{&labels[b], st[b]};
      evaluate_lowered(lower_step(la, &lb, ld, p.net.extents), buf[a].data(), buf[b].data(), buf[n + k].data());
    }
  }
}

TEST(ModeOrders, TreesEvaluatedOnPlannedStridesMatchTheCpuEngine) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const problem p = test::random_problem(seed, dtype::f64, 1, 3, 7);
    if (p.tree.steps.empty()) continue;
    const auto in = test::random_inputs(p, seed);
    const auto st = planned_strides(p);
    const auto labels = operand_labels(p.net, p.tree);
    const std::size_t n = p.net.inputs.size();
    std::vector<std::vector<double>> buf(st.size());
    for (std::size_t i = 0; i < n; ++i) buf[i].assign(in[i].as<double>(), in[i].as<double>() + in[i].size());
    evaluate_steps(p, st, buf);
    const host_tensor want = cpu::contract(p, in);
    const std::vector<double>& got = buf.back();
    ASSERT_EQ(static_cast<std::int64_t>(got.size()), want.size()) << p.source;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want.as<double>()[i], 1e-9 * (1.0 + std::abs(want.as<double>()[i]))) << p.source << ", element " << i;
  }
}

// The pass orders the heaviest step first. When neither operand is a network input and its result
// is not the final one, all three orders are its to choose, so the step is one GEMM as it lies
// (when it is a GEMM at all: no label summed inside one operand alone, which lower_step turns into
// a broadcast, and no operand without modes).
TEST(ModeOrders, TheHeaviestStepIsOneGemmWhenItsOperandsAreFree) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 3000 && checked < 40; ++seed) {
    const problem p = test::random_problem(seed, dtype::f64, 2, 3, 8);
    const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
    if (steps < 3) continue;
    const auto labels = operand_labels(p.net, p.tree);
    const std::vector<double> madds = step_multiply_adds(p.net, p.tree);
    const auto heavy = static_cast<std::size_t>(std::max_element(madds.begin(), madds.end()) - madds.begin());
    const step& s = p.tree.steps[heavy];
    const auto a = static_cast<std::size_t>(s.lhs), b = static_cast<std::size_t>(s.rhs);
    if (a < n || b < n || heavy + 1 == steps) continue;
    const auto& la = labels[a];
    const auto& lb = labels[b];
    auto in = [](const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    bool alone = la.empty() || lb.empty() || s.out.empty();
    for (label_t x : la) alone = alone || (!in(lb, x) && !in(s.out, x));
    for (label_t x : lb) alone = alone || (!in(la, x) && !in(s.out, x));
    if (alone) continue;
    const auto st = planned_strides(p);
    const labelled_layout A{&la, st[a]}, B{&lb, st[b]}, D{&s.out, st[n + heavy]};
    EXPECT_TRUE(lower_to_gemm(lower_step(A, &B, D, p.net.extents)).has_value()) << p.source << ", step " << heavy;
    ++checked;
  }
  EXPECT_GE(checked, 10) << "too few random trees had a free heaviest step";
}

// A row-major host buffer of shape `shape` laid out on strides `st` (a dense permutation).
std::vector<double> laid_out(const double* src, const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& st) {
  std::int64_t total = 1;
  for (std::int64_t e : shape) total *= e;
  std::vector<double> dst(static_cast<std::size_t>(total));
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) at += idx[i] * st[i];
    dst[static_cast<std::size_t>(at)] = src[flat];
    for (std::size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return dst;
}

// A random dense permutation of `shape`'s positions.
std::vector<std::int64_t> permuted_strides(const std::vector<std::int64_t>& shape, std::mt19937_64& rng) {
  std::vector<std::size_t> order(shape.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> st(shape.size(), 0);
  std::int64_t next = 1;
  for (std::size_t i : order) {
    st[i] = next;
    next *= shape[i];
  }
  return st;
}

// Ends that a caller lays out otherwise (eager views of any layout): planned_strides returns them as
// given, the intermediates are still dense permutations, and the tree evaluated on those strides,
// the inputs laid out as given and the result read back through the given strides, is the CPU
// engine's result. The given orders seed the groups' inner orders, so the strides differ from the
// row-major ends' on some trees (the seeds reach the pass).
TEST(ModeOrders, GivenEndsAreKeptAndTheTreeStillMatchesTheCpuEngine) {
  std::mt19937_64 rng(77);
  int differs = 0, trees = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const problem p = test::random_problem(seed, dtype::f64, 1, 3, 7);
    if (p.tree.steps.empty()) continue;
    const auto labels = operand_labels(p.net, p.tree);
    const std::size_t n = p.net.inputs.size();
    std::vector<std::vector<std::int64_t>> given(n);
    for (std::size_t i = 0; i < n; ++i) given[i] = permuted_strides(p.net.shape_of(labels[i]), rng);
    const std::vector<std::int64_t> final_st = permuted_strides(p.net.shape_of(p.net.output), rng);
    const auto st = planned_strides(p, &given, &final_st);
    ASSERT_EQ(st.size(), labels.size());
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(st[i], given[i]) << p.source << ", input " << i;
    EXPECT_EQ(st.back(), final_st) << p.source;
    for (std::size_t id = n; id + 1 < st.size(); ++id) EXPECT_TRUE(dense_permutation(labels[id], st[id], p.net.extents)) << p.source << ", operand " << id;
    const auto plain = planned_strides(p);
    for (std::size_t id = n; id + 1 < st.size(); ++id) differs += st[id] != plain[id] ? 1 : 0;

    const auto in = test::random_inputs(p, seed);
    std::vector<std::vector<double>> buf(st.size());
    for (std::size_t i = 0; i < n; ++i) buf[i] = laid_out(in[i].as<double>(), p.net.shape_of(labels[i]), st[i]);
    evaluate_steps(p, st, buf);
    const host_tensor want = cpu::contract(p, in);
    const std::vector<double> want_laid = laid_out(want.as<double>(), p.net.shape_of(p.net.output), final_st);
    ASSERT_EQ(buf.back().size(), want_laid.size()) << p.source;
    for (std::size_t i = 0; i < want_laid.size(); ++i)
      ASSERT_NEAR(buf.back()[i], want_laid[i], 1e-9 * (1.0 + std::abs(want_laid[i]))) << p.source << ", element " << i;
    ++trees;
  }
  EXPECT_GT(trees, 100);
  EXPECT_GT(differs, 0) << "the given ends never changed an intermediate's order";
}

// step_multiply_adds: cost_of's flops, step by step.
TEST(ModeOrders, StepMultiplyAddsSumToTheTreeCost) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const problem p = test::random_problem(seed, dtype::f64, 1, 4, 8);
    const std::vector<double> madds = step_multiply_adds(p.net, p.tree);
    ASSERT_EQ(madds.size(), p.tree.steps.size());
    EXPECT_DOUBLE_EQ(std::accumulate(madds.begin(), madds.end(), 0.0), cost_of(p.net, p.tree).flops) << p.source;
  }
  const problem m = test::matmul_problem(3, 5, 7, dtype::f32);
  EXPECT_EQ(step_multiply_adds(m.net, m.tree), std::vector<double>{105.0});
}

}  // namespace
}  // namespace tnrt
