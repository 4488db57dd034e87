// The static memory plan: offsets that never alias two live buffers, within a few percent of the
// lower bound, and a liveness model in which a step's result never shares bytes with its operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/memory_plan.hpp"

namespace {

using tnrt::buffer_request;
using tnrt::memory_plan;

// The slow, obvious lower bound: live bytes at every step.
std::size_t brute_lower_bound(const std::vector<buffer_request>& rs) {
  if (rs.empty()) return 0;
  int lo = rs[0].first_step, hi = rs[0].last_step;
  for (const auto& r : rs) lo = std::min(lo, r.first_step), hi = std::max(hi, r.last_step);
  std::size_t best = 0;
  for (int s = lo; s <= hi; ++s) {
    std::size_t live = 0;
    for (const auto& r : rs)
      if (r.first_step <= s && s <= r.last_step) live += r.bytes;
    best = std::max(best, live);
  }
  return best;
}

// Every invariant of a plan, checked pairwise.
void expect_valid(const std::vector<buffer_request>& rs, const memory_plan& plan, std::size_t alignment) {
  ASSERT_EQ(plan.offsets.size(), rs.size());
  std::size_t top = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "request " << i << " misaligned";
    top = std::max(top, plan.offsets[i] + rs[i].bytes);
  }
  EXPECT_EQ(plan.arena_bytes, top);
  EXPECT_EQ(plan.lower_bound_bytes, brute_lower_bound(rs));
  EXPECT_EQ(tnrt::live_bytes_bound(rs), brute_lower_bound(rs));
  EXPECT_GE(plan.arena_bytes, plan.lower_bound_bytes);
  for (std::size_t i = 0; i < rs.size(); ++i)
    for (std::size_t j = i + 1; j < rs.size(); ++j) {
      const bool live_together = rs[i].first_step <= rs[j].last_step && rs[j].first_step <= rs[i].last_step;
      const bool share_bytes = plan.offsets[i] < plan.offsets[j] + rs[j].bytes && plan.offsets[j] < plan.offsets[i] + rs[i].bytes;
      if (live_together && share_bytes) {
        ADD_FAILURE() << "requests " << i << " [" << rs[i].first_step << "," << rs[i].last_step << "] @" << plan.offsets[i] << "+"
                      << rs[i].bytes << " and " << j << " [" << rs[j].first_step << "," << rs[j].last_step << "] @" << plan.offsets[j]
                      << "+" << rs[j].bytes << " overlap";
        return;
      }
    }
}

std::vector<buffer_request> random_requests(std::mt19937_64& rng, std::size_t n, int steps) {
  std::uniform_int_distribution<int> step(0, steps - 1);
  std::uniform_int_distribution<int> kind(0, 3);
  std::vector<buffer_request> rs(n);
  for (auto& r : rs) {
    int a = step(rng), b = step(rng);
    if (kind(rng) == 0) b = a;  // many one-step temporaries, as in a contraction tree
    r.first_step = std::min(a, b);
    r.last_step = std::max(a, b);
    switch (kind(rng)) {  // a mix of tiny, odd, power-of-two and large sizes
      case 0: r.bytes = std::uniform_int_distribution<std::size_t>(0, 64)(rng); break;
      case 1: r.bytes = std::uniform_int_distribution<std::size_t>(1, 100000)(rng); break;
      case 2: r.bytes = std::size_t{4} << std::uniform_int_distribution<int>(0, 24)(rng); break;
      default: r.bytes = std::uniform_int_distribution<std::size_t>(1, 1 << 20)(rng) * 256; break;
    }
  }
  return rs;
}

TEST(MemoryPlan, RandomIntervalSetsNeverAliasLiveBuffers) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto n = std::uniform_int_distribution<std::size_t>(1, 200)(rng);
    const int steps = std::uniform_int_distribution<int>(1, 100)(rng);
    const std::size_t alignment = std::size_t{1} << std::uniform_int_distribution<int>(0, 9)(rng);
    const auto rs = random_requests(rng, n, steps);
    const auto plan = tnrt::plan_memory(rs, alignment);
    expect_valid(rs, plan, alignment);
    EXPECT_FALSE(plan.heuristic.empty());
    if (HasFailure()) return;
  }
}

