// Chains of large x small steps in one pass (src/core/chain.hpp), on the host:
//  - plan_chains + evaluate_chain against the chain's steps evaluated one by one with
//    evaluate_lowered (the trusted reference), on random gate-like chains: one- and two-label gates,
//    diagonal (batch) gates, sums of a label of either side only, outer products, labels growing and
//    shrinking, under every intermediate layout, with slabs small enough to need tiles and large
//    enough to hold the whole chain. Integer-valued f64 data: the chain must give the exact value;
//    f32 and c64 within a relative tolerance. Extents of 2 and 3: rows, loads and stores decoded
//    with shifts (every extent a power of two) and with divisions.
//  - the plan's claims: chains are runs of the tree's steps each consuming the previous result,
//    each of at least two steps, no step in two chains, slabs and tables within the limits.
//  - what it refuses: a step with a repeated label, a step not eligible, a small side over the limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/chain.hpp"
#include "core/step_lowering.hpp"
#include "core/step_plan.hpp"
#include "tnrt/options.hpp"
#include "support/chain_random.hpp"

namespace tnrt {
namespace {

using chaintest::random_chain;

template <class T>
T random_value(std::mt19937& rng, bool integers) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    std::uniform_real_distribution<R> u(-1, 1);
    return T(u(rng), u(rng));
  } else {
    if (integers) return static_cast<T>(std::uniform_int_distribution<int>(-2, 2)(rng));
    std::uniform_real_distribution<T> u(-1, 1);
    return u(rng);
  }
}

template <class T>
double magnitude(T x) {
  return std::abs(x);
}

struct run_counts {
  int chains = 0, chained_steps = 0, tiled_chains = 0, pow2 = 0, general = 0;
  int split_rows = 0;     // steps whose rows span several groups of chain_threads (split)
  int split_lists = 0;    // records whose load list spans several groups (lists_split)
  int past_groups = 0;    // records with lists_split and entries past chain_max_hi groups
};

