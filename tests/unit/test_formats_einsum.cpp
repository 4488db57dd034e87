// Einsum JSON: path selection, dtype, Unicode indices, and one error per mistake.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"  // GCC 12 false positive on string concatenation (bug 105329)
#endif

namespace {

using tnrt::test::source_dir;
using tnrt::test::expect_error;

using labels = std::vector<tnrt::label_t>;

tnrt::problem load(const std::string& text, const tnrt::einsum_json_options& opt = {}) {
  return tnrt::load_einsum_json(text, opt, "e.json");
}

std::string chain(const std::string& path_part) {
  return R"({"format_string": "ab,bc,cd->ad", "shapes": [[2, 3], [3, 4], [4, 5]])" + path_part + "}";
}

TEST(formats_einsum, file_with_named_paths) {
  REQUIRE_SOURCE_DIR();
  const std::string file = source_dir() + "/tests/data/einsum_small.json";
  const auto p = tnrt::load_einsum_json_file(file, {});
  EXPECT_EQ(p.source, file);
  EXPECT_EQ(p.type, tnrt::dtype::f64);
  ASSERT_EQ(p.tree.steps.size(), 2u);
  // default: opt_size = [[0,1],[0,1]] -> (ab bc) then with cd
  EXPECT_EQ(p.tree.steps[0].lhs, 0);
  EXPECT_EQ(p.tree.steps[0].rhs, 1);
  EXPECT_EQ(p.tree.steps[0].out, (labels{0, 2}));

  tnrt::einsum_json_options opt;
  opt.path_name = "opt_flops";  // [[1,2],[0,1]] -> (bc cd) first
  opt.type = tnrt::dtype::c64;
  const auto q = tnrt::load_einsum_json_file(file, opt);
  EXPECT_EQ(q.type, tnrt::dtype::c64);
  EXPECT_EQ(q.tree.steps[0].lhs, 1);
  EXPECT_EQ(q.tree.steps[0].rhs, 2);
  EXPECT_EQ(q.tree.steps[0].out, (labels{1, 3}));
  EXPECT_EQ(q.tree.steps[1].out, (labels{0, 3}));
}

TEST(formats_einsum, path_preference_order) {
  // "path" beats "paths"; opt_size beats opt_flops; bare lists in "paths" are accepted
  const auto both = load(chain(R"(, "path": [[1, 2], [0, 1]], "paths": {"opt_size": {"path": [[0, 1], [0, 1]]}})"));
  EXPECT_EQ(both.tree.steps[0].lhs, 1);
  const auto flops_only = load(chain(R"(, "paths": {"opt_flops": [[1, 2], [0, 1]]})"));
  EXPECT_EQ(flops_only.tree.steps[0].lhs, 1);
  tnrt::einsum_json_options opt;
  opt.path_name = "path";
  EXPECT_EQ(load(chain(R"(, "path": [[1, 2], [0, 1]])"), opt).tree.steps[0].lhs, 1);
}

TEST(formats_einsum, single_element_entries_are_unary_steps) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_einsum_json_file(source_dir() + "/tests/data/einsum_unicode.json", {});
  EXPECT_EQ(p.type, tnrt::dtype::c64);
  EXPECT_EQ(p.net.label_names, (std::vector<std::string>{"α", "β", "γ", "中"}));
  ASSERT_EQ(p.tree.steps.size(), 3u);
  EXPECT_EQ(p.tree.steps[1].rhs, -1);
  // a bare integer is a one-element entry too
  const auto q = load(chain(R"(, "path": [2, [0, 1], [0, 1]])"));
  EXPECT_EQ(q.tree.steps.size(), 3u);
  EXPECT_EQ(q.tree.steps[0].lhs, 2);
  EXPECT_EQ(q.tree.steps[0].rhs, -1);
}

TEST(formats_einsum, no_path_uses_the_optimizer) {
  REQUIRE_SOURCE_DIR();
  const auto p = tnrt::load_einsum_json_file(source_dir() + "/tests/data/einsum_nopath.json", {});
  EXPECT_EQ(p.tree.steps.size(), 4u);
  EXPECT_EQ(p.net.output.size(), 2u);  // implicit: i and n
  EXPECT_NO_THROW(tnrt::validate(p.net, p.tree));
  const auto q = load(chain(R"(, "path": null)"));
  EXPECT_EQ(q.tree.steps.size(), 2u);
}

TEST(formats_einsum, dtype_defaults_to_f32) {
  EXPECT_EQ(load(chain("")).type, tnrt::dtype::f32);
  EXPECT_EQ(load(chain(R"(, "dtype": "complex128")")).type, tnrt::dtype::c128);
}

TEST(formats_einsum, load_file_passes_options) {
  REQUIRE_SOURCE_DIR();
  tnrt::load_options opt;
  opt.einsum.path_name = "opt_flops";
  const auto p = tnrt::load_file(source_dir() + "/tests/data/einsum_small.json", opt);
  EXPECT_EQ(p.tree.steps[0].lhs, 1);
  expect_error<tnrt::parse_error>([] { tnrt::load_einsum_json("{}", {}); }, {"einsum JSON", "missing \"format_string\""});
}

// ---- errors ----------------------------------------------------------------------------------

TEST(formats_einsum, malformed_json) {
  expect_error<tnrt::parse_error>([] { load("{\"format_string\": \"ab->a\",\n \"shapes\": [[2, 3]\n}"); }, {"e.json", "malformed JSON", "line 3"});
  expect_error<tnrt::parse_error>([] { load("{\"format_string\": \"a\xFF\", \"shapes\": [[2]]}"); }, {"e.json", "malformed JSON", "UTF-8"});
}