TEST(MemoryPlan, NonPowerOfTwoAlignment) {
  std::mt19937_64 rng(7);
  const auto rs = random_requests(rng, 150, 40);
  const auto plan = tnrt::plan_memory(rs, 96);
  expect_valid(rs, plan, 96);
}

TEST(MemoryPlan, ChainsReachTheLowerBound) {
  // A chain: buffer i lives over [i, i+1], so only neighbours meet. Sizes are multiples of the
  // alignment, so the bound is reachable and the plan must reach it.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto n = std::uniform_int_distribution<std::size_t>(1, 60)(rng);
    std::vector<buffer_request> rs(n);
    for (std::size_t i = 0; i < n; ++i)
      rs[i] = {std::uniform_int_distribution<std::size_t>(1, 1000)(rng) * 256, static_cast<int>(i), static_cast<int>(i) + 1};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.arena_bytes, plan.lower_bound_bytes);
    if (HasFailure()) return;
  }
}

TEST(MemoryPlan, EdgeCases) {
  {  // nothing to plan
    const auto plan = tnrt::plan_memory({});
    EXPECT_TRUE(plan.offsets.empty());
    EXPECT_EQ(plan.arena_bytes, 0u);
    EXPECT_EQ(plan.lower_bound_bytes, 0u);
  }
  {  // one request
    const std::vector<buffer_request> rs{{1000, 3, 7}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.offsets[0], 0u);
    EXPECT_EQ(plan.arena_bytes, 1000u);
    EXPECT_EQ(plan.lower_bound_bytes, 1000u);
  }
  {  // zero-byte requests take no room, even live beside everything else
    const std::vector<buffer_request> rs{{0, 0, 9}, {512, 0, 9}, {0, 2, 2}, {256, 1, 3}, {0, 5, 5}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.arena_bytes, 768u);
    EXPECT_EQ(plan.lower_bound_bytes, 768u);
  }
  {  // all lifetimes disjoint: everything at 0, the arena is the largest request
    const std::vector<buffer_request> rs{{300, 0, 0}, {5000, 1, 2}, {17, 3, 3}, {4096, 4, 9}, {1, -5, -1}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.arena_bytes, 5000u);
    for (auto off : plan.offsets) EXPECT_EQ(off, 0u);
  }
  {  // all live at step 1: stacked, the arena is the sum
    const std::vector<buffer_request> rs{{256, 0, 1}, {512, 1, 2}, {768, 1, 1}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.arena_bytes, 1536u);
  }
  {  // unaligned sizes live together: padding between them, none above the top one
    const std::vector<buffer_request> rs{{100, 0, 1}, {300, 1, 2}, {256, 1, 1}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.lower_bound_bytes, 656u);
    EXPECT_LE(plan.arena_bytes, 512u + 256u + 300u);
  }
  {  // closed intervals: meeting at one step is enough to forbid sharing
    const std::vector<buffer_request> rs{{256, 0, 1}, {256, 1, 2}};
    const auto plan = tnrt::plan_memory(rs);
    expect_valid(rs, plan, 256);
    EXPECT_EQ(plan.arena_bytes, 512u);
  }
  {  // ... and ending the step before is enough to allow it
    const std::vector<buffer_request> rs{{256, 0, 1}, {256, 2, 3}};
    EXPECT_EQ(tnrt::plan_memory(rs).arena_bytes, 256u);
  }
}

TEST(MemoryPlan, RejectsBadArguments) {
  const std::vector<buffer_request> backwards{{8, 3, 2}};
  EXPECT_THROW(tnrt::plan_memory(backwards), tnrt::internal_error);
  const std::vector<buffer_request> ok{{8, 0, 2}};
  EXPECT_THROW(tnrt::plan_memory(ok, 0), tnrt::internal_error);
  const std::vector<buffer_request> huge{{~std::size_t{0} - 10, 0, 2}, {100, 0, 2}};
  EXPECT_THROW(tnrt::plan_memory(huge), tnrt::out_of_memory);
}

