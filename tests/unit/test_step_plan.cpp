// The step plan (src/core/step_plan.hpp), on the host: which kernel each step gets.
//  - every plan checked against independent statements: strides and lowered steps as
//    kerntest::lower_tree lays them out, consumers from step_consumers, fused exactly the
//    absorbed steps of plan_fusion (when they all fit records), tiled exactly the library steps
//    describe_tiled accepts under the options' limits (none with `never`), library the rest;
//  - the reference network's figures (549 steps: 513 fused in 31 subtrees, 36 outside: 22 tiled
//    candidates, 14 library), and how fusion / tiled options move them;
//  - tiled_min_elements at a step's exact result size; the final step's strides following
//    final_strides; given input strides; a step-less tree planned as one copy; determinism;
//  - random trees (fixed seeds) under every layout and option combination.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/fusion.hpp"
#include "core/step_lowering.hpp"
#include "core/step_plan.hpp"
#include "core/tiled.hpp"
#include "support/kernel_random.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/options.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {
namespace {

using i64 = std::int64_t;

std::filesystem::path source_dir() {
  const char* env = std::getenv("TNRT_SOURCE_DIR");
  return env != nullptr ? std::filesystem::path(env) : std::filesystem::path();
}

problem reference_problem() { return load_file((source_dir() / "data" / "tensornetwork_permutation_optimized.json").string(), load_options{}); }

i64 elements_of(const strided_operand& o) {
  i64 e = 1;
  for (i64 x : o.extents) e *= x;
  return e;
}

struct kind_counts {
  std::size_t fused = 0, tiled = 0, library = 0, copy = 0;
};
kind_counts counts_of(const step_plan& sp) {
  return {sp.count(step_kernel::fused), sp.count(step_kernel::tiled), sp.count(step_kernel::library), sp.count(step_kernel::copy)};
}

// The plan against independent statements of each rule (row-major inputs and result).
void check_plan(const problem& p, const options& opt, const step_plan& sp, const std::string& what) {
  SCOPED_TRACE(what);
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  ASSERT_EQ(sp.kernel.size(), steps);
  ASSERT_EQ(sp.lowered.size(), steps);
  ASSERT_EQ(sp.tiled.size(), steps);
  ASSERT_EQ(sp.strides.size(), n + steps);
  const kerntest::lowered_tree lt = kerntest::lower_tree(p, opt.intermediate_layout);
  EXPECT_EQ(sp.strides, lt.strides);
  for (std::size_t k = 0; k < steps; ++k) EXPECT_EQ(sp.lowered[k].key(), lt.steps[k].key()) << "step " << k;
  EXPECT_EQ(sp.consumer, step_consumers(p.net, p.tree));

  // Fusion: plan_fusion's subtrees of steps that fit a record, when fusion is on.
  small_step_record probe;
  std::vector<char> fit_steps;
  for (const lowered_step& s : lt.steps) fit_steps.push_back(describe_small_step(s, nullptr, nullptr, nullptr, probe) ? 1 : 0);
  fusion_limits flim{opt.fuse_max_elements, 2};
  flim.step_fits = &fit_steps;
  fusion_plan want = opt.fuse_small_steps ? plan_fusion(p, flim) : no_fusion(steps);
  if (want.subtrees() == 0) want = no_fusion(steps);
  EXPECT_EQ(sp.fusion.absorbed, want.absorbed);
  EXPECT_EQ(sp.fusion.subtree_begin, want.subtree_begin);
  EXPECT_EQ(sp.fusion.library_steps, want.library_steps);

  tiled_limits lim;
  lim.min_d_elements = opt.tiled_min_elements;
  for (std::size_t k = 0; k < steps; ++k) {
    const step_kernel kind = sp.kernel[k];
    if (want.is_absorbed[k] != 0) {
      EXPECT_EQ(kind, step_kernel::fused) << "step " << k;
      continue;
    }
    tiled_record rec;
    bool kernel_can = opt.tiled_kernel != kernel_choice::never && describe_tiled(lt.steps[k], size_of(p.type), nullptr, nullptr, nullptr, rec, lim);
    if (kernel_can && opt.tiled_max_intensity > 0) {  // multiply-adds per streamed element
      const double d = static_cast<double>(elements_of(lt.steps[k].d));
      const double big = static_cast<double>(elements_of(rec.small_is_a != 0 ? lt.steps[k].b : lt.steps[k].a));
      kernel_can = rec.k_count * d / (d + big) <= opt.tiled_max_intensity;
    }
    EXPECT_EQ(kind, kernel_can ? step_kernel::tiled : step_kernel::library) << "step " << k;
    if (kind != step_kernel::tiled) continue;
    const tiled_record& r = sp.tiled[k];
    EXPECT_EQ(r.big, nullptr);
    EXPECT_EQ(r.small, nullptr);
    EXPECT_EQ(r.d, nullptr);
    EXPECT_GE(elements_of(sp.lowered[k].d), opt.tiled_min_elements) << "step " << k;
    // The rule's plan is one of the kernel's plans of this step: the default or an alternative.
    bool known = same_tiled_plan(r, rec);
    for (const tiled_record& alt : tiled_alternatives(lt.steps[k], size_of(p.type), lim, rec)) known = known || same_tiled_plan(r, alt);
    EXPECT_TRUE(known) << "step " << k;
  }
}

void expect_same_plan(const step_plan& x, const step_plan& y) {
  EXPECT_EQ(x.strides, y.strides);
  EXPECT_EQ(x.kernel, y.kernel);
  EXPECT_EQ(x.consumer, y.consumer);
  EXPECT_EQ(x.fusion.absorbed, y.fusion.absorbed);
  EXPECT_EQ(x.fusion.subtree_begin, y.fusion.subtree_begin);
  EXPECT_EQ(x.fusion.library_steps, y.fusion.library_steps);
  ASSERT_EQ(x.lowered.size(), y.lowered.size());
  for (std::size_t k = 0; k < x.lowered.size(); ++k) {
    EXPECT_EQ(x.lowered[k].key(), y.lowered[k].key());
    if (x.kernel[k] == step_kernel::tiled && y.kernel[k] == step_kernel::tiled) {
      EXPECT_TRUE(same_tiled_plan(x.tiled[k], y.tiled[k])) << k;
    }
  }
}

// A(a..q) B(q,r) -> D(a..p,r): 17 labels of extent 2 in A, so D has 2^17 elements and B is small;
// the tiled kernel's kind of step.
problem big_small_problem() {
  std::string a, out;
  for (int i = 0; i < 17; ++i) a.push_back(static_cast<char>('a' + i));
  out = a.substr(0, 16) + "r";
  problem p;
  p.net = parse_expression(a + ",qr->" + out, {std::vector<i64>(17, 2), {2, 2}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}});
  return p;
}

