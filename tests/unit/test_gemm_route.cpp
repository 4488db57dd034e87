// Eager's cuBLAS route (src/core/gemm_route.hpp), on the host: which library steps are candidates
// under each option, the rule's floors and cap, and each route evaluated as cuBLAS would run it
// (the copies through evaluate_lowered of their permutations, the GEMM through evaluate_gemm)
// against evaluate_lowered of the step itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/gemm_route.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/options.hpp"

namespace tnrt {
namespace {

using i64 = std::int64_t;

// A problem from an einsum expression and shapes, contracted left to right.
problem einsum_problem(const std::string& expr, const std::string& shapes, dtype t = dtype::f32) {
  problem p;
  p.net = parse_expression(expr, parse_shapes(shapes));
  std::vector<std::vector<int>> path;
  for (std::size_t i = 1; i < p.net.inputs.size(); ++i) path.push_back({0, 1});
  p.tree = tree_from_linear_path(p.net, path);
  p.type = t;
  p.source = expr;
  return p;
}

options no_fusion() {
  options o;
  o.fuse_small_steps = false;  // every step a library step
  o.tiled_kernel = kernel_choice::never;
  return o;
}

i64 elements(const strided_operand& o) {
  i64 e = 1;
  for (i64 x : o.extents) e *= x;
  return e;
}

// Runs `r` on the host as eager runs it on the GPU and compares with evaluate_lowered of `low`.
double route_error(const lowered_step& low, const gemm_route& r, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto span_of = [](const strided_operand& o) {
    i64 s = 1;
    for (std::size_t i = 0; i < o.extents.size(); ++i) s += (o.extents[i] - 1) * o.strides[i];
    return s;
  };
  std::vector<double> a(static_cast<std::size_t>(span_of(low.a))), b(static_cast<std::size_t>(span_of(low.b)));
  for (double& x : a) x = u(rng);
  for (double& x : b) x = u(rng);
  std::vector<double> want(static_cast<std::size_t>(span_of(low.d)), 0.0), got(want.size(), 0.0);
  evaluate_lowered<double>(low, a.data(), b.data(), want.data());
  if (r.direct) {
    evaluate_gemm<double>(*r.direct, a.data(), b.data(), got.data());
  } else {
    std::vector<double> copy[3];
    const double* x[2] = {a.data(), b.data()};
    for (int i = 0; i < 3; ++i) copy[i].assign(static_cast<std::size_t>(r.copy_elements(i)), 0.0);
    for (int i = 0; i < 2; ++i) {
      if (r.copy_elements(i) == 0) continue;
      EXPECT_EQ(r.copy_steps[i].kind, lowered_kind::reduction);
      EXPECT_EQ(elements(r.copy_steps[i].a), elements(r.copy_steps[i].d)) << "a copy moves every element once";
      evaluate_lowered<double>(r.copy_steps[i], x[i], nullptr, copy[i].data());
      x[i] = copy[i].data();
    }
    double* out = r.copy_elements(2) > 0 ? copy[2].data() : got.data();
    evaluate_gemm<double>(r.copies->gemm, x[0], x[1], out);
    if (r.copy_elements(2) > 0) evaluate_lowered<double>(r.copy_steps[2], copy[2].data(), nullptr, got.data());
  }
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    norm = std::max(norm, std::abs(want[i]));
  }
  return err / std::max(norm, 1e-300);
}

TEST(GemmRoute, BatchedGemmIsATimedCandidate) {
  // 64 x (128 x 128) x (128 x 128): 2^27 multiply-adds, one strided-batched GEMM as it lies
  const problem p = einsum_problem("bij,bjk->bik", "64x128x128,64x128x128");
  const options o = no_fusion();
  const step_plan plan = plan_steps(p, o);
  const gemm_routes r = plan_gemm_routes(p, plan, o, p.type, true);
  ASSERT_EQ(r.candidates, std::vector<int>{0});
  EXPECT_TRUE(r.learn);
  ASSERT_TRUE(r.route[0].has_value());
  ASSERT_TRUE(r.route[0]->direct.has_value());
  EXPECT_FALSE(r.route[0]->copies.has_value());
  EXPECT_DOUBLE_EQ(r.route[0]->multiply_adds, 64.0 * 128 * 128 * 128);
  EXPECT_EQ(r.route[0]->direct->batch, 64);
  EXPECT_LE(route_error(plan.lowered[0], *r.route[0], 1), 1e-12);
}

TEST(GemmRoute, OptionsAndMachineTurnItOff) {
  const problem p = einsum_problem("bij,bjk->bik", "64x128x128,64x128x128");
  options o = no_fusion();
  const step_plan plan = plan_steps(p, o);
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, p.type, false).candidates.empty()) << "no cuBLAS on the machine";
  o.gemm_lowering = kernel_choice::never;
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, p.type, true).candidates.empty()) << "gemm_lowering never";
  o.gemm_lowering = kernel_choice::automatic;
  o.compute_precision = precision::tf32x3;
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, dtype::f32, true).candidates.empty()) << "3xTF32 has no cuBLAS twin";
  EXPECT_EQ(plan_gemm_routes(p, plan, o, dtype::f64, true).candidates.size(), 1U) << "3xTF32 leaves double alone";
}

