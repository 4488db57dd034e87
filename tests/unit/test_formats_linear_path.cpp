// tree_from_linear_path: opt_einsum's linear paths into steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace {

using tnrt::test::expect_error;

using labels = std::vector<tnrt::label_t>;
using path_t = std::vector<std::vector<int>>;

std::string names(const tnrt::network& net, const labels& ls) {
  std::string s;
  for (auto l : ls) s += net.label_names.at(static_cast<std::size_t>(l));
  return s;
}

TEST(formats_linear_path, intermediates_keep_needed_labels_in_first_appearance_order) {
  const auto net = tnrt::parse_expression("ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 5}});
  const auto tree = tnrt::tree_from_linear_path(net, {{0, 1}, {0, 1}});
  ASSERT_EQ(tree.steps.size(), 2u);
  EXPECT_EQ(tree.steps[0].lhs, 0);
  EXPECT_EQ(tree.steps[0].rhs, 1);
  EXPECT_EQ(names(net, tree.steps[0].out), "ac");
  // after the first step the list is [cd, ac]: positions (0, 1) are input 2 and step 0's result
  EXPECT_EQ(tree.steps[1].lhs, 2);
  EXPECT_EQ(tree.steps[1].rhs, 3);
  EXPECT_EQ(names(net, tree.steps[1].out), "ad");
  EXPECT_NO_THROW(tnrt::validate(net, tree));
  // pairs given high position first name the operands in that order
  const auto swapped = tnrt::tree_from_linear_path(net, {{1, 0}, {1, 0}});
  EXPECT_EQ(swapped.steps[0].lhs, 1);
  EXPECT_EQ(names(net, swapped.steps[0].out), "ca");
}

TEST(formats_linear_path, last_step_produces_the_output_order) {
  // natural order of the last step would be "ac"; the output is "ca", with no extra step
  const auto net = tnrt::parse_expression("ab,bc->ca", {{2, 3}, {3, 4}});
  const auto tree = tnrt::tree_from_linear_path(net, {{0, 1}});
  ASSERT_EQ(tree.steps.size(), 1u);
  EXPECT_EQ(names(net, tree.steps[0].out), "ca");
  EXPECT_NO_THROW(tnrt::validate(net, tree));
}

TEST(formats_linear_path, single_operand) {
  const auto transpose = tnrt::parse_expression("ab->ba", {{2, 3}});
  const auto t = tnrt::tree_from_linear_path(transpose, {});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].lhs, 0);
  EXPECT_EQ(t.steps[0].rhs, -1);
  EXPECT_EQ(names(transpose, t.steps[0].out), "ba");
  EXPECT_EQ(t.result_id(1), 1);
  // already the output: nothing to do
  const auto same = tnrt::parse_expression("ab->ab", {{2, 3}});
  EXPECT_TRUE(tnrt::tree_from_linear_path(same, {}).steps.empty());
  // opt_einsum's [(0,)] for one operand: one unary step
  const auto trace = tnrt::parse_expression("ii->", {{3, 3}});
  const auto tr = tnrt::tree_from_linear_path(trace, {{0}});
  ASSERT_EQ(tr.steps.size(), 1u);
  EXPECT_TRUE(tr.steps[0].out.empty());
  EXPECT_NO_THROW(tnrt::validate(trace, tr));
  // a scalar operand with no labels equals the scalar output
  const auto scalar = tnrt::parse_expression("->", {{}});
  EXPECT_TRUE(tnrt::tree_from_linear_path(scalar, {}).steps.empty());
}

TEST(formats_linear_path, unary_entries_between_pairs) {
  // sum j out of the first operand alone, then contract
  const auto net = tnrt::parse_expression("aj,ab->b", {{2, 3}, {2, 4}});
  const auto tree = tnrt::tree_from_linear_path(net, {{0}, {0, 1}});
  ASSERT_EQ(tree.steps.size(), 2u);
  EXPECT_EQ(tree.steps[0].rhs, -1);
  EXPECT_EQ(names(net, tree.steps[0].out), "a");
  EXPECT_EQ(tree.steps[1].lhs, 1);
  EXPECT_EQ(tree.steps[1].rhs, 2);
  EXPECT_NO_THROW(tnrt::validate(net, tree));
  // a unary entry last, after the pair: the pair keeps its natural labels, the unary makes the output
  const auto t2 = tnrt::tree_from_linear_path(tnrt::parse_expression("ab,bc->ca", {{2, 3}, {3, 4}}), {{0, 1}, {0}});
  ASSERT_EQ(t2.steps.size(), 2u);
  EXPECT_EQ(t2.steps[0].out, (labels{0, 2}));
  EXPECT_EQ(t2.steps[1].out, (labels{2, 0}));
}

