// Slices over several ranks (include/tnrt/distributed.hpp), on the CPU engine with the ranks as
// threads: every slice in exactly one share under both schedules, idle ranks when slices are few,
// the combine's rule (gathered blocks copied, shared blocks summed), the result equal to the
// one-rank and the unsliced one on random networks in every dtype, and a failing rank as one typed
// error that names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/naive_einsum.hpp"
#include "support/random_problem.hpp"
#include "support/test_util.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

const dtype all_types[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};
const slice_schedule both[] = {slice_schedule::contiguous, slice_schedule::round_robin};

TEST(distributed, every_slice_in_exactly_one_share) {
  for (slice_schedule how : both) {
    for (std::int64_t slices : {0, 1, 2, 5, 16, 17, 1000}) {
      for (int ranks : {1, 2, 3, 4, 7, 8, 32}) {
        std::vector<int> owner(static_cast<std::size_t>(slices), -1);
        std::int64_t most = 0, least = slices;
        for (int r = 0; r < ranks; ++r) {
          const slice_share s = share_of(slices, ranks, r, how);
          most = std::max(most, s.count);
          least = std::min(least, s.count);
          for (std::int64_t i = 0; i < s.count; ++i) {
            const std::int64_t k = s.first + i * s.stride;
            ASSERT_GE(k, 0);
            ASSERT_LT(k, slices);
            EXPECT_EQ(owner[static_cast<std::size_t>(k)], -1) << "slice " << k << " twice";
            owner[static_cast<std::size_t>(k)] = r;
          }
          if (how == slice_schedule::contiguous) {
            EXPECT_EQ(s.stride, 1);
          }
        }
        EXPECT_TRUE(std::none_of(owner.begin(), owner.end(), [](int o) { return o < 0; }));
        EXPECT_LE(most - least, 1) << "balanced within one slice";
      }
    }
  }
  EXPECT_EQ(share_of(10, 4, 0, slice_schedule::contiguous), (slice_share{0, 3, 1}));
  EXPECT_EQ(share_of(10, 4, 3, slice_schedule::contiguous), (slice_share{8, 2, 1}));
  EXPECT_EQ(share_of(10, 4, 1, slice_schedule::round_robin), (slice_share{1, 3, 4}));
  EXPECT_EQ(share_of(2, 4, 3, slice_schedule::round_robin).count, 0);  // idle
  EXPECT_THROW((void)share_of(10, 0, 0, slice_schedule::contiguous), usage_error);
  EXPECT_THROW((void)share_of(10, 4, 4, slice_schedule::contiguous), usage_error);
  EXPECT_THROW((void)share_of(-1, 4, 0, slice_schedule::contiguous), usage_error);
}

// C(a,c) = A(a,b) B(b,c), sliced over a (an output label) and b (summed): 3 x 4 = 12 slices, a
// first so its blocks are runs of 4 slices.
problem matmul(dtype t) { return test::matmul_problem(3, 4, 5, t); }