TEST(GemmRoute, SmallStepsOnlyUnderAlways) {
  // 8 x 8 x 8: 512 multiply-adds, under the 2^20 floor
  const problem p = einsum_problem("ij,jk->ik", "8x8,8x8");
  options o = no_fusion();
  const step_plan plan = plan_steps(p, o);
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, p.type, true).candidates.empty());
  o.gemm_lowering = kernel_choice::always;
  const gemm_routes r = plan_gemm_routes(p, plan, o, p.type, true);
  EXPECT_EQ(r.candidates, std::vector<int>{0});
  EXPECT_FALSE(r.learn) << "always: untimed";
  gemm_route_rule low;
  low.min_multiply_adds = 512;
  o.gemm_lowering = kernel_choice::automatic;
  EXPECT_EQ(plan_gemm_routes(p, plan, o, p.type, true, low).candidates, std::vector<int>{0}) << "at the floor exactly";
}

TEST(GemmRoute, CopiesWhereTheStepIsNoGemmAsItLies) {
  // A's batch label between its m and k labels, D's batch label last: no GEMM as it lies under any
  // layout, one after copies. 2^24 multiply-adds against 2^17 copied elements.
  const problem p = einsum_problem("ibk,kbj->ijb", "64x16x128,128x16x128");
  options o = no_fusion();
  for (layout_policy lay : {layout_policy::column_major, layout_policy::row_major, layout_policy::planned}) {
    o.intermediate_layout = lay;
    const step_plan plan = plan_steps(p, o);
    const lowered_step& low = plan.lowered[0];
    SCOPED_TRACE(std::string("layout ") + std::to_string(static_cast<int>(lay)));
    ASSERT_FALSE(lower_to_gemm(low).has_value()) << "the case needs a step that is no GEMM as it lies";
    ASSERT_TRUE(lower_to_gemm_with_copies(low).has_value());
    const gemm_routes r = plan_gemm_routes(p, plan, o, p.type, true);
    ASSERT_EQ(r.candidates, std::vector<int>{0});
    EXPECT_FALSE(r.route[0]->direct.has_value());
    EXPECT_TRUE(r.route[0]->copies.has_value());
    EXPECT_LE(route_error(low, *r.route[0], 7), 1e-12);
  }
  // The same step with gemm_copies never: no route; always: untimed.
  o.intermediate_layout = layout_policy::column_major;
  const step_plan plan = plan_steps(p, o);
  o.gemm_copies = kernel_choice::never;
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, p.type, true).candidates.empty());
  o.gemm_copies = kernel_choice::always;
  const gemm_routes r = plan_gemm_routes(p, plan, o, p.type, true);
  EXPECT_EQ(r.candidates, std::vector<int>{0});
  EXPECT_FALSE(r.learn);
}

TEST(GemmRoute, CopiesNeedEnoughWorkPerCopiedElement) {
  // An outer-product-like step (k = 2): 2^23 multiply-adds against 2^22 copied elements, 2 per
  // copied element, under the floor of 8; at a floor of 2 it is a candidate.
  const problem p = einsum_problem("iak,kbj->ijab", "64x32x2,2x32x64");
  const options o = no_fusion();
  const step_plan plan = plan_steps(p, o);
  const lowered_step& low = plan.lowered[0];
  ASSERT_FALSE(lower_to_gemm(low).has_value()) << "the case needs a step that is no GEMM as it lies";
  ASSERT_TRUE(lower_to_gemm_with_copies(low).has_value());
  EXPECT_TRUE(plan_gemm_routes(p, plan, o, p.type, true).candidates.empty())
      << "copies moving more than an eighth of the work's elements are no candidate";
  gemm_route_rule rule;
  rule.copies_min_intensity = 2;
  EXPECT_EQ(plan_gemm_routes(p, plan, o, p.type, true, rule).candidates, std::vector<int>{0});
}