// A step past a record's modes under a large fusion limit: y-z-m-w chain of 2 x 2 matrices, then a
// 13-mode bond-2 tensor (8192 elements, under the 16384 limit) contracted with their product. The
// chain's two steps are still one fused subtree and the 13-mode step goes to another kernel; until
// 2026-12-07 that step dropped the whole fusion plan (bench/results/2026-12-07b-h100-diag).
TEST(StepPlan, StepPastARecordLeavesTheRestFused) {
  problem p;
  p.net = parse_expression("yz,zm,mw,abcdefghijkly->abcdefghijklw", {{2, 2}, {2, 2}, {2, 2}, std::vector<i64>(13, 2)});
  p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 2}, {0, 1}});
  options opt;
  opt.fuse_max_elements = 16384;
  const step_plan sp = plan_steps(p, opt, nullptr, nullptr);
  ASSERT_EQ(sp.kernel.size(), 3U);
  small_step_record probe;
  ASSERT_FALSE(describe_small_step(sp.lowered[2], nullptr, nullptr, nullptr, probe)) << "the case needs a step past a record";
  check_plan(p, opt, sp, "chain under a 13-mode step");
  ASSERT_EQ(sp.fusion.subtrees(), 1U);
  EXPECT_EQ(sp.fusion.absorbed, (std::vector<int>{0, 1}));
  EXPECT_EQ(sp.kernel[0], step_kernel::fused);
  EXPECT_EQ(sp.kernel[1], step_kernel::fused);
  EXPECT_NE(sp.kernel[2], step_kernel::fused);
}