TEST(distributed, blocks_of_one_rank_are_gathered_the_rest_summed) {
  const problem p = matmul(dtype::f64);
  const std::vector<label_t> ab{0, 1};
  // contiguous over 3 ranks: 4 slices each = one block each: all gathered
  const reduction_plan c3 = plan_reduction(p, ab, 3, slice_schedule::contiguous);
  EXPECT_EQ(c3.block_labels, (std::vector<label_t>{0}));
  EXPECT_EQ(c3.contributors, (std::vector<std::vector<int>>{{0}, {1}, {2}}));
  EXPECT_EQ(c3.gathered, 3);
  EXPECT_EQ(c3.summed, 0);
  // round robin over 3: every block is summed over every rank
  const reduction_plan r3 = plan_reduction(p, ab, 3, slice_schedule::round_robin);
  EXPECT_EQ(r3.summed, 3);
  EXPECT_EQ(r3.contributors[1], (std::vector<int>{0, 1, 2}));
  // contiguous over 5 (12 slices: runs 0-2, 3-5, 6-7, 8-9, 10-11): blocks of 4 straddle ranks
  const reduction_plan c5 = plan_reduction(p, ab, 5, slice_schedule::contiguous);
  EXPECT_EQ(c5.contributors, (std::vector<std::vector<int>>{{0, 1}, {1, 2}, {3, 4}}));
  // b before a: the slice index runs fastest over a, so contiguous runs cross blocks
  const std::vector<label_t> ba{1, 0};
  EXPECT_EQ(plan_reduction(p, ba, 3, slice_schedule::contiguous).summed, 3);
  // no sliced output label: one block, summed over the ranks that have slices
  const std::vector<label_t> b{1};
  const reduction_plan one = plan_reduction(p, b, 8, slice_schedule::contiguous);
  EXPECT_TRUE(one.block_labels.empty());
  EXPECT_EQ(one.contributors, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));

  // the rule itself: a gathered block is a copy (not added to what other partials hold there)
  reduction_plan hand;
  hand.block_labels = {0};
  hand.contributors = {{0}, {0, 1}, {1}};
  std::vector<host_tensor> parts;
  for (int r = 0; r < 2; ++r) {
    parts.emplace_back(dtype::f64, std::vector<std::int64_t>{3, 5});
    fill_constant(parts.back(), r + 1.0);  // rank 0 all 1, rank 1 all 2
  }
  const host_tensor got = combine_partials(p, hand, parts);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(got.as<const double>()[i], i < 5 ? 1.0 : i < 10 ? 3.0 : 2.0) << i;
  EXPECT_THROW((void)combine_partials(p, hand, std::span<const host_tensor>(parts).first(1)), shape_error);
}

double tolerance(const problem& p) {
  const double eps = is_double(p.type) ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  double k = 1;
  for (std::int64_t e : p.net.extents) k *= static_cast<double>(e);
  return 16.0 * eps * std::sqrt(k) * static_cast<double>(p.tree.steps.size() + 1);
}

TEST(distributed, ranks_give_the_one_rank_and_the_unsliced_result) {
  int idle = 0, gathered = 0, summed = 0;
  for (dtype t : all_types) {
    for (std::uint64_t c = 0; c < 30; ++c) {
      const std::uint64_t seed = 4400 + c;
      const problem p = test::random_problem(seed, t);
      std::vector<label_t> labels;
      for (const auto& in : p.net.inputs)
        for (label_t l : in)
          if (p.net.extents[static_cast<std::size_t>(l)] > 1 && std::find(labels.begin(), labels.end(), l) == labels.end())
            labels.push_back(l);
      if (labels.empty()) continue;
      std::mt19937_64 rng(seed);
      std::shuffle(labels.begin(), labels.end(), rng);
      labels.resize(std::min<std::size_t>(labels.size(), 1 + rng() % 3));
      const auto in = test::random_inputs(p, seed);
      const host_tensor whole = cpu::contract(p, in);
      const host_tensor one = cpu::contract_sliced(p, in, labels);
      for (int ranks : {1, 2, 3, 5}) {
        for (slice_schedule how : both) {
          SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(t)) + " ranks " + std::to_string(ranks) +
                       (how == slice_schedule::contiguous ? " contiguous" : " round-robin"));
          distributed_report rep;
          const host_tensor got = cpu::contract_sliced_ranks(p, in, labels, ranks, how, &rep);
          ASSERT_EQ(got.shape(), whole.shape());
          EXPECT_LE(test::relative_error(got, whole), tolerance(p));
          EXPECT_LE(test::relative_error(got, one), tolerance(p));
          EXPECT_EQ(rep.per_rank.size(), static_cast<std::size_t>(ranks));
          std::int64_t total = 0;
          for (const auto& r : rep.per_rank) total += r.share.count;
          EXPECT_EQ(total, rep.plan.slices);
          idle += !rep.notes.empty();
          gathered += rep.plan.gathered > 0 && ranks > 1;
          summed += rep.plan.summed > 0 && ranks > 1;
        }
      }
    }
  }
  EXPECT_GT(idle, 0);  // some draws have fewer slices than ranks
  EXPECT_GT(gathered, 0);
  EXPECT_GT(summed, 0);
}

