// network::validate and the small network helpers: every invariant of network.hpp, broken once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/network.hpp"

namespace {

using tnrt::test::expect_error;

using labels = std::vector<tnrt::label_t>;

// ab,bc,cd->ad with extents 2,3,4,5
tnrt::network chain() {
  tnrt::network net;
  net.inputs = {{0, 1}, {1, 2}, {2, 3}};
  net.output = {0, 3};
  net.extents = {2, 3, 4, 5};
  net.label_names = {"a", "b", "c", "d"};
  return net;
}

// ((0 1) 2): step 0 -> id 3 (a c), step 1 -> id 4 (a d)
tnrt::contraction_tree chain_tree() {
  tnrt::contraction_tree t;
  t.steps = {{0, 1, {0, 2}}, {3, 2, {0, 3}}};
  return t;
}

TEST(network, valid_trees_pass) {
  EXPECT_NO_THROW(tnrt::validate(chain(), chain_tree()));
  // the last step may list the output in any order as long as it equals net.output
  auto net = chain();
  net.output = {3, 0};
  auto t = chain_tree();
  t.steps[1].out = {3, 0};
  EXPECT_NO_THROW(tnrt::validate(net, t));
  // one input that already is the output: no steps
  tnrt::network one;
  one.inputs = {{0, 1}};
  one.output = {0, 1};
  one.extents = {2, 3};
  one.label_names = {"a", "b"};
  EXPECT_NO_THROW(tnrt::validate(one, {}));
  // a unary step, and a diagonal input
  one.inputs = {{0, 0}};
  one.output = {0};
  one.extents = {2};
  one.label_names = {"a"};
  tnrt::contraction_tree unary;
  unary.steps = {{0, -1, {0}}};
  EXPECT_NO_THROW(tnrt::validate(one, unary));
}

TEST(network, operand_used_twice) {
  auto t = chain_tree();
  t.steps[1] = {3, 0, {0, 3}};  // input 0 again
  expect_error<tnrt::path_error>([&] { tnrt::validate(chain(), t); }, {"step 1", "operand 0", "more than once"});
  t.steps[1] = {3, 3, {0, 3}};
  expect_error<tnrt::path_error>([&] { tnrt::validate(chain(), t); }, {"step 1", "operand 3"});
}

TEST(network, operand_not_defined_before_use) {
  auto t = chain_tree();
  t.steps[0] = {0, 4, {0, 2}};  // step 1's result, used by step 0
  expect_error<tnrt::path_error>([&] { tnrt::validate(chain(), t); }, {"step 0", "operand 4", "not defined before"});
  t.steps[0] = {-2, 1, {0, 2}};
  expect_error<tnrt::path_error>([&] { tnrt::validate(chain(), t); }, {"step 0", "operand -2"});
}

TEST(network, input_never_used) {
  tnrt::contraction_tree t;
  t.steps = {{0, 1, {0, 2}}};
  auto net = chain();
  net.output = {0, 2};
  expect_error<tnrt::path_error>([&] { tnrt::validate(net, t); }, {"input 2", "never used"});
}

TEST(network, intermediate_never_used) {
  auto net = chain();
  tnrt::contraction_tree t;
  t.steps = {{0, 1, {0, 2}}, {2, -1, {2}}, {3, 4, {0}}, {2, -1, {2}}};
  // step 3 reuses input 2: caught as a second use
  expect_error<tnrt::path_error>([&] { tnrt::validate(net, t); }, {"step 3", "operand 2"});
  t.steps = {{0, 1, {0, 2}}, {2, -1, {2, 3}}, {3, -1, {0}}};
  net.output = {0};
  expect_error<tnrt::path_error>([&] { tnrt::validate(net, t); }, {"result of step 1", "never used"});
}

TEST(network, output_label_repeats_or_comes_from_nowhere) {
  auto t = chain_tree();
  t.steps[0].out = {0, 0};
  expect_error<tnrt::shape_error>([&] { tnrt::validate(chain(), t); }, {"step 0", "'a'", "repeats"});
  t = chain_tree();
  t.steps[0].out = {0, 3};  // d is in neither ab nor bc
  expect_error<tnrt::shape_error>([&] { tnrt::validate(chain(), t); }, {"step 0", "'d'", "neither operand"});
}

TEST(network, result_differs_from_output) {
  auto t = chain_tree();
  t.steps[1].out = {3, 0};  // d a, but the output is a d
  expect_error<tnrt::shape_error>([&] { tnrt::validate(chain(), t); }, {"result has labels da", "output is ad"});
  tnrt::network one;
  one.inputs = {{0, 1}};
  one.output = {1, 0};
  one.extents = {2, 3};
  one.label_names = {"a", "b"};
  expect_error<tnrt::shape_error>([&] { tnrt::validate(one, {}); }, {"result has labels ab", "output is ba"});
}

TEST(network, non_positive_extent) {
  auto net = chain();
  net.extents[2] = 0;
  expect_error<tnrt::shape_error>([&] { tnrt::validate(net, chain_tree()); }, {"label 'c'", "extent 0"});
}

TEST(network, no_operands) {
  expect_error<tnrt::path_error>([] { tnrt::validate(tnrt::network{}, {}); }, {"no operands"});
}

TEST(network, inconsistent_model_is_internal) {
  auto net = chain();
  net.label_names.pop_back();
  expect_error<tnrt::internal_error>([&] { tnrt::validate(net, chain_tree()); }, {"label names"});
  net = chain();
  net.inputs[0] = {0, 9};
  expect_error<tnrt::internal_error>([&] { tnrt::validate(net, chain_tree()); }, {"input 0", "label id 9"});
}

TEST(network, helpers) {
  const auto net = chain();
  EXPECT_EQ(net.shape_of({0, 3}), (std::vector<std::int64_t>{2, 5}));
  EXPECT_EQ(net.describe({0, 3}), "ad");
  EXPECT_EQ(tnrt::operand_labels(net, chain_tree()), (std::vector<labels>{{0, 1}, {1, 2}, {2, 3}, {0, 2}, {0, 3}}));
  EXPECT_EQ(chain_tree().result_id(3), 4);
  EXPECT_EQ(tnrt::contraction_tree{}.result_id(1), 0);
  // integer label names print in brackets
  tnrt::network ints;
  ints.extents = {2, 2};
  ints.label_names = {"100", "187"};
  EXPECT_EQ(ints.describe({0, 1}), "[100 187]");
  // Unicode names print as letters
  tnrt::network greek;
  greek.extents = {2, 2};
  greek.label_names = {"α", "中"};
  EXPECT_EQ(greek.describe({1, 0}), "中α");
}

// The layouts' names (the CLI's --layout, Python's "layout" option) and back.
TEST(network, layout_names) {
  EXPECT_EQ(tnrt::name_of(tnrt::layout_policy::row_major), "row");
  EXPECT_EQ(tnrt::name_of(tnrt::layout_policy::column_major), "column");
  EXPECT_EQ(tnrt::name_of(tnrt::layout_policy::follow), "follow");
  EXPECT_EQ(tnrt::name_of(tnrt::layout_policy::planned), "planned");
  EXPECT_EQ(tnrt::layout_count, 4U);
  for (auto l : tnrt::all_layouts) EXPECT_EQ(tnrt::layout_named(tnrt::name_of(l)), l);
  EXPECT_FALSE(tnrt::layout_named("auto").has_value());
  EXPECT_FALSE(tnrt::layout_named("Row").has_value());
  EXPECT_FALSE(tnrt::layout_named("").has_value());
}

}  // namespace
