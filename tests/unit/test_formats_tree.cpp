// TensorNetworkBenchmarks tree JSON: the reference file, folding of wide nodes, label handling and
// one test per error class.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

// GCC 12 reports -Wrestrict inside libstdc++ for "literal" + std::string chains at -O3 (GCC bug
// 105329, a false positive); this file builds many JSON texts that way.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace {

using tnrt::test::source_dir;
using tnrt::test::expect_error;

using labels = std::vector<tnrt::label_t>;

tnrt::problem load(const std::string& text, const tnrt::tree_json_options& opt = {}) {
  return tnrt::load_tree_json(text, opt, "t.json");
}

// A two-leaf tree around `tree`, with inputs [1 2] and [2 3].
std::string two_inputs(const std::string& output, const std::string& tree) {
  return R"({"inputs": [[1, 2], [2, 3]], "output": )" + output + R"(, "tree": )" + tree + "}";
}

const std::string leaf1 = R"({"isleaf": true, "tensorindex": 1})";
const std::string leaf2 = R"({"isleaf": true, "tensorindex": 2})";

TEST(formats_tree, reference_network) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_tree_json_file(source_dir() + "/data/tensornetwork_permutation_optimized.json", {});
  EXPECT_EQ(p.net.inputs.size(), 550u);
  EXPECT_EQ(p.net.label_count(), 220u);
  EXPECT_EQ(p.tree.steps.size(), 549u);
  EXPECT_TRUE(p.net.output.empty());
  EXPECT_EQ(p.type, tnrt::dtype::f32);
  // dense ids in first-appearance order; the names are the file's integers
  EXPECT_EQ(p.net.inputs[0], (labels{0, 1}));
  EXPECT_EQ(p.net.label_names[0], "1");
  EXPECT_EQ(p.net.label_names[1], "48");
  for (auto e : p.net.extents) EXPECT_EQ(e, 2);
  EXPECT_NO_THROW(tnrt::validate(p.net, p.tree));
  // every step is binary and its out is the node's iy: the root sums everything
  for (const auto& s : p.tree.steps) EXPECT_GE(s.rhs, 0);
  EXPECT_TRUE(p.tree.steps.back().out.empty());
}

TEST(formats_tree, bond_dim_and_label_sizes) {
  REQUIRE_SOURCE_DIR();
  tnrt::tree_json_options opt;
  opt.bond_dim = 3;
  opt.label_sizes = {{"48", 5}};
  opt.type = tnrt::dtype::c128;
  const auto p = tnrt::load_tree_json_file(source_dir() + "/data/tensornetwork_permutation_optimized.json", opt);
  EXPECT_EQ(p.net.extents[0], 3);
  EXPECT_EQ(p.net.extents[1], 5);
  EXPECT_EQ(p.type, tnrt::dtype::c128);
  EXPECT_EQ(p.source, source_dir() + "/data/tensornetwork_permutation_optimized.json");
}

TEST(formats_tree, wide_node_folds_left_to_right) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_tree_json_file(source_dir() + "/tests/data/tree_small.json", {});
  // labels 1..5 -> ids 0..4; inputs 0:[1 2] 1:[2 3] 2:[3 4] 3:[4 1 5]
  ASSERT_EQ(p.tree.steps.size(), 3u);
  EXPECT_EQ(p.tree.steps[0].lhs, 0);
  EXPECT_EQ(p.tree.steps[0].rhs, 1);
  EXPECT_EQ(p.tree.steps[0].out, (labels{0, 2}));  // the inner node's iy [1 3]
  EXPECT_EQ(p.tree.steps[1].lhs, 4);
  EXPECT_EQ(p.tree.steps[1].rhs, 2);
  EXPECT_EQ(p.tree.steps[1].out, (labels{0, 3}));  // keeps 1 and 4 for [4 1 5]; 3 is summed
  EXPECT_EQ(p.tree.steps[2].lhs, 5);
  EXPECT_EQ(p.tree.steps[2].rhs, 3);
  EXPECT_EQ(p.tree.steps[2].out, (labels{4}));
  EXPECT_NO_THROW(tnrt::validate(p.net, p.tree));
}

TEST(formats_tree, string_labels_and_a_root_in_another_order) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_tree_json_file(source_dir() + "/tests/data/tree_strings.json", {});
  EXPECT_EQ(p.net.label_names, (std::vector<std::string>{"i", "j", "k"}));
  // the root's iy is [k i]; the step produces the output [i k] directly instead
  ASSERT_EQ(p.tree.steps.size(), 1u);
  EXPECT_EQ(p.tree.steps[0].out, (labels{0, 2}));
  EXPECT_NO_THROW(tnrt::validate(p.net, p.tree));
}