TEST(distributed, idle_ranks_say_so_and_contribute_nothing) {
  const problem p = matmul(dtype::f32);
  const auto in = test::random_inputs(p, 5);
  const std::vector<label_t> a{0};  // 3 slices
  distributed_report rep;
  const host_tensor got = cpu::contract_sliced_ranks(p, in, a, 5, slice_schedule::contiguous, &rep);
  EXPECT_LE(test::relative_error(got, cpu::contract(p, in)), 1e-5);
  ASSERT_EQ(rep.notes.size(), 2u);
  EXPECT_EQ(rep.notes[0], "rank 3 of 5: no slices (3 slices for 5 ranks): idle");
  EXPECT_EQ(rep.plan.gathered, 3);
}

TEST(distributed, sliced_output_labels_go_first_so_contiguous_shares_gather) {
  const problem p = matmul(dtype::f64);
  const auto in = test::random_inputs(p, 8);
  const std::vector<label_t> ba{1, 0};  // b before a: as given, every block would be summed
  ASSERT_EQ(plan_reduction(p, ba, 3, slice_schedule::contiguous).summed, 3);
  distributed_report rep;
  const host_tensor got = cpu::contract_sliced_ranks(p, in, ba, 3, slice_schedule::contiguous, &rep);
  EXPECT_EQ(rep.plan.block_labels, (std::vector<label_t>{0}));
  EXPECT_EQ(rep.plan.gathered, 3);
  EXPECT_EQ(rep.plan.summed, 0);
  EXPECT_LE(test::relative_error(got, cpu::contract(p, in)), 1e-12);
}

TEST(distributed, a_failing_rank_is_one_typed_error_naming_it) {
  const problem p = matmul(dtype::f64);
  const auto in = test::random_inputs(p, 6);
  const std::vector<label_t> ab{0, 1};
  std::atomic<int> calls{0};
  // the slice contractor fails on the slices of rank 2 (contiguous: slices 8..11, a = 2)
  const slice_contractor flaky = [&](const problem& q, std::span<const host_tensor> x) {
    ++calls;
    if (x[0].as<const double>()[0] == in[0].as<const double>()[8]) throw out_of_memory("device memory exhausted");
    return cpu::contract(q, x);
  };
  try {
    (void)contract_sliced_ranks(p, in, ab, 3, slice_schedule::contiguous, flaky);
    ADD_FAILURE() << "no exception";
  } catch (const out_of_memory& e) {
    EXPECT_EQ(std::string(e.what()), "rank 2 of 3: device memory exhausted");
  }
  EXPECT_GE(calls.load(), 9);  // the other ranks ran their shares to the end
  const slice_contractor broken = [](const problem&, std::span<const host_tensor>) -> host_tensor { throw std::runtime_error("boom"); };
  EXPECT_THROW((void)contract_sliced_ranks(p, in, ab, 2, slice_schedule::round_robin, broken), internal_error);
  EXPECT_THROW((void)cpu::contract_sliced_ranks(p, in, ab, 0, slice_schedule::contiguous), usage_error);
}

TEST(distributed, strided_shares_of_contract_sliced) {
  const problem p = matmul(dtype::f64);
  const auto in = test::random_inputs(p, 7);
  const std::vector<label_t> b{1};  // 4 slices, all summed
  const host_tensor even = cpu::contract_sliced(p, in, b, {}, 0, -1, 2);
  const host_tensor odd = cpu::contract_sliced(p, in, b, {}, 1, -1, 2);
  const host_tensor all = cpu::contract_sliced(p, in, b);
  for (int i = 0; i < 15; ++i)
    EXPECT_NEAR(even.as<const double>()[i] + odd.as<const double>()[i], all.as<const double>()[i], 1e-12);
  EXPECT_THROW((void)cpu::contract_sliced(p, in, b, {}, 0, 3, 2), shape_error);  // slices 0, 2, 4: 4 does not exist
  EXPECT_THROW((void)cpu::contract_sliced(p, in, b, {}, 0, -1, 0), usage_error);
}

}  // namespace
}  // namespace tnrt
