// Einsum expressions and shape lists: explicit and implicit outputs, scalars, diagonals, Unicode
// indices, and one clear error per mistake.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace {

using tnrt::test::expect_error;

using shapes_t = std::vector<std::vector<std::int64_t>>;

// label ids -> their names joined, e.g. "ac"
std::string names(const tnrt::network& net, const std::vector<tnrt::label_t>& labels) {
  std::string s;
  for (auto l : labels) s += net.label_names.at(static_cast<std::size_t>(l));
  return s;
}

// UTF-8 of a code point (test-side, independent of the library's decoder)
std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

TEST(formats_expression, explicit_output) {
  const auto net = tnrt::parse_expression("ab,bc->ac", {{2, 3}, {3, 4}});
  ASSERT_EQ(net.inputs.size(), 2u);
  EXPECT_EQ(net.inputs[0], (std::vector<tnrt::label_t>{0, 1}));
  EXPECT_EQ(net.inputs[1], (std::vector<tnrt::label_t>{1, 2}));
  EXPECT_EQ(net.output, (std::vector<tnrt::label_t>{0, 2}));
  EXPECT_EQ(net.extents, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(net.label_names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(formats_expression, implicit_output_is_single_labels_in_code_point_order) {
  // b occurs twice; c and a once each -> "ac" (sorted), whatever their order of appearance
  const auto net = tnrt::parse_expression("cb,ba", {{4, 3}, {3, 2}});
  EXPECT_EQ(names(net, net.output), "ac");
  // upper case sorts before lower case, Greek after Latin, as NumPy does
  const auto greek = tnrt::parse_expression("βa,Bγ", {{2, 3}, {4, 5}});
  EXPECT_EQ(names(greek, greek.output), "Baβγ");
  // a trace in one operand is not a free index
  const auto trace = tnrt::parse_expression("ii", {{3, 3}});
  EXPECT_TRUE(trace.output.empty());
}

TEST(formats_expression, scalars) {
  const auto one = tnrt::parse_expression("->", {{}});
  ASSERT_EQ(one.inputs.size(), 1u);
  EXPECT_TRUE(one.inputs[0].empty());
  EXPECT_TRUE(one.output.empty());
  EXPECT_EQ(one.label_count(), 0u);

  const auto mixed = tnrt::parse_expression(",ab->", {{}, {2, 3}});
  ASSERT_EQ(mixed.inputs.size(), 2u);
  EXPECT_TRUE(mixed.inputs[0].empty());
  EXPECT_EQ(mixed.inputs[1].size(), 2u);
  EXPECT_TRUE(mixed.output.empty());

  const auto dot = tnrt::parse_expression("a,a->", {{5}, {5}});
  EXPECT_TRUE(dot.output.empty());
}

TEST(formats_expression, repeated_labels_in_one_operand) {
  const auto diag = tnrt::parse_expression("ii->i", {{3, 3}});
  EXPECT_EQ(diag.inputs[0], (std::vector<tnrt::label_t>{0, 0}));
  EXPECT_EQ(diag.output, (std::vector<tnrt::label_t>{0}));
  const auto trace = tnrt::parse_expression("ii->", {{3, 3}});
  EXPECT_TRUE(trace.output.empty());
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("ii->i", {{3, 4}}); }, {"'i'", "extent 3", "4"});
}

TEST(formats_expression, spaces_are_ignored) {
  const auto net = tnrt::parse_expression(" a b , b c -> a c ", {{2, 3}, {3, 4}});
  EXPECT_EQ(names(net, net.inputs[0]), "ab");
  EXPECT_EQ(names(net, net.output), "ac");
}

TEST(formats_expression, unicode_letters_are_indices) {
  const auto net = tnrt::parse_expression("αβ,β中->α中", {{2, 3}, {3, 4}});
  EXPECT_EQ(net.label_names, (std::vector<std::string>{"α", "β", "中"}));
  EXPECT_EQ(names(net, net.output), "α中");
  // astral plane letter (U+20000, a CJK Extension B ideograph) and a Hangul syllable
  const auto astral = tnrt::parse_expression(utf8(0x20000) + "한," + "한->" + utf8(0x20000), {{2, 3}, {3}});
  EXPECT_EQ(astral.label_names, (std::vector<std::string>{utf8(0x20000), "한"}));
}

TEST(formats_expression, more_than_200_distinct_unicode_labels) {
  // a chain over 150 CJK ideographs then 100 Greek/Coptic/Cyrillic letters: l0 l1, l1 l2, ...
  std::vector<std::string> letters;
  for (char32_t c = 0x4E00; letters.size() < 150; ++c) letters.push_back(utf8(c));
  for (char32_t c = 0x3B1; letters.size() < 175; ++c) letters.push_back(utf8(c));  // α..
  for (char32_t c = 0x410; letters.size() < 250; ++c) letters.push_back(utf8(c));  // А..
  std::string expr;
  shapes_t shapes;
  for (std::size_t i = 0; i + 1 < letters.size(); ++i) {
    if (i) expr += ",";
    expr += letters[i] + letters[i + 1];
    shapes.push_back({2, 2});
  }
  expr += "->" + letters.front() + letters.back();
  const auto net = tnrt::parse_expression(expr, shapes);
  ASSERT_EQ(net.label_count(), 250u);
  for (std::size_t i = 0; i < letters.size(); ++i) EXPECT_EQ(net.label_names[i], letters[i]);
  EXPECT_EQ(net.output, (std::vector<tnrt::label_t>{0, 249}));
  const auto tree = tnrt::tree_from_linear_path(net, tnrt::optimize_path(net, tnrt::path_optimizer::greedy));
  EXPECT_NO_THROW(tnrt::validate(net, tree));
  EXPECT_EQ(tree.steps.size(), 248u);
}

TEST(formats_expression, ellipsis_is_not_supported) {
  expect_error<tnrt::not_supported>([] { tnrt::parse_expression("...a,a->...", {{2}, {2}}); }, {"ellipsis", "'...'"});
}

TEST(formats_expression, invalid_utf8_is_a_parse_error) {
  const shapes_t two = {{2, 3}};
  expect_error<tnrt::parse_error>([&] { tnrt::parse_expression("a\xCE", two); }, {"invalid UTF-8", "byte 1"});        // truncated
  expect_error<tnrt::parse_error>([&] { tnrt::parse_expression("\xC0\xAF" "a", two); }, {"invalid UTF-8", "byte 0"});  // overlong '/'
  expect_error<tnrt::parse_error>([&] { tnrt::parse_expression("a\xED\xA0\x80", two); }, {"invalid UTF-8"});          // surrogate
  expect_error<tnrt::parse_error>([&] { tnrt::parse_expression("a\x80", two); }, {"invalid UTF-8"});                  // stray continuation
  expect_error<tnrt::parse_error>([&] { tnrt::parse_expression("a\xF4\x90\x80\x80", two); }, {"invalid UTF-8"});      // > U+10FFFF
}

TEST(formats_expression, syntax_errors) {
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab,b1->a", {{2, 3}, {3, 4}}); }, {"'1'", "U+0031", "character 5", "not an index"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab,bc->a->c", {{2, 3}, {3, 4}}); }, {"second '->'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab-bc", {{2, 3}, {3, 4}}); }, {"'-' not followed by '>'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab,bc->a,c", {{2, 3}, {3, 4}}); }, {"',' after '->'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab,bc->ad", {{2, 3}, {3, 4}}); }, {"output index 'd'", "no operand"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("ab,bc->aa", {{2, 3}, {3, 4}}); }, {"output index 'a'", "more than once"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("a.b", {{2, 3}}); }, {"'.'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("a😀", {{2, 3}}); }, {"U+1F600"});
}