// live_bytes_bound against the sweep over every step, on request sets the planner's tests do not
// make: steps spread far apart (most steps of the sweep see nothing live), negative steps, many
// requests sharing a first or last step, zero-byte requests.
TEST(MemoryPlan, LiveBytesBoundEqualsASweepOverSteps) {
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto n = std::uniform_int_distribution<std::size_t>(1, 60)(rng);
    const int spread = std::uniform_int_distribution<int>(1, 2000)(rng);
    std::uniform_int_distribution<int> step(-spread / 2, spread - spread / 2);
    std::vector<int> ends{step(rng), step(rng), step(rng)};  // shared first and last steps
    std::vector<buffer_request> rs(n);
    for (auto& r : rs) {
      int a = step(rng), b = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? ends[rng() % ends.size()] : step(rng);
      r.first_step = std::min(a, b);
      r.last_step = std::max(a, b);
      r.bytes = std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? 0 : std::uniform_int_distribution<std::size_t>(1, 1 << 20)(rng);
    }
    EXPECT_EQ(tnrt::live_bytes_bound(rs), brute_lower_bound(rs));
    if (HasFailure()) return;
  }
  // By hand: [0,2] 10 B, [2,4] 20 B, [5,5] 25 B, [3,9] 1 B: step 2 holds 30 B, step 3 21, step 5 26.
  const std::vector<buffer_request> rs{{10, 0, 2}, {20, 2, 4}, {25, 5, 5}, {1, 3, 9}};
  EXPECT_EQ(tnrt::live_bytes_bound(rs), 30u);
  EXPECT_EQ(tnrt::live_bytes_bound(std::vector<buffer_request>{}), 0u);
  EXPECT_EQ(tnrt::live_bytes_bound(std::vector<buffer_request>{{0, -3, 3}}), 0u);
}

// A thousand requests (a contraction tree's worth) plan validly; how long that takes is
// bench/micro/planning_bench's to measure, not a test's.
TEST(MemoryPlan, ThousandRequests) {
  std::mt19937_64 rng(2026);
  const auto rs = random_requests(rng, 1100, 550);
  const auto plan = tnrt::plan_memory(rs);
  std::printf("plan_memory: 1100 random requests (%s), arena/bound %.4f\n", plan.heuristic.c_str(),
              static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.lower_bound_bytes));
  expect_valid(rs, plan, 256);
}

// ---- liveness of a contraction tree ----

// A network of `n` inputs whose labels all have extent 2, and a tree given as (lhs, rhs, out) steps.
tnrt::problem make_problem(std::vector<std::vector<tnrt::label_t>> inputs, std::vector<tnrt::step> steps, tnrt::label_t labels) {
  tnrt::problem p;
  p.net.inputs = std::move(inputs);
  p.net.extents.assign(static_cast<std::size_t>(labels), 2);
  for (tnrt::label_t l = 0; l < labels; ++l) p.net.label_names.push_back(std::to_string(l));
  p.tree.steps = std::move(steps);
  if (!p.tree.steps.empty()) p.net.output = p.tree.steps.back().out;
  p.source = "test";
  return p;
}

// For every step: its result shares no byte with either operand (they are all in flight at once).
void expect_steps_do_not_alias(const tnrt::problem& p, const tnrt::tree_buffers& tb, const memory_plan& plan) {
  const std::size_t n = p.net.inputs.size();
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const int out = tb.request_of_operand[n + k];
    ASSERT_GE(out, 0);
    const auto& ro = tb.requests[static_cast<std::size_t>(out)];
    const std::size_t oo = plan.offsets[static_cast<std::size_t>(out)];
    for (int id : {p.tree.steps[k].lhs, p.tree.steps[k].rhs}) {
      if (id < 0) continue;
      const int in = tb.request_of_operand[static_cast<std::size_t>(id)];
      if (in < 0) continue;  // a user buffer
      const auto& ri = tb.requests[static_cast<std::size_t>(in)];
      const std::size_t oi = plan.offsets[static_cast<std::size_t>(in)];
      EXPECT_TRUE(oo + ro.bytes <= oi || oi + ri.bytes <= oo) << "step " << k << " writes over its operand " << id;
    }
  }
}