// Every operand of p evaluated one step at a time at the plan's strides, then every chain
// plan_chains finds evaluated by the kernel's indexing and compared with the step-by-step result.
template <class T>
void check_problem(const problem& p, layout_policy layout, const chain_limits& limits, std::mt19937& rng, bool integers,
                   double tolerance, run_counts& counts) {
  options o;
  o.intermediate_layout = layout;
  const step_plan sp = plan_steps(p, o);
  const std::size_t n = p.net.inputs.size();
  std::vector<std::vector<T>> value(n + p.tree.steps.size());
  for (std::size_t i = 0; i < n; ++i) {
    value[i].resize(static_cast<std::size_t>(p.net.elements_of(p.net.inputs[i])));
    for (T& x : value[i]) x = random_value<T>(rng, integers);
  }
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    value[n + k].assign(static_cast<std::size_t>(p.net.elements_of(s.out)), T{});
    evaluate_lowered(sp.lowered[k], value[static_cast<std::size_t>(s.lhs)].data(), value[static_cast<std::size_t>(s.rhs)].data(),
                     value[n + k].data());
  }
  const std::vector<std::uint8_t> eligible(p.tree.steps.size(), 1);
  const std::vector<chain_plan> chains = plan_chains(p, sp.strides, eligible, sizeof(T), limits);
  std::vector<int> in_chain(p.tree.steps.size(), 0);
  for (const chain_plan& c : chains) {
    ASSERT_GE(c.steps.size(), 2U);
    ASSERT_LE(c.steps.size(), static_cast<std::size_t>(chain_max_steps));
    EXPECT_LE(static_cast<std::int64_t>(c.rec.slab_max) * static_cast<std::int64_t>(sizeof(T)), limits.slab_bytes);
    EXPECT_LE(static_cast<std::int64_t>(c.rec.sd_elems) * static_cast<std::int64_t>(sizeof(T)), limits.table_bytes);
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      const step& s = p.tree.steps[static_cast<std::size_t>(c.steps[i])];
      ++in_chain[static_cast<std::size_t>(c.steps[i])];
      const int big = i == 0 ? c.big_id : static_cast<int>(n) + c.steps[i - 1];
      EXPECT_TRUE((s.lhs == big && s.rhs == c.small_ids[i]) || (s.rhs == big && s.lhs == c.small_ids[i])) << "a run of consuming steps";
      EXPECT_EQ(c.small_is_lhs[i] != 0, s.lhs == c.small_ids[i]);
    }
    std::vector<const T*> smalls;
    for (int id : c.small_ids) smalls.push_back(value[static_cast<std::size_t>(id)].data());
    const std::vector<T>& want = value[n + static_cast<std::size_t>(c.steps.back())];
    std::vector<T> got(want.size(), T{});
    // A NaN-like sentinel where the kernel must write: every element of X_m is overwritten.
    for (T& x : got) x = static_cast<T>(12345.0);
    evaluate_chain<T>(c.rec, value[static_cast<std::size_t>(c.big_id)].data(), smalls.data(), got.data());
    double scale = 0;
    for (const T& x : want) scale = std::max(scale, magnitude(x));
    for (std::size_t e = 0; e < want.size(); ++e) {
      if (integers) {
        ASSERT_EQ(got[e], want[e]) << "element " << e << " of step " << c.steps.back();
      } else {
        ASSERT_LE(magnitude(got[e] - want[e]), tolerance * (1 + scale)) << "element " << e << " of step " << c.steps.back();
      }
    }
    ++counts.chains;
    counts.chained_steps += static_cast<int>(c.steps.size());
    if (c.rec.tile_count > 1) ++counts.tiled_chains;
    (c.rec.pow2 != 0 && c.rec.step[0].r_pow2 != 0 ? counts.pow2 : counts.general) += 1;
    for (int i = 0; i < c.rec.steps; ++i)
      if (c.rec.step[i].split != 0 && c.rec.step[i].rows > chain_threads) ++counts.split_rows;
    if (c.rec.lists_split != 0 && c.rec.load_count > chain_threads) ++counts.split_lists;
    if (c.rec.lists_split != 0 && c.rec.load_count > (chain_max_hi << chain_thread_bits)) ++counts.past_groups;
  }
  for (int x : in_chain) EXPECT_LE(x, 1) << "a step in two chains";
}

chain_limits test_limits(std::int64_t slab_bytes) {
  chain_limits l;
  l.slab_bytes = slab_bytes;
  l.table_bytes = 64 * 1024;
  l.min_big = 16;
  l.max_small = 512;
  l.min_run = 8;
  return l;
}

TEST(Chain, MatchesStepsOneByOneExactly) {
  std::mt19937 rng(7);
  run_counts counts;
  for (int trial = 0; trial < 60; ++trial) {
    const problem p = random_chain(rng, std::uniform_int_distribution<int>(2, 12)(rng));
    for (layout_policy layout : all_layouts)
      for (std::int64_t slab : {256, 2048, 65536}) check_problem<double>(p, layout, test_limits(slab), rng, true, 0, counts);
  }
  EXPECT_GT(counts.chains, 200);
  EXPECT_GT(counts.tiled_chains, 100) << "slabs smaller than X_0: tiles";
  EXPECT_GT(counts.chained_steps, 3 * counts.chains / 2);
  EXPECT_GT(counts.pow2, 50) << "chains decoded with shifts";
  EXPECT_GT(counts.general, 50) << "chains decoded with divisions";
}

// States of 2^12 to 2^15 elements, every extent a power of two: rows and lists in several groups of
// chain_threads (decoded as a thread's place in its group plus the group's offsets), and slabs of
// more entries than the record's groups hold.
TEST(Chain, MatchesStepsOneByOneInGroupsOfThreads) {
  std::mt19937 rng(5);
  run_counts counts;
  const chaintest::chain_shape shape{.min_labels = 12, .max_labels = 14, .grow_until = 40000, .shrink_after = 4000, .odd_extent = 4};
  for (int trial = 0; trial < 6; ++trial) {
    const problem p = random_chain(rng, std::uniform_int_distribution<int>(2, 10)(rng), shape);
    for (layout_policy layout : all_layouts)
      for (std::int64_t slab : {16384, 65536}) check_problem<double>(p, layout, test_limits(slab), rng, true, 0, counts);
  }
  EXPECT_GT(counts.chains, 30);
  EXPECT_GT(counts.split_rows, 50) << "rows in several groups, decoded as the thread's place plus the group's";
  EXPECT_GT(counts.split_lists, 20) << "load and store lists in several groups";
  EXPECT_GT(counts.past_groups, 5) << "entries past the groups the record holds";
}