// The eager rule's intensity limit: lattice-7x7-d8's large x small steps sum 64 products per
// result over results as many as Big's elements (32 multiply-adds per streamed element): those are
// not tiled by rule; without the limit (compiled's candidates) all of them are, and the reference
// network's 22 candidates (at most 5.3 multiply-adds per element) stay.
TEST(StepPlan, TiledIntensityLimit) {
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const problem p = load_file((source_dir() / "bench/suites/families/lattice-7x7-d8.json").string(), load_options{});
  const options opt;
  const step_plan sp = plan_steps(p, opt, nullptr, nullptr);
  check_plan(p, opt, sp, "lattice-7x7-d8");
  EXPECT_LE(counts_of(sp).tiled, 1U);  // step 39: its result is an eighth of Big (7.1 per element)
  options unlimited = opt;
  unlimited.tiled_max_intensity = 0;
  const step_plan su = plan_steps(p, unlimited, nullptr, nullptr);
  check_plan(p, unlimited, su, "lattice-7x7-d8, no intensity limit");
  EXPECT_GE(counts_of(su).tiled, 10U);
  for (std::size_t k = 0; k < su.kernel.size(); ++k) {
    if (su.kernel[k] == step_kernel::tiled) {
      EXPECT_GE(su.tiled[k].k_count, 64) << "step " << k;
    }
  }
}

TEST(StepPlan, ReferenceNetwork) {
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const problem p = reference_problem();
  const options opt;  // the defaults: column-major intermediates, fusion on, tiled automatic
  const step_plan sp = plan_steps(p, opt, nullptr, nullptr);
  check_plan(p, opt, sp, "reference, defaults");
  const kind_counts c = counts_of(sp);
  std::printf("[reference] %zu steps: %zu fused in %zu subtrees, %zu tiled candidates, %zu library\n", p.tree.steps.size(), c.fused,
              sp.fusion.subtrees(), c.tiled, c.library);
  // docs/results.md: 513 steps in 31 subtrees, 36 outside the fused launch.
  EXPECT_EQ(p.tree.steps.size(), 549U);
  EXPECT_EQ(c.fused, 513U);
  EXPECT_EQ(sp.fusion.subtrees(), 31U);
  EXPECT_EQ(c.tiled + c.library, 36U);
  EXPECT_EQ(c.tiled, 22U);  // compiled's timing keeps 16 of them (docs/design.md), eager all 22
  EXPECT_EQ(c.library, 14U);
  EXPECT_EQ(c.copy, 0U);
  // The last step writes row-major.
  EXPECT_EQ(sp.strides.back(), row_major_strides(p.net.shape_of(p.net.output)));

  // `always` plans the same candidates (compiled then skips the timing), `never` none.
  options always = opt;
  always.tiled_kernel = kernel_choice::always;
  expect_same_plan(plan_steps(p, always, nullptr, nullptr), sp);
  options never = opt;
  never.tiled_kernel = kernel_choice::never;
  const step_plan sn = plan_steps(p, never, nullptr, nullptr);
  check_plan(p, never, sn, "reference, tiled never");
  EXPECT_EQ(counts_of(sn).tiled, 0U);
  EXPECT_EQ(counts_of(sn).library, 36U);
  EXPECT_EQ(counts_of(sn).fused, 513U);

  // Fusion off: every step outside a fused launch; the tiled kernel keeps its candidates (none of
  // the absorbed steps reaches tiled_min_elements).
  options unfused = opt;
  unfused.fuse_small_steps = false;
  const step_plan su = plan_steps(p, unfused, nullptr, nullptr);
  check_plan(p, unfused, su, "reference, no fusion");
  EXPECT_EQ(counts_of(su).fused, 0U);
  EXPECT_EQ(su.fusion.subtrees(), 0U);
  EXPECT_EQ(counts_of(su).tiled, c.tiled);
  EXPECT_EQ(counts_of(su).library, 549U - c.tiled);

  // Both off: the library runs everything.
  options neither = unfused;
  neither.tiled_kernel = kernel_choice::never;
  EXPECT_EQ(counts_of(plan_steps(p, neither, nullptr, nullptr)).library, 549U);

  // A larger fusion limit absorbs more.
  options wide = opt;
  wide.fuse_max_elements = 1 << 12;
  const step_plan sw = plan_steps(p, wide, nullptr, nullptr);
  check_plan(p, wide, sw, "reference, fuse_max_elements 4096");
  EXPECT_GE(counts_of(sw).fused, c.fused);

  // Tiled threshold: above every step's result size, no candidates; at the smallest candidate's
  // size that one stays, one element above it goes to the library.
  options huge = opt;
  huge.tiled_min_elements = std::int64_t{1} << 40;
  EXPECT_EQ(counts_of(plan_steps(p, huge, nullptr, nullptr)).tiled, 0U);
  i64 smallest = std::int64_t{1} << 40;
  std::size_t smallest_step = 0;
  for (std::size_t k = 0; k < sp.kernel.size(); ++k)
    if (sp.kernel[k] == step_kernel::tiled && elements_of(sp.lowered[k].d) < smallest) {
      smallest = elements_of(sp.lowered[k].d);
      smallest_step = k;
    }
  ASSERT_GT(c.tiled, 0U);
  options at = opt;
  at.tiled_min_elements = smallest;
  EXPECT_EQ(plan_steps(p, at, nullptr, nullptr).kernel[smallest_step], step_kernel::tiled);
  at.tiled_min_elements = smallest + 1;
  const step_plan above = plan_steps(p, at, nullptr, nullptr);
  check_plan(p, at, above, "reference, threshold above the smallest candidate");
  EXPECT_EQ(above.kernel[smallest_step], step_kernel::library);
  EXPECT_LT(counts_of(above).tiled, c.tiled);

  // Every intermediate layout.
  for (layout_policy pol : {layout_policy::row_major, layout_policy::follow, layout_policy::planned}) {
    options o = opt;
    o.intermediate_layout = pol;
    check_plan(p, o, plan_steps(p, o, nullptr, nullptr), std::string("reference, layout ") + kerntest::name_of_policy(pol));
  }
}