TEST(TreeLiveness, IntervalsOfASmallTree) {
  // inputs 0:(a,b) 1:(b,c) 2:(c,d) 3:(d)
  // step 0: 4 = 0 * 1 -> (a,c);  step 1: 5 = 2 * 3 -> (c);  step 2: 6 = 4 * 5 -> (a);  step 3: 7 = 6 -> ()
  auto p = make_problem({{0, 1}, {1, 2}, {2, 3}, {3}}, {{0, 1, {0, 2}}, {2, 3, {2}}, {4, 5, {0}}, {6, -1, {}}}, 4);
  p.type = tnrt::dtype::f64;
  const auto all = tnrt::tree_liveness(p, true, 1);
  ASSERT_EQ(all.requests.size(), 8u);
  const std::vector<std::size_t> bytes{32, 32, 32, 16, 32, 16, 16, 8};
  const std::vector<int> first{-1, -1, -1, -1, 0, 1, 2, 3}, last{0, 0, 1, 1, 2, 2, 3, 4};
  for (std::size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE("operand " + std::to_string(i));
    EXPECT_EQ(all.operand_of_request[i], static_cast<int>(i));
    EXPECT_EQ(all.request_of_operand[i], static_cast<int>(i));
    EXPECT_EQ(all.requests[i].bytes, bytes[i]);
    EXPECT_EQ(all.requests[i].first_step, first[i]);
    EXPECT_EQ(all.requests[i].last_step, last[i]);
  }
  const auto plan = tnrt::plan_memory(all.requests, 1);
  expect_valid(all.requests, plan, 1);
  expect_steps_do_not_alias(p, all, plan);

  const auto user = tnrt::tree_liveness(p, false, 256);  // inputs are the caller's buffers
  ASSERT_EQ(user.requests.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(user.request_of_operand[i], -1);
    EXPECT_EQ(user.operand_of_request[i], static_cast<int>(4 + i));
    EXPECT_EQ(user.requests[i].bytes, 256u);  // rounded up to the alignment
  }
  const auto uplan = tnrt::plan_memory(user.requests);
  expect_steps_do_not_alias(p, user, uplan);
  // step 2 reads 4 and 5 and writes 6: three buffers at once; step 3 reads 6 and writes 7.
  EXPECT_EQ(uplan.lower_bound_bytes, 768u);
  EXPECT_EQ(uplan.arena_bytes, 768u);
}

TEST(TreeLiveness, NoStepsAndErrors) {
  const auto single = make_problem({{0, 1}}, {}, 2);
  const auto tb = tnrt::tree_liveness(single, true, 1);
  ASSERT_EQ(tb.requests.size(), 1u);
  EXPECT_EQ(tb.requests[0].first_step, -1);
  EXPECT_EQ(tb.requests[0].last_step, 0);
  EXPECT_EQ(tb.requests[0].bytes, 16u);
  EXPECT_TRUE(tnrt::tree_liveness(single, false).requests.empty());

  auto twice = make_problem({{0}, {0}}, {{0, 1, {0}}, {0, 2, {0}}}, 1);
  EXPECT_THROW(tnrt::tree_liveness(twice, true), tnrt::path_error);
  auto unused = make_problem({{0}, {0}, {0}}, {{0, 1, {0}}}, 1);
  EXPECT_THROW(tnrt::tree_liveness(unused, true), tnrt::path_error);
  auto forward = make_problem({{0}, {0}}, {{0, 2, {0}}}, 1);
  EXPECT_THROW(tnrt::tree_liveness(forward, true), tnrt::path_error);
}