TEST(formats_tree, single_leaf_tree_gets_a_unary_step) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_tree_json_file(source_dir() + "/tests/data/tree_single_leaf.json", {});
  ASSERT_EQ(p.tree.steps.size(), 1u);
  EXPECT_EQ(p.tree.steps[0].lhs, 0);
  EXPECT_EQ(p.tree.steps[0].rhs, -1);
  EXPECT_EQ(p.tree.steps[0].out, (labels{1}));
  // labels already equal to the output: no step at all
  const auto same = load(R"({"inputs": [[7, 8]], "output": [7, 8], "tree": {"isleaf": true, "tensorindex": 1}})");
  EXPECT_TRUE(same.tree.steps.empty());
  EXPECT_NO_THROW(tnrt::validate(same.net, same.tree));
}

TEST(formats_tree, one_arg_node_is_a_unary_step_and_root_superset_is_summed) {
  const auto p = load(two_inputs("[1]", R"({"isleaf": false, "eins": {"ixs": [[1, 3]], "iy": [1]}, "args": [
      {"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [1, 3]}, "args": [)" + leaf1 + "," + leaf2 + "]}]}"));
  ASSERT_EQ(p.tree.steps.size(), 2u);
  EXPECT_EQ(p.tree.steps[1].rhs, -1);
  EXPECT_EQ(p.tree.steps[1].out, (labels{0}));
  // the root keeps [1 3] but the output is [1]: one more unary step sums 3
  const auto q = load(two_inputs("[1]", R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [1, 3]}, "args": [)" + leaf1 + "," + leaf2 + "]}"));
  ASSERT_EQ(q.tree.steps.size(), 2u);
  EXPECT_EQ(q.tree.steps[1].lhs, 2);
  EXPECT_EQ(q.tree.steps[1].out, (labels{0}));
}

TEST(formats_tree, ixs_may_list_a_childs_labels_in_another_order) {
  const auto p = load(two_inputs("[1, 3]", R"({"isleaf": false, "eins": {"ixs": [[2, 1], [2, 3]], "iy": [1, 3]}, "args": [)" + leaf1 + "," + leaf2 + "]}"));
  EXPECT_EQ(p.tree.steps.size(), 1u);
}

TEST(formats_tree, isleaf_may_be_omitted) {
  const auto p = load(two_inputs("[1, 3]", R"({"eins": {"ixs": [[1, 2], [2, 3]], "iy": [1, 3]}, "args": [{"tensorindex": 1}, {"tensorindex": 2}]})"));
  EXPECT_EQ(p.tree.steps.size(), 1u);
}

TEST(formats_tree, deep_caterpillar_tree_does_not_recurse) {
  // ((((t1 t2) t3) t4) ...) over a chain of 20000 matrices: as deep as it is long
  const int n = 20000;
  std::string inputs = "[";
  for (int i = 1; i <= n; ++i) inputs += (i > 1 ? "," : "") + std::string("[") + std::to_string(i) + "," + std::to_string(i + 1) + "]";
  inputs += "]";
  // nodes nest as prefix(n) .. prefix(2) leaf1 suffix(2) .. suffix(n): built in linear time
  std::string tree;
  for (int i = n; i >= 2; --i)
    tree += R"({"isleaf": false, "eins": {"ixs": [[1,)" + std::to_string(i) + "],[" + std::to_string(i) + "," + std::to_string(i + 1) +
            R"(]], "iy": [1,)" + std::to_string(i + 1) + R"(]}, "args": [)";
  tree += R"({"isleaf": true, "tensorindex": 1})";
  for (int i = 2; i <= n; ++i) tree += R"(, {"isleaf": true, "tensorindex": )" + std::to_string(i) + "}]}";
  const auto p = load(R"({"inputs": )" + inputs + R"(, "output": [1, )" + std::to_string(n + 1) + R"(], "tree": )" + tree + "}");
  EXPECT_EQ(p.tree.steps.size(), static_cast<std::size_t>(n - 1));
}

// ---- errors ----------------------------------------------------------------------------------