TEST(formats_linear_path, entries_of_three_fold_left_to_right) {
  const auto net = tnrt::parse_expression("ab,bc,cd,de->ae", {{2, 3}, {3, 4}, {4, 5}, {5, 6}});
  const auto tree = tnrt::tree_from_linear_path(net, {{0, 1, 2}, {0, 1}});
  ASSERT_EQ(tree.steps.size(), 3u);
  EXPECT_EQ(names(net, tree.steps[0].out), "ac");  // c still needed by the third of the entry
  EXPECT_EQ(names(net, tree.steps[1].out), "ad");  // d needed by de
  EXPECT_EQ(names(net, tree.steps[2].out), "ae");
  EXPECT_NO_THROW(tnrt::validate(net, tree));
}

TEST(formats_linear_path, hyperedges_stay_until_their_last_user) {
  const auto net = tnrt::parse_expression("ab,ab,ab->", {{2, 3}, {2, 3}, {2, 3}});
  const auto tree = tnrt::tree_from_linear_path(net, {{0, 1}, {0, 1}});
  EXPECT_EQ(names(net, tree.steps[0].out), "ab");
  EXPECT_TRUE(tree.steps[1].out.empty());
  // a batch label in the output is kept by every step
  const auto batch = tnrt::parse_expression("za,zab,zb->z", {{2, 3}, {2, 3, 4}, {2, 4}});
  const auto t = tnrt::tree_from_linear_path(batch, {{0, 1}, {0, 1}});
  EXPECT_EQ(names(batch, t.steps[0].out), "zb");
  EXPECT_NO_THROW(tnrt::validate(batch, t));
}

TEST(formats_linear_path, errors) {
  const auto net = tnrt::parse_expression("ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 5}});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {}); }, {"ends with 3 operands"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{0, 1}}); }, {"ends with 2 operands"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{0, 3}, {0, 1}}); },
                                 {"path[0] = (0, 3)", "position 3 is out of range", "3 operands remain, positions 0..2"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{0, 1}, {0, 1}, {1}}); }, {"path[2] = (1,)", "1 operand remains, position 0)"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{-1, 0}, {0, 1}}); }, {"position -1"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{2, 2}, {0, 1}}); }, {"names position 2 twice"});
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(net, {{}, {0, 1}}); }, {"path[0] = ()", "names no operand"});
  tnrt::network empty;
  expect_error<tnrt::path_error>([&] { tnrt::tree_from_linear_path(empty, {}); }, {"no operands"});
}

}  // namespace

namespace {

// linear_path_of inverts tree_from_linear_path: the reference network's tree (from a tree JSON)
// goes to a linear path and back to the same pairs of operands, so the same costs; a unary step is
// a one-position entry; a tree using an operand twice is a path error.
TEST(formats_linear_path, linear_path_of_round_trips_the_reference_tree) {
  const tnrt::problem p = tnrt::load_file(tnrt::test::source_dir() + "/data/tensornetwork_permutation_optimized.json", {});
  const auto path = tnrt::linear_path_of(p.net, p.tree);
  ASSERT_EQ(path.size(), p.tree.steps.size());
  const auto back = tnrt::tree_from_linear_path(p.net, path);
  ASSERT_EQ(back.steps.size(), p.tree.steps.size());
  for (std::size_t k = 0; k < back.steps.size(); ++k) {
    const auto& a = p.tree.steps[k];
    const auto& b = back.steps[k];
    EXPECT_EQ(std::minmax(a.lhs, a.rhs), std::minmax(b.lhs, b.rhs)) << "step " << k;
  }
  EXPECT_DOUBLE_EQ(tnrt::cost_of(p.net, back).flops, tnrt::cost_of(p.net, p.tree).flops);
  EXPECT_EQ(tnrt::linear_path_of(p.net, back), path);

  const auto net = tnrt::parse_expression("ab,bc->", {{2, 3}, {3, 4}});
  const auto unary = tnrt::tree_from_linear_path(net, {{0, 1}, {0}});
  EXPECT_EQ(tnrt::linear_path_of(net, unary), (path_t{{0, 1}, {0}}));
  tnrt::contraction_tree twice = tnrt::tree_from_linear_path(net, {{0, 1}});
  twice.steps[0].rhs = 0;
  EXPECT_THROW((void)tnrt::linear_path_of(net, twice), tnrt::path_error);
}

TEST(formats_linear_path, path_json_is_a_list_or_an_object_with_path) {
  EXPECT_EQ(tnrt::load_linear_path_json("[[0, 1], [0, 1]]"), (path_t{{0, 1}, {0, 1}}));
  EXPECT_EQ(tnrt::load_linear_path_json(R"({"path": [[1, 2], [0, 1]], "model_ms": 1.5})"), (path_t{{1, 2}, {0, 1}}));
  EXPECT_EQ(tnrt::load_linear_path_json("[]"), path_t{});
  for (const char* bad : {"{}", "\"abc\"", "[[0, 1]", "[[0, \"x\"]]", "[[0, 1.5]]", "{\"path\": 3}"})
    EXPECT_THROW((void)tnrt::load_linear_path_json(bad, "p.json"), tnrt::parse_error) << bad;
  EXPECT_THROW((void)tnrt::load_linear_path_file("/nonexistent/p.json"), tnrt::io_error);
}

}  // namespace