TEST(TreeLiveness, RandomTreesNeverAliasAStepsOperands) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    const tnrt::label_t labels = 12;
    std::uniform_int_distribution<tnrt::label_t> label(0, labels - 1);
    std::vector<std::vector<tnrt::label_t>> inputs(static_cast<std::size_t>(n));
    for (auto& in : inputs)
      for (int r = std::uniform_int_distribution<int>(0, 5)(rng); r > 0; --r) in.push_back(label(rng));
    std::vector<int> live(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) live[static_cast<std::size_t>(i)] = i;
    std::vector<tnrt::step> steps;
    while (live.size() > 1 || (steps.empty() && n == 1 && seed % 2 == 0)) {
      std::shuffle(live.begin(), live.end(), rng);
      tnrt::step s;
      s.lhs = live.back();
      live.pop_back();
      if (!live.empty() && std::uniform_int_distribution<int>(0, 4)(rng) != 0) {
        s.rhs = live.back();
        live.pop_back();
      }
      for (int r = std::uniform_int_distribution<int>(0, 6)(rng); r > 0; --r) {
        const auto l = label(rng);
        if (std::find(s.out.begin(), s.out.end(), l) == s.out.end()) s.out.push_back(l);
      }
      live.push_back(n + static_cast<int>(steps.size()));
      steps.push_back(std::move(s));
    }
    const auto p = make_problem(inputs, steps, labels);
    for (bool in_arena : {true, false}) {
      const auto tb = tnrt::tree_liveness(p, in_arena);
      const auto plan = tnrt::plan_memory(tb.requests);
      expect_valid(tb.requests, plan, 256);
      expect_steps_do_not_alias(p, tb, plan);
    }
    if (HasFailure()) return;
  }
}

// ---- the reference network ----

// CTest sets TNRT_SOURCE_DIR; run by hand, the test finds the tree from its own source path.
std::string source_dir() {
  if (const char* dir = std::getenv("TNRT_SOURCE_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().string();
}

TEST(MemoryPlan, ReferenceNetworkWithinTenPercentOfTheBound) {
  const std::string path = source_dir() + "/data/tensornetwork_permutation_optimized.json";
  const auto p = tnrt::load_tree_json_file(path, tnrt::tree_json_options{});  // bond dimension 2, f32
  ASSERT_EQ(p.net.inputs.size(), 550u);
  ASSERT_EQ(p.tree.steps.size(), 549u);
  for (bool in_arena : {true, false}) {
    SCOPED_TRACE(in_arena ? "inputs in the arena" : "inputs are user buffers");
    const auto tb = tnrt::tree_liveness(p, in_arena);
    std::size_t largest = 0, total = 0;
    for (const auto& r : tb.requests) largest = std::max(largest, r.bytes), total += r.bytes;
    EXPECT_EQ(largest, std::size_t{4} << 28);  // 2^28 f32 elements: 1 GiB
    const auto t0 = std::chrono::steady_clock::now();
    const auto plan = tnrt::plan_memory(tb.requests);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    expect_valid(tb.requests, plan, 256);
    expect_steps_do_not_alias(p, tb, plan);
    const double ratio = static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.lower_bound_bytes);
    std::printf("reference network, %s: %zu requests (%.4f GiB without reuse), arena %zu B (%.4f GiB), lower bound %zu B (%.4f GiB), ratio %.6f, %s, %.2f ms\n",
                in_arena ? "inputs in arena" : "inputs as user buffers", tb.requests.size(), static_cast<double>(total) / 1073741824.0, plan.arena_bytes,
                static_cast<double>(plan.arena_bytes) / 1073741824.0, plan.lower_bound_bytes,
                static_cast<double>(plan.lower_bound_bytes) / 1073741824.0, ratio, plan.heuristic.c_str(), ms);
    EXPECT_LE(ratio, 1.1);
  }
}

}  // namespace