TEST(formats_tree, malformed_json_names_line_and_column) {
  expect_error<tnrt::parse_error>([] { load("{\n  \"inputs\": [[1, 2],\n  \"output\": []\n}"); },
                                  {"t.json", "malformed JSON", "line 3", "column"});
  expect_error<tnrt::parse_error>([] { load(""); }, {"t.json", "malformed JSON"});
}

TEST(formats_tree, wrong_json_types_name_the_location) {
  expect_error<tnrt::parse_error>([] { load(R"({"inputs": [[1, true]], "output": [], "tree": {}})"); },
                                  {"t.json", "inputs[0][1]", "integer or a string", "boolean"});
  expect_error<tnrt::parse_error>([] { load(R"({"inputs": [[1]], "output": []})"); }, {"missing \"tree\""});
  expect_error<tnrt::parse_error>([] { load(R"({"inputs": 5, "output": [], "tree": {}})"); }, {"inputs", "expected an array"});
  expect_error<tnrt::parse_error>([] { load(two_inputs("[]", R"({"isleaf": true, "tensorindex": "1"})")); }, {"tree.tensorindex", "expected an integer"});
  expect_error<tnrt::parse_error>([] { load(two_inputs("[]", R"({"isleaf": false, "args": [{"isleaf": 1}]})")); }, {"tree.args[0].isleaf"});
  expect_error<tnrt::parse_error>([] { load("[1, 2]"); }, {"expected a JSON object"});
}

TEST(formats_tree, leaf_used_twice_is_a_path_error) {
  expect_error<tnrt::path_error>(
      [] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1, 2], [1, 2]], "iy": []}, "args": [)" + leaf1 + "," + leaf1 + "]}")); },
      {"t.json", "tree.args[1]", "input 1", "used twice", "also at tree.args[0]"});
}

TEST(formats_tree, leaf_never_used_is_a_path_error) {
  expect_error<tnrt::path_error>([] { load(two_inputs("[1, 2]", leaf1)); }, {"t.json", "input 2", "never used"});
}

TEST(formats_tree, tensorindex_out_of_range_is_a_path_error) {
  expect_error<tnrt::path_error>([] { load(two_inputs("[]", R"({"isleaf": true, "tensorindex": 3})")); }, {"tensorindex 3", "out of range", "2 inputs"});
  expect_error<tnrt::path_error>([] { load(two_inputs("[]", R"({"isleaf": true, "tensorindex": 0})")); }, {"tensorindex 0", "numbered from 1"});
}

TEST(formats_tree, ixs_disagreeing_with_children_names_the_node) {
  const std::string inner = R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [1, 3]}, "args": [)" + leaf1 + "," + leaf2 + "]}";
  const std::string bad_inner = R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 9]], "iy": [1, 3]}, "args": [)" + leaf1 + "," + leaf2 + "]}";
  expect_error<tnrt::path_error>(
      [&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1, 3]], "iy": []}, "args": [)" + bad_inner + "]}")); },
      {"tree.args[0]: eins.ixs[1] is [2 9]", "args[1] has labels [2 3]"});
  expect_error<tnrt::path_error>(
      [&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1]], "iy": []}, "args": [)" + inner + "]}")); },
      {"tree: eins.ixs[0] is [1]", "[1 3]"});
  expect_error<tnrt::path_error>(
      [&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1, 2]], "iy": []}, "args": [)" + leaf1 + "," + leaf2 + "]}")); },
      {"eins.ixs has 1 entries but the node has 2 args"});
  expect_error<tnrt::path_error>(
      [&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [4]}, "args": [)" + leaf1 + "," + leaf2 + "]}")); },
      {"eins.iy label '4'", "none of the node's args"});
  expect_error<tnrt::path_error>(
      [&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [1, 1]}, "args": [)" + leaf1 + "," + leaf2 + "]}")); },
      {"eins.iy repeats label '1'"});
  expect_error<tnrt::path_error>([&] { load(two_inputs("[]", R"({"isleaf": false, "eins": {"ixs": [], "iy": []}, "args": []})")); },
                                 {"no args"});
}

TEST(formats_tree, output_errors_are_shape_errors) {
  expect_error<tnrt::shape_error>([] { load(two_inputs("[9]", leaf1)); }, {"output label '9'", "no input"});
  expect_error<tnrt::shape_error>([] { load(two_inputs("[1, 1]", leaf1)); }, {"output label '1'", "more than once"});
  // the root sums label 3, which the output wants
  expect_error<tnrt::shape_error>(
      [] { load(two_inputs("[1, 3]", R"({"isleaf": false, "eins": {"ixs": [[1, 2], [2, 3]], "iy": [1]}, "args": [)" + leaf1 + "," + leaf2 + "]}")); },
      {"root produces [1]", "needs label '3'"});
}