TEST(formats_einsum, wrong_json_types) {
  expect_error<tnrt::parse_error>([] { load(R"({"format_string": 5, "shapes": []})"); }, {"format_string", "expected a string"});
  expect_error<tnrt::parse_error>([] { load(R"({"format_string": "a", "shapes": [[2.5]]})"); }, {"shapes[0][0]", "non-integer"});
  expect_error<tnrt::parse_error>([] { load(R"({"format_string": "a", "shapes": {"a": 1}})"); }, {"shapes", "expected an array"});
  expect_error<tnrt::parse_error>([] { load(chain(R"(, "path": [[0, "1"]])")); }, {"path[0][1]", "expected an integer"});
  expect_error<tnrt::parse_error>([] { load(chain(R"(, "paths": [1])")); }, {"paths", "named paths"});
  expect_error<tnrt::parse_error>([] { load(chain(R"(, "paths": {"opt_size": {"cost": 1}})")); }, {"paths.opt_size", "missing \"path\""});
  expect_error<tnrt::parse_error>([] { load(chain(R"(, "dtype": 32)")); }, {"dtype", "expected a string"});
}

TEST(formats_einsum, expression_errors_name_the_file) {
  expect_error<tnrt::parse_error>([] { load(R"({"format_string": "ab,b1->a", "shapes": [[2, 3], [3, 4]]})"); },
                                  {"e.json: format_string", "'1'"});
  expect_error<tnrt::shape_error>([] { load(R"({"format_string": "...a,...a->...", "shapes": [[2, 2], [3, 2]]})"); },
                                  {"e.json: format_string", "'...' dimension 0", "agree or be 1"});
}

TEST(formats_einsum, ellipsis_takes_its_dimensions_from_the_shapes) {
  const auto p = load(R"({"format_string": "...ab,...bc->...ac", "shapes": [[4, 2, 3], [1, 3, 5]], "path": [[0, 1]]})");
  EXPECT_EQ(p.net.shape_of(p.net.output), (std::vector<std::int64_t>{4, 2, 5}));
  EXPECT_EQ(p.net.shape_of(p.net.inputs[1]), (std::vector<std::int64_t>{1, 3, 5}));
}

TEST(formats_einsum, rank_mismatch_is_a_shape_error) {
  expect_error<tnrt::shape_error>([] { load(R"({"format_string": "ab,bc->ac", "shapes": [[2, 3], [3, 4, 5]]})"); },
                                  {"e.json", "operand 1", "rank 3"});
  expect_error<tnrt::shape_error>([] { load(R"({"format_string": "ab,bc->ac", "shapes": [[2, 3]]})"); }, {"2 operands", "1 shape"});
}

TEST(formats_einsum, label_with_two_extents_is_a_shape_error) {
  expect_error<tnrt::shape_error>([] { load(R"({"format_string": "ab,bc->ac", "shapes": [[2, 3], [4, 5]]})"); },
                                  {"e.json", "index 'b'", "extent 3 in operand 0", "4 in operand 1"});
  expect_error<tnrt::shape_error>([] { load(R"({"format_string": "αβ,βγ->αγ", "shapes": [[2, 3], [4, 5]]})"); }, {"index 'β'"});
}

TEST(formats_einsum, unknown_dtype) {
  expect_error<tnrt::dtype_error>([] { load(chain(R"(, "dtype": "float16")")); }, {"e.json", "float16"});
  // an override does not look at the file's dtype
  tnrt::einsum_json_options opt;
  opt.type = tnrt::dtype::f64;
  EXPECT_EQ(load(chain(R"(, "dtype": "float16")"), opt).type, tnrt::dtype::f64);
}

TEST(formats_einsum, path_index_out_of_range) {
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, 3], [0, 1]])")); },
                                 {"e.json: path: path[0] = (0, 3)", "position 3 is out of range", "3 operands remain"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, 1], [0, 2]])")); }, {"path[1]", "position 2", "2 operands remain"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, -1], [0, 1]])")); }, {"position -1"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, 99999999999], [0, 1]])")); }, {"99999999999", "out of range"});
  tnrt::einsum_json_options opt;
  opt.path_name = "opt_flops";
  expect_error<tnrt::path_error>([&] { load(chain(R"(, "paths": {"opt_flops": {"path": [[5, 1], [0, 1]]}})"), opt); },
                                 {"paths.opt_flops.path", "position 5"});
}

TEST(formats_einsum, path_not_ending_in_one_operand) {
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, 1]])")); }, {"e.json", "ends with 2 operands"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [])")); }, {"ends with 3 operands"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[0, 0], [0, 1]])")); }, {"names position 0 twice"});
  expect_error<tnrt::path_error>([] { load(chain(R"(, "path": [[], [0, 1]])")); }, {"names no operand"});
}

TEST(formats_einsum, missing_named_path) {
  tnrt::einsum_json_options opt;
  opt.path_name = "opt_flops";
  expect_error<tnrt::path_error>([&] { load(chain(R"(, "paths": {"opt_size": {"path": [[0, 1], [0, 1]]}})"), opt); },
                                 {"e.json", "no path named 'opt_flops'", "it has: opt_size"});
  expect_error<tnrt::path_error>([&] { load(chain(""), opt); }, {"it has none"});
}

TEST(formats_einsum, unreadable_file) {
  expect_error<tnrt::io_error>([] { tnrt::load_einsum_json_file("/nonexistent/e.json", {}); }, {"/nonexistent/e.json", "cannot open"});
}

}  // namespace
