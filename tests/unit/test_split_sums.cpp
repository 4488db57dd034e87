// Split-K by labels (src/core/split_sums.hpp), on the host:
//  - the probe's shape (b 2^3, m 2^5, n 2^4, summed 2^21, all extent 2) under the default rules:
//    one step becomes two, 8 summed labels kept (result 2^12 -> 2^20), neither end of the lhs's
//    summed labels among them, the reduction's operand the wide step, origins both 0;
//  - left alone: a square GEMM (large result), a dot product (scalar result), a short sum, a
//    one-sided sum (trace) even when long;
//  - ids after a split step shift: a later step's operand is the reduction's result;
//  - random trees (fixed seeds) under rules small enough to split most steps: the rewritten tree
//    contracts (CPU engine) to the naive reference of the original, in f64 and c64.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/split_sums.hpp"
#include "support/naive_einsum.hpp"
#include "support/random_problem.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace {

std::string letters(int from, int count) {
  std::string s;
  for (int i = 0; i < count; ++i) {
    const int c = from + i;
    s += static_cast<char>(c < 26 ? 'a' + c : 'A' + (c - 26));
  }
  return s;
}

network all_twos(const std::string& eq) {
  const auto arrow = eq.find("->");
  const auto comma = eq.find(',');
  return parse_expression(eq, {std::vector<std::int64_t>(comma, 2), std::vector<std::int64_t>(arrow - comma - 1, 2)});
}

TEST(split_sums, the_probe_shape_keeps_eight_middle_labels) {
  const std::string b = letters(0, 3), m = letters(3, 5), n = letters(8, 4), k = letters(12, 21);
  const network net = all_twos(b + m + k + "," + b + k + n + "->" + b + m + n);
  const contraction_tree t = tree_from_linear_path(net, {{0, 1}});
  const auto r = split_long_sums(net, t);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->split, 1);
  ASSERT_EQ(r->tree.steps.size(), 2u);
  EXPECT_EQ(r->origin, (std::vector<int>{0, 0}));
  const step& wide = r->tree.steps[0];
  const step& reduce = r->tree.steps[1];
  EXPECT_EQ(wide.lhs, 0);
  EXPECT_EQ(wide.rhs, 1);
  ASSERT_EQ(wide.out.size(), t.steps[0].out.size() + 8);  // 2^12 * 2^8 = 2^20
  EXPECT_TRUE(std::equal(t.steps[0].out.begin(), t.steps[0].out.end(), wide.out.begin()));
  const std::vector<label_t> kept(wide.out.begin() + static_cast<std::ptrdiff_t>(t.steps[0].out.size()), wide.out.end());
  const std::vector<label_t>& lhs = net.inputs[0];
  const label_t first_k = lhs[8], last_k = lhs.back();  // the lhs's summed labels: after b and m
  for (label_t l : kept) {
    EXPECT_NE(l, first_k);
    EXPECT_NE(l, last_k);
    EXPECT_NE(std::find(lhs.begin() + 8, lhs.end(), l), lhs.end()) << "kept label " << l << " is not a summed one";
  }
  EXPECT_EQ(reduce.lhs, 2);  // the wide step's result
  EXPECT_EQ(reduce.rhs, -1);
  EXPECT_EQ(reduce.out, t.steps[0].out);
}

TEST(split_sums, steps_the_rules_do_not_pick_stay) {
  // a square GEMM: result 2^20 elements, over max_result
  const network gemm = parse_expression("ab,bc->ac", {{1024, 4096}, {4096, 1024}});
  EXPECT_FALSE(split_long_sums(gemm, tree_from_linear_path(gemm, {{0, 1}})).has_value());
  // a dot product: a scalar result
  const network dot = all_twos(letters(0, 26) + "," + letters(0, 26) + "->");
  EXPECT_FALSE(split_long_sums(dot, tree_from_linear_path(dot, {{0, 1}})).has_value());
  // a short sum: 2^10 long, result 2^10, 2^20 multiply-adds
  const network shortsum = all_twos(letters(0, 5) + letters(10, 10) + "," + letters(10, 10) + letters(5, 5) + "->" + letters(0, 10));
  EXPECT_FALSE(split_long_sums(shortsum, tree_from_linear_path(shortsum, {{0, 1}})).has_value());
  // a one-sided sum (a trace of the lhs, 2^22 long): no label of both operands to keep
  const network trace = all_twos(letters(0, 6) + letters(10, 22) + "," + letters(6, 4) + "->" + letters(0, 10));
  EXPECT_FALSE(split_long_sums(trace, tree_from_linear_path(trace, {{0, 1}})).has_value());
}

TEST(split_sums, later_steps_read_the_reduction) {
  // (A B) C with A B the long sum: C's step must read the reduction's result (id 3 + 1)
  const std::string b = letters(0, 3), m = letters(3, 5), n = letters(8, 4), k = letters(12, 21);
  const network base = all_twos(b + m + k + "," + b + k + n + "->" + b + m + n);
  network net = base;
  net.inputs.push_back({net.inputs[0][0]});  // C: one b label, summed in the last step
  net.output.erase(net.output.begin());
  const contraction_tree t = tree_from_linear_path(net, {{0, 1}, {0, 1}});
  const auto r = split_long_sums(net, t);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->tree.steps.size(), 3u);
  EXPECT_EQ(r->origin, (std::vector<int>{0, 0, 1}));
  const step& last = r->tree.steps[2];
  EXPECT_TRUE((last.lhs == 2 && last.rhs == 4) || (last.lhs == 4 && last.rhs == 2)) << last.lhs << "," << last.rhs;
  EXPECT_EQ(last.out, t.steps[1].out);
}

TEST(split_sums, random_trees_contract_to_the_same_result) {
  split_sum_rules tiny;
  tiny.min_multiply_adds = 1;
  tiny.min_result = 1;
  tiny.max_result = 1e18;
  tiny.min_sum = 2;
  tiny.target_result = 1e18;
  tiny.min_sum_left = 1;
  tiny.min_factor = 2;
  int split = 0, trees = 0;
  for (dtype type : {dtype::f64, dtype::c64}) {
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      const problem p = test::random_problem(seed, type, 2, 3, 6);
      const auto r = split_long_sums(p.net, p.tree, tiny);
      if (!r) continue;
      ++trees;
      split += r->split;
      problem q = p;
      q.tree = r->tree;
      ASSERT_EQ(r->origin.size(), q.tree.steps.size());
      const auto in = test::random_inputs(p, seed);
      EXPECT_LE(test::relative_error(cpu::contract(q, in), test::naive_contract(p, in)), type == dtype::f64 ? 1e-12 : 1e-5)
          << "seed " << seed;
    }
  }
  EXPECT_GE(trees, 100) << "too few random trees had a step to split: the test would not test";
  EXPECT_GE(split, trees);
}

}  // namespace
}  // namespace tnrt