TEST(formats_tree, non_positive_extent_is_a_shape_error) {
  tnrt::tree_json_options opt;
  opt.bond_dim = 0;
  expect_error<tnrt::shape_error>([&] { load(two_inputs("[]", leaf1), opt); }, {"label '1'", "extent 0"});
  opt.bond_dim = 2;
  opt.label_sizes = {{"3", -1}};
  expect_error<tnrt::shape_error>([&] { load(two_inputs("[]", leaf1), opt); }, {"label '3'", "extent -1"});
}

TEST(formats_tree, empty_inputs_is_a_path_error) {
  expect_error<tnrt::path_error>([] { load(R"({"inputs": [], "output": [], "tree": {"isleaf": true, "tensorindex": 1}})"); }, {"no tensors"});
}

TEST(formats_tree, slices_name_labels_to_slice) {
  const tnrt::problem p = load(R"({"slices": [2], "inputs": [[1, 2]], "output": [1, 2], "tree": {"isleaf": true, "tensorindex": 1}})");
  ASSERT_EQ(p.slices.size(), 1U);
  EXPECT_EQ(p.net.label_names[static_cast<std::size_t>(p.slices[0])], "2");
  EXPECT_TRUE(load(R"({"slices": null, "inputs": [[1, 2]], "output": [1, 2], "tree": {"isleaf": true, "tensorindex": 1}})").slices.empty());
  expect_error<tnrt::shape_error>(
      [] { load(R"({"slices": [7], "inputs": [[1, 2]], "output": [1, 2], "tree": {"isleaf": true, "tensorindex": 1}})"); }, {"no label '7'"});
  expect_error<tnrt::shape_error>(
      [] { load(R"({"slices": [2, 2], "inputs": [[1, 2]], "output": [1, 2], "tree": {"isleaf": true, "tensorindex": 1}})"); }, {"twice"});
  expect_error<tnrt::parse_error>(
      [] { load(R"({"slices": [[2]], "inputs": [[1, 2]], "output": [1, 2], "tree": {"isleaf": true, "tensorindex": 1}})"); }, {"slices[0]"});
}

TEST(formats_tree, deep_node_names_are_shortened) {
  // a leaf used twice 30 levels down: the message names the depth instead of 30 ".args[i]"
  const int n = 31;
  std::string inputs = "[";
  for (int i = 1; i <= n; ++i) inputs += (i > 1 ? "," : "") + std::string("[") + std::to_string(i) + "]";
  inputs += "]";
  std::string tree = R"({"isleaf": true, "tensorindex": 1})";
  for (int i = 2; i <= n; ++i) {
    const int leaf = i == n ? 1 : i;  // the last leaf repeats input 1
    tree = R"({"isleaf": false, "eins": {"ixs": [)" + std::string(i == 2 ? "[1]" : "[]") + ", [" + std::to_string(leaf) + R"(]], "iy": []}, "args": [)" + tree +
           R"(, {"isleaf": true, "tensorindex": )" + std::to_string(leaf) + "}]}";
  }
  expect_error<tnrt::path_error>([&] { load(R"({"inputs": )" + inputs + R"(, "output": [], "tree": )" + tree + "}"); }, {"used twice", "(depth 30)"});
}

TEST(formats_tree, load_file_dispatches_on_content) {
  REQUIRE_SOURCE_DIR();
  const auto tree = tnrt::load_file(source_dir() + "/tests/data/tree_small.json", {});
  EXPECT_EQ(tree.tree.steps.size(), 3u);
  const auto einsum = tnrt::load_file(source_dir() + "/tests/data/einsum_small.json", {});
  EXPECT_EQ(einsum.net.inputs.size(), 3u);
  expect_error<tnrt::io_error>([] { tnrt::load_file("/nonexistent/dir/x.json", {}); }, {"/nonexistent/dir/x.json", "cannot open", "No such file"});
  expect_error<tnrt::io_error>([] { tnrt::load_tree_json_file("/nonexistent/y.json", {}); }, {"/nonexistent/y.json"});
  expect_error<tnrt::io_error>([] { tnrt::load_file(source_dir() + "/tests/data", {}); }, {"cannot read", "tests/data"});
}

}  // namespace