TEST(StepPlan, Deterministic) {
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const problem p = reference_problem();
  const options opt;
  expect_same_plan(plan_steps(p, opt, nullptr, nullptr), plan_steps(p, opt, nullptr, nullptr));
  const problem q = big_small_problem();
  expect_same_plan(plan_steps(q, opt, nullptr, nullptr), plan_steps(q, opt, nullptr, nullptr));
}

TEST(StepPlan, TiledThresholdAtTheResultSize) {
  const problem p = big_small_problem();
  ASSERT_EQ(p.tree.steps.size(), 1U);
  options opt;
  const step_plan sp = plan_steps(p, opt, nullptr, nullptr);
  check_plan(p, opt, sp, "big x small, defaults");
  ASSERT_EQ(sp.kernel, std::vector<step_kernel>{step_kernel::tiled});
  const i64 d = elements_of(sp.lowered[0].d);
  EXPECT_EQ(d, std::int64_t{1} << 17);
  opt.tiled_min_elements = d;
  EXPECT_EQ(plan_steps(p, opt, nullptr, nullptr).kernel[0], step_kernel::tiled);
  opt.tiled_min_elements = d + 1;
  EXPECT_EQ(plan_steps(p, opt, nullptr, nullptr).kernel[0], step_kernel::library);
  opt.tiled_min_elements = 1 << 16;
  opt.tiled_kernel = kernel_choice::never;
  EXPECT_EQ(plan_steps(p, opt, nullptr, nullptr).kernel[0], step_kernel::library);
  // A lone small step is not fused (a subtree needs two steps): fusion on or off, the same kinds.
  opt.tiled_kernel = kernel_choice::automatic;
  opt.fuse_small_steps = false;
  EXPECT_EQ(plan_steps(p, opt, nullptr, nullptr).kernel[0], step_kernel::tiled);
}