TEST(formats_expression, shape_errors_name_the_operand_and_label) {
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("ab,bc->ac", {{2, 3}}); }, {"2 operands", "1 shape was given"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("ab,bc->ac", {{2, 3}, {3, 4, 5}}); },
                                  {"operand 1", "'bc'", "2 indices", "[3, 4, 5]", "rank 3"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("ab,bc->ac", {{2, 3}, {4, 5}}); },
                                  {"index 'b'", "extent 3 in operand 0", "4 in operand 1"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("ab->a", {{2, 0}}); }, {"'b'", "extent 0"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("αβ,βγ->αγ", {{2, 3}, {5, 4}}); }, {"index 'β'"});
}

TEST(formats_expression, parse_shapes) {
  EXPECT_EQ(tnrt::parse_shapes("2x3,3x4"), (shapes_t{{2, 3}, {3, 4}}));
  EXPECT_EQ(tnrt::parse_shapes("2x3,,4"), (shapes_t{{2, 3}, {}, {4}}));
  EXPECT_EQ(tnrt::parse_shapes("-,5"), (shapes_t{{}, {5}}));
  EXPECT_EQ(tnrt::parse_shapes(""), (shapes_t{{}}));
  EXPECT_EQ(tnrt::parse_shapes(" 2 x 3 , 7 "), (shapes_t{{2, 3}, {7}}));
  EXPECT_EQ(tnrt::parse_shapes("1000000000000"), (shapes_t{{1000000000000}}));
  expect_error<tnrt::parse_error>([] { tnrt::parse_shapes("2x,3"); }, {"shapes '2x,3'", "not an extent"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_shapes("2xa"); }, {"'a'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_shapes("2*3"); }, {"'2*3'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_shapes("99999999999999999999"); }, {"not an extent"});
}

}  // namespace
