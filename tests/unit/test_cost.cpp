// Cost model: the reference network's published figures and small hand-counted cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "support/test_util.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace {

using tnrt::test::source_dir;

double round2(double x) { return std::round(x * 100) / 100; }

TEST(cost, reference_network_matches_the_published_figures) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_tree_json_file(source_dir() + "/data/tensornetwork_permutation_optimized.json", {});
  const auto c = tnrt::cost_of(p.net, p.tree);
  EXPECT_EQ(c.steps, 549u);
  EXPECT_DOUBLE_EQ(round2(c.log2_tc), 33.18);
  EXPECT_DOUBLE_EQ(round2(c.log2_sc), 28.00);
  EXPECT_DOUBLE_EQ(round2(c.log2_rwc), 32.09);
  EXPECT_DOUBLE_EQ(c.max_elements, std::exp2(28.0));
  // 2^32.09 elements of f32: 18.3 GB moved
  EXPECT_NEAR(c.rw_bytes(tnrt::dtype::f32) / 1e9, 18.3, 0.05);
  EXPECT_DOUBLE_EQ(c.rw_bytes(tnrt::dtype::c128), c.rw_elements * 16);
}

TEST(cost, matrix_product_by_hand) {
  // C(a,c) = A(a,b) B(b,c), 2x3 * 3x4: 24 multiply-adds, largest tensor 12, moved 6 + 12 + 8
  const auto net = tnrt::parse_expression("ab,bc->ac", {{2, 3}, {3, 4}});
  const auto c = tnrt::cost_of(net, tnrt::tree_from_linear_path(net, {{0, 1}}));
  EXPECT_EQ(c.steps, 1u);
  EXPECT_DOUBLE_EQ(c.flops, 24);
  EXPECT_DOUBLE_EQ(c.max_elements, 12);
  EXPECT_DOUBLE_EQ(c.rw_elements, 26);
  EXPECT_DOUBLE_EQ(c.log2_tc, std::log2(24.0));
  EXPECT_DOUBLE_EQ(c.log2_sc, std::log2(12.0));
  EXPECT_DOUBLE_EQ(c.log2_rwc, std::log2(26.0));
}

TEST(cost, flops_count_each_label_once_and_include_output_labels) {
  // T(a,b) = A(a,b) B(a,b), then out(a,b) = T(a,b) C(a,b): a and b count once per step
  const auto net = tnrt::parse_expression("ab,ab,ab->ab", {{2, 3}, {2, 3}, {2, 3}});
  const auto c = tnrt::cost_of(net, tnrt::tree_from_linear_path(net, {{0, 1}, {0, 1}}));
  EXPECT_DOUBLE_EQ(c.flops, 12);        // 6 + 6
  EXPECT_DOUBLE_EQ(c.rw_elements, 36);  // (6 + 6 + 6) * 2
  // outer product: out(a,c) from A(a) B(c): 2 * 4
  const auto outer = tnrt::parse_expression("a,c->ac", {{2}, {4}});
  EXPECT_DOUBLE_EQ(tnrt::cost_of(outer, tnrt::tree_from_linear_path(outer, {{0, 1}})).flops, 8);
}

TEST(cost, diagonal_operands_are_stored_at_full_size) {
  // A(i,i) 3x3 holds 9 elements; the trace reads 3 of them but the model counts the tensor
  const auto net = tnrt::parse_expression("ii->i", {{3, 3}});
  const auto c = tnrt::cost_of(net, tnrt::tree_from_linear_path(net, {}));
  EXPECT_DOUBLE_EQ(c.flops, 3);
  EXPECT_DOUBLE_EQ(c.max_elements, 9);
  EXPECT_DOUBLE_EQ(c.rw_elements, 12);
}

TEST(cost, a_tree_with_no_steps) {
  const auto net = tnrt::parse_expression("ab->ab", {{4, 8}});
  const auto c = tnrt::cost_of(net, tnrt::contraction_tree{});
  EXPECT_EQ(c.steps, 0u);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.log2_tc, 0);  // not -inf
  EXPECT_DOUBLE_EQ(c.log2_sc, 5);
  EXPECT_DOUBLE_EQ(c.log2_rwc, 0);
}

TEST(cost, bond_dimension_scales_every_figure) {
  REQUIRE_SOURCE_DIR();
  tnrt::tree_json_options opt;
  opt.bond_dim = 4;
  const auto p = tnrt::load_tree_json_file(source_dir() + "/data/tensornetwork_permutation_optimized.json", opt);
  const auto c = tnrt::cost_of(p.net, p.tree);
  EXPECT_DOUBLE_EQ(round2(c.log2_sc), 56.00);  // every label twice as many bits
}

}  // namespace