TEST(StepPlan, FinalAndInputStrides) {
  const problem p = big_small_problem();
  const options opt;
  const std::size_t n = p.net.inputs.size();
  // Column-major result and inputs: the plan takes them as given, and lowers under them.
  const std::vector<i64> final_cm = dense_strides(p.net.shape_of(p.net.output), true);
  std::vector<std::vector<i64>> in;
  for (const auto& ls : p.net.inputs) in.push_back(dense_strides(p.net.shape_of(ls), true));
  const step_plan sp = plan_steps(p, opt, &in, &final_cm);
  ASSERT_EQ(sp.strides.size(), n + 1);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(sp.strides[i], in[i]);
  EXPECT_EQ(sp.strides[n], final_cm);
  const step& s = p.tree.steps[0];
  const labelled_layout la{&p.net.inputs[static_cast<std::size_t>(s.lhs)], in[static_cast<std::size_t>(s.lhs)]};
  const labelled_layout lb{&p.net.inputs[static_cast<std::size_t>(s.rhs)], in[static_cast<std::size_t>(s.rhs)]};
  const labelled_layout ld{&s.out, final_cm};
  EXPECT_EQ(sp.lowered[0].key(), lower_step(la, &lb, ld, p.net.extents).key());
  // Without them: row-major.
  const step_plan rm = plan_steps(p, opt, nullptr, nullptr);
  EXPECT_EQ(rm.strides[n], row_major_strides(p.net.shape_of(p.net.output)));
  EXPECT_NE(rm.lowered[0].key(), sp.lowered[0].key());

  // On the reference: only the last step's strides follow final_strides; intermediates keep
  // theirs.
  if (source_dir().empty()) GTEST_SKIP() << "TNRT_SOURCE_DIR is not set (run through ctest)";
  const problem r = reference_problem();
  const std::vector<i64> final_r = dense_strides(r.net.shape_of(r.net.output), true);
  const step_plan a = plan_steps(r, opt, nullptr, nullptr);
  const step_plan b = plan_steps(r, opt, nullptr, &final_r);
  EXPECT_EQ(b.strides.back(), final_r);
  ASSERT_EQ(a.strides.size(), b.strides.size());
  for (std::size_t i = 0; i + 1 < a.strides.size(); ++i) EXPECT_EQ(a.strides[i], b.strides[i]) << "operand " << i;
}

TEST(StepPlan, StepLessTreeIsACopy) {
  problem p;
  p.net = parse_expression("ab->ab", {{2, 3}});
  ASSERT_TRUE(p.tree.steps.empty());
  const options opt;
  const step_plan sp = plan_steps(p, opt, nullptr, nullptr);
  EXPECT_EQ(sp.kernel, std::vector<step_kernel>{step_kernel::copy});
  EXPECT_EQ(sp.count(step_kernel::copy), 1U);
  EXPECT_TRUE(sp.lowered.empty());
  EXPECT_EQ(sp.fusion.subtrees(), 0U);
  ASSERT_EQ(sp.strides.size(), 1U);
  EXPECT_EQ(sp.strides[0], (std::vector<i64>{3, 1}));
  const std::vector<std::vector<i64>> in{{1, 2}};
  EXPECT_EQ(plan_steps(p, opt, &in, nullptr).strides[0], in[0]);
  EXPECT_STREQ(name_of(step_kernel::copy), "copy");
}

TEST(StepPlan, RandomTrees) {
  kerntest::tree_spec spec;
  spec.max_elements = 1 << 12;
  int fused = 0, tiled = 0, library = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::uint64_t used = 0;
    const problem p = kerntest::random_tree_problem(spec, seed * 7919, seed % 2 ? dtype::f32 : dtype::c128, &used);
    for (layout_policy pol : all_layouts)
      for (bool fuse : {true, false})
        for (kernel_choice tc : {kernel_choice::automatic, kernel_choice::never}) {
          options o;
          o.intermediate_layout = pol;
          o.fuse_small_steps = fuse;
          o.fuse_max_elements = 256;
          o.tiled_kernel = tc;
          o.tiled_min_elements = 64;  // small enough that random steps reach it
          const step_plan sp = plan_steps(p, o, nullptr, nullptr);
          check_plan(p, o, sp, "seed " + std::to_string(used) + " layout " + kerntest::name_of_policy(pol) + (fuse ? " fused" : " unfused") +
                                   (tc == kernel_choice::never ? " tiled never" : " tiled auto"));
          fused += static_cast<int>(sp.count(step_kernel::fused));
          tiled += static_cast<int>(sp.count(step_kernel::tiled));
          library += static_cast<int>(sp.count(step_kernel::library));
        }
  }
  std::printf("[random trees] %d fused, %d tiled, %d library step plans\n", fused, tiled, library);
  EXPECT_GT(fused, 0);  // the trees exercise every kind but the copy
  EXPECT_GT(tiled, 0);
  EXPECT_GT(library, 0);
}

}  // namespace
}  // namespace tnrt