TEST(Chain, MatchesStepsOneByOneInEveryType) {
  std::mt19937 rng(11);
  run_counts counts;
  for (int trial = 0; trial < 25; ++trial) {
    const problem p = random_chain(rng, std::uniform_int_distribution<int>(2, 10)(rng));
    for (layout_policy layout : {layout_policy::row_major, layout_policy::planned}) {
      check_problem<float>(p, layout, test_limits(1024), rng, false, 1e-4, counts);
      check_problem<std::complex<float>>(p, layout, test_limits(4096), rng, false, 1e-4, counts);
      check_problem<std::complex<double>>(p, layout, test_limits(8192), rng, false, 1e-12, counts);
    }
  }
  EXPECT_GT(counts.chains, 50);
}

TEST(Chain, RefusesWhatItCannotRun) {
  std::mt19937 rng(3);
  const problem p = random_chain(rng, 6);
  options o;
  const step_plan sp = plan_steps(p, o);
  const chain_limits limits = test_limits(65536);
  std::vector<std::uint8_t> eligible(p.tree.steps.size(), 1);
  const auto all = plan_chains(p, sp.strides, eligible, 8, limits);
  ASSERT_FALSE(all.empty());
  // No step eligible: no chain. Every other step eligible: no two consecutive, no chain.
  std::fill(eligible.begin(), eligible.end(), 0);
  EXPECT_TRUE(plan_chains(p, sp.strides, eligible, 8, limits).empty());
  for (std::size_t k = 0; k < eligible.size(); ++k) eligible[k] = k % 2;
  EXPECT_TRUE(plan_chains(p, sp.strides, eligible, 8, limits).empty());
  // Small sides over the limit: none.
  chain_limits tiny = limits;
  tiny.max_small = 0;
  std::fill(eligible.begin(), eligible.end(), 1);
  EXPECT_TRUE(plan_chains(p, sp.strides, eligible, 8, tiny).empty());
  // A slab that cannot hold one step's active labels: none.
  chain_limits narrow = limits;
  narrow.slab_bytes = 8;
  EXPECT_TRUE(plan_chains(p, sp.strides, eligible, 8, narrow).empty());
}

// Two one-label gates on a state of 2 x 2^15 x extent elements (nothing is allocated).
problem two_gates_on(std::int64_t extent) {
  problem p;
  p.net.extents = {2, 1 << 15, extent, 2, 2};
  p.net.label_names = {"a", "b", "c", "a2", "a3"};
  p.net.inputs = {{0, 1, 2}, {3, 0}, {4, 3}};
  p.tree.steps = {step{0, 1, {3, 1, 2}}, step{3, 2, {4, 1, 2}}};
  p.net.output = p.tree.steps.back().out;
  return p;
}

TEST(Chain, RefusesOperandsOf2To31Elements) {
  // The kernel's offsets are 32-bit: a state of 2^30 elements chains, one of 2^31 does not.
  for (const std::int64_t extent : {std::int64_t{1} << 14, std::int64_t{1} << 15}) {
    const problem p = two_gates_on(extent);
    const step_plan sp = plan_steps(p, options{});
    const std::vector<std::uint8_t> eligible(p.tree.steps.size(), 1);
    EXPECT_EQ(plan_chains(p, sp.strides, eligible, 4).size(), extent < (1 << 15) ? 1U : 0U) << "state of " << 2 * (1 << 15) * extent << " elements";
  }
}

}  // namespace
}  // namespace tnrt