TEST(GemmRoute, RandomChainsEveryRouteComputesTheStep) {
  // Chains of batched products with shuffled label orders: every candidate's route evaluates to the
  // step under every layout; the cap keeps the largest candidates, in tree order.
  std::mt19937_64 rng(424242);
  int direct = 0, copies = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const i64 b = 2 + static_cast<i64>(rng() % 3), m = 8 + static_cast<i64>(rng() % 9), n = 8 + static_cast<i64>(rng() % 9),
              k = 8 + static_cast<i64>(rng() % 9);
    std::string A = "bmk", B = "bkn", D = "bmn";
    std::shuffle(A.begin(), A.end(), rng);
    std::shuffle(B.begin(), B.end(), rng);
    std::shuffle(D.begin(), D.end(), rng);
    auto shape = [&](const std::string& s) {
      std::string out;
      for (char c : s) {
        if (!out.empty()) out.push_back('x');
        out.append(std::to_string(c == 'b' ? b : c == 'm' ? m : c == 'n' ? n : k));
      }
      return out;
    };
    const problem p = einsum_problem(A + "," + B + "->" + D, shape(A) + "," + shape(B));
    options o = no_fusion();
    o.gemm_lowering = kernel_choice::always;
    o.gemm_copies = kernel_choice::always;
    for (layout_policy lay : {layout_policy::column_major, layout_policy::row_major}) {
      o.intermediate_layout = lay;
      const step_plan plan = plan_steps(p, o);
      const gemm_routes r = plan_gemm_routes(p, plan, o, p.type, true);
      for (int kk : r.candidates) {
        const gemm_route& g = *r.route[static_cast<std::size_t>(kk)];
        (g.direct ? direct : copies) += 1;
        EXPECT_LE(route_error(plan.lowered[static_cast<std::size_t>(kk)], g, static_cast<std::uint64_t>(trial)), 1e-12) << p.source;
      }
    }
  }
  std::printf("[gemm route] 40 random batched products: %d direct routes, %d with copies checked\n", direct, copies);
  EXPECT_GT(direct, 5);
  EXPECT_GT(copies, 5);
}

TEST(GemmRoute, CapKeepsTheLargest) {
  // A chain of products of growing size; a cap of two keeps the two largest candidates, in tree
  // order, and drops the others' routes.
  const problem p = einsum_problem("ab,bc,cd,de,ef->af", "128x128,128x128,128x256,256x256,256x512");
  const options o = no_fusion();
  const step_plan plan = plan_steps(p, o);
  gemm_route_rule rule;
  rule.min_multiply_adds = 1;
  const gemm_routes all = plan_gemm_routes(p, plan, o, p.type, true, rule);
  ASSERT_GE(all.candidates.size(), 3U);
  std::vector<int> want = all.candidates;
  std::stable_sort(want.begin(), want.end(), [&](int x, int y) {
    return all.route[static_cast<std::size_t>(x)]->multiply_adds > all.route[static_cast<std::size_t>(y)]->multiply_adds;
  });
  want.resize(2);
  std::sort(want.begin(), want.end());
  rule.max_candidates = 2;
  const gemm_routes two = plan_gemm_routes(p, plan, o, p.type, true, rule);
  EXPECT_EQ(two.candidates, want);
  std::size_t routed = 0;
  for (const auto& r : two.route) routed += r.has_value() ? 1 : 0;
  EXPECT_EQ(routed, 2U);
}

TEST(GemmRoute, TiledStepsAreTimedAgainstTheLibrary) {
  // One streaming step: Big 64 x 64 x 32 x 8 (2^20 elements) against an 8 x 8 Small, 8 contracted
  // combinations a result: the plan puts it on the tiled kernel, and under `automatic` eager times
  // cuTENSOR against it (route `library`, no cuBLAS pieces), whatever gemm_lowering says unless a
  // choice is `always` (untimed), and not when tiled_kernel is not `automatic`.
  const problem p = einsum_problem("wxyk,kz->wxyz", "64x64x32x8,8x8");
  options o;
  o.fuse_small_steps = false;
  const step_plan plan = plan_steps(p, o);
  ASSERT_EQ(plan.kernel.size(), 1U);
  ASSERT_EQ(plan.kernel[0], step_kernel::tiled) << "the case needs a step the rule puts on the tiled kernel";
  for (bool blas : {true, false}) {
    for (kernel_choice g : {kernel_choice::automatic, kernel_choice::never}) {
      options q = o;
      q.gemm_lowering = g;
      const gemm_routes r = plan_gemm_routes(p, plan, q, p.type, blas);
      SCOPED_TRACE(std::string(blas ? "cuBLAS there" : "no cuBLAS") + ", gemm_lowering " + std::to_string(static_cast<int>(g)));
      EXPECT_TRUE(r.learn);
      ASSERT_EQ(r.candidates, std::vector<int>{0});
      ASSERT_TRUE(r.route[0].has_value());
      EXPECT_TRUE(r.route[0]->library);
      EXPECT_FALSE(r.route[0]->direct.has_value());
      EXPECT_FALSE(r.route[0]->copies.has_value());
      EXPECT_DOUBLE_EQ(r.route[0]->multiply_adds, 64.0 * 64 * 32 * 8 * 8);
    }
  }
  options always = o;
  always.gemm_lowering = kernel_choice::always;
  EXPECT_TRUE(plan_gemm_routes(p, plan, always, p.type, true).candidates.empty()) << "`always` times nothing";
  options tiled_always = o;
  tiled_always.tiled_kernel = kernel_choice::always;
  EXPECT_TRUE(plan_gemm_routes(p, plan, tiled_always, p.type, true).candidates.empty())
      << "tiled_kernel `always`: the kernel, untimed";
}

}  // namespace
}  // namespace tnrt
