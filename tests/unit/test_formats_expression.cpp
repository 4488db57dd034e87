// Einsum expressions and shape lists: explicit and implicit outputs, scalars, diagonals, Unicode
// indices (every opt_einsum symbol), the ellipsis, and one clear error per mistake.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/naive_einsum.hpp"
#include "support/test_util.hpp"
#include "tnrt/cpu.hpp"
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

TEST(formats_expression, unicode_characters_are_indices) {
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

// opt_einsum's get_symbol(i), the Python formula: 'a'..'z', 'A'..'Z', then chr(i + 140) (3.4 jumps
// the surrogates from i = 55296 on: chr(i + 2048); 55156..55295 still give lone surrogates).
char32_t get_symbol(std::size_t i) {
  const std::string base = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  if (i < 52) return static_cast<char32_t>(base[i]);
  if (i >= 55296) return static_cast<char32_t>(i + 2048);
  return static_cast<char32_t>(i + 140);
}

TEST(formats_expression, every_opt_einsum_symbol_is_an_index) {
  // the ones past the letters: '×' (i = 75, the first the old letter rule refused), '÷', a space
  // and a BOM by category, an emoji, the last code point; and on both sides of the surrogates
  for (std::size_t i : {52u, 75u, 107u, 8052u, 12148u, 63231u, 126464u, 55155u, 55296u, 1112063u}) {
    const std::string c = utf8(get_symbol(i));
    const auto net = tnrt::parse_expression("a" + c + "," + c + "->a", {{2, 3}, {3}});
    EXPECT_EQ(net.label_names, (std::vector<std::string>{"a", c})) << "get_symbol(" << i << ")";
  }
  // get_symbol(55156) is U+D800: no UTF-8 encodes a surrogate (Python refuses to as well)
  EXPECT_EQ(get_symbol(55156), char32_t{0xD800});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("a\xED\xA0\x80", {{2, 3}}); }, {"invalid UTF-8"});
  // what stays refused: ASCII that is not a letter nor syntax
  for (const char* bad : {"a1", "a_", "a!", "a\x7F", "a\x01"})
    expect_error<tnrt::parse_error>([&] { tnrt::parse_expression(bad, {{2, 3}}); }, {"not an index", "ASCII letters or non-ASCII"});
}

TEST(formats_expression, three_hundred_opt_einsum_symbols_contract_on_the_cpu) {
  // a chain of 299 matrices over get_symbol(0..299): s0 s1, s1 s2, ..., -> s0 s299
  constexpr std::size_t n = 300;
  std::vector<std::string> sym;
  for (std::size_t i = 0; i < n; ++i) sym.push_back(utf8(get_symbol(i)));
  std::string expr;
  shapes_t shapes;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    expr += (i ? "," : "") + sym[i] + sym[i + 1];
    shapes.push_back({2 + static_cast<std::int64_t>(i % 2), 2 + static_cast<std::int64_t>((i + 1) % 2)});  // 2x3, 3x2, ...
  }
  expr += "->" + sym.front() + sym.back();
  tnrt::problem p;
  p.type = tnrt::dtype::f64;
  p.net = tnrt::parse_expression(expr, shapes);
  ASSERT_EQ(p.net.label_count(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(p.net.label_names[i], sym[i]) << "label " << i;

  // the names round-trip: the network printed back is the expression, and parses to the same network
  std::string printed;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) printed += (i ? "," : "") + p.net.describe(p.net.inputs[i]);
  printed += "->" + p.net.describe(p.net.output);
  EXPECT_EQ(printed, expr);
  const auto again = tnrt::parse_expression(printed, shapes);
  EXPECT_EQ(again.inputs, p.net.inputs);
  EXPECT_EQ(again.output, p.net.output);
  EXPECT_EQ(again.label_names, p.net.label_names);

  // contracted left to right; row-stochastic matrices keep the product's entries in [0, 1]
  std::vector<std::vector<int>> path(n - 2, std::vector<int>{0, 1});
  p.tree = tnrt::tree_from_linear_path(p.net, path);
  std::mt19937_64 rng(300);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  std::vector<tnrt::host_tensor> in;
  for (const auto& shape : shapes) {
    auto& t = in.emplace_back(tnrt::dtype::f64, shape);
    double* v = t.as<double>();
    for (std::int64_t r = 0; r < shape[0]; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < shape[1]; ++c) sum += v[r * shape[1] + c] = u(rng);
      for (std::int64_t c = 0; c < shape[1]; ++c) v[r * shape[1] + c] /= sum;
    }
  }
  std::vector<double> want(in[0].as<double>(), in[0].as<double>() + in[0].size());  // running product, rows x cols
  std::int64_t cols = shapes[0][1];
  for (std::size_t k = 1; k < in.size(); ++k) {
    const std::int64_t next = shapes[k][1];
    std::vector<double> prod(static_cast<std::size_t>(2 * next), 0.0);
    for (std::int64_t r = 0; r < 2; ++r)
      for (std::int64_t c = 0; c < next; ++c)
        for (std::int64_t j = 0; j < cols; ++j)
          prod[static_cast<std::size_t>(r * next + c)] += want[static_cast<std::size_t>(r * cols + j)] * in[k].as<double>()[j * next + c];
    want = std::move(prod);
    cols = next;
  }
  const tnrt::host_tensor got = tnrt::cpu::contract(p, in);
  ASSERT_EQ(got.shape(), (std::vector<std::int64_t>{2, 3}));
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.as<double>()[i], want[i], 1e-12) << "element " << i;
}

TEST(formats_expression, ellipsis_batch_matmul) {
  // "...ij,...jk->...ik" over a (5,2,3) and a (5,3,4): the ellipsis is one fresh label of extent 5
  const auto net = tnrt::parse_expression("...ij,...jk->...ik", {{5, 2, 3}, {5, 3, 4}});
  ASSERT_EQ(net.label_count(), 4u);
  EXPECT_EQ(net.inputs[0], (std::vector<tnrt::label_t>{0, 1, 2}));
  EXPECT_EQ(net.inputs[1], (std::vector<tnrt::label_t>{0, 2, 3}));
  EXPECT_EQ(net.output, (std::vector<tnrt::label_t>{0, 1, 3}));
  EXPECT_EQ(net.extents, (std::vector<std::int64_t>{5, 2, 3, 4}));
  // fresh names are get_symbol's first unused symbols, so the network prints as an expression
  EXPECT_EQ(names(net, net.inputs[0]), "aij");
  EXPECT_EQ(names(net, net.output), "aik");
  // the same text without an output: NumPy puts the ellipsis first, then the single indices sorted
  const auto implicit = tnrt::parse_expression("...ji,...kj", {{5, 3, 2}, {5, 4, 3}});
  EXPECT_EQ(names(implicit, implicit.output), "aik");
  const auto first = tnrt::parse_expression("ba...", {{2, 3, 4}});
  EXPECT_EQ(names(first, first.output), "cab");  // (4, 3, 2) as np.einsum("ba...", ones((2,3,4)))
}

TEST(formats_expression, ellipsis_ranks_align_on_the_right) {
  // (7,5,2,3) @ (5,3,4): the second operand's ellipsis covers only the last batch dimension
  const auto net = tnrt::parse_expression("...ij,...jk->...ik", {{7, 5, 2, 3}, {5, 3, 4}});
  EXPECT_EQ(names(net, net.inputs[0]), "abij");
  EXPECT_EQ(names(net, net.inputs[1]), "bjk");
  EXPECT_EQ(net.shape_of(net.output), (std::vector<std::int64_t>{7, 5, 2, 4}));
  // in the middle and alone; covering nothing; in the output only
  EXPECT_EQ(tnrt::parse_expression("i...->...", {{2, 3, 4}}).shape_of(tnrt::parse_expression("i...->...", {{2, 3, 4}}).output),
            (std::vector<std::int64_t>{3, 4}));
  const auto none = tnrt::parse_expression("...ij,...jk->...ik", {{2, 3}, {3, 4}});
  EXPECT_EQ(none.label_count(), 3u);
  EXPECT_EQ(names(none, none.output), "ik");
  EXPECT_EQ(tnrt::parse_expression("ij->...ji", {{2, 3}}).output.size(), 2u);
  // a fresh label never takes a name the text uses
  const auto taken = tnrt::parse_expression("a...b,b->...a", {{2, 3, 4}, {4}});
  EXPECT_EQ(names(taken, taken.inputs[0]), "acb");
}

TEST(formats_expression, ellipsis_broadcasts_extent_one) {
  // (5,1,2,3) against (7,3,4): position 0 is 5 (only the first has it), position 1 broadcasts 1
  // against 7: the first operand's 1 gets a label of its own, summed away, so the shapes stay
  const auto net = tnrt::parse_expression("...ij,...jk", {{5, 1, 2, 3}, {7, 3, 4}});
  EXPECT_EQ(net.shape_of(net.inputs[0]), (std::vector<std::int64_t>{5, 1, 2, 3}));
  EXPECT_EQ(net.shape_of(net.inputs[1]), (std::vector<std::int64_t>{7, 3, 4}));
  EXPECT_EQ(net.shape_of(net.output), (std::vector<std::int64_t>{5, 7, 2, 4}));
  EXPECT_NE(net.inputs[0][1], net.inputs[1][0]);
  // all 1: one shared label of extent 1 that the output keeps
  const auto ones = tnrt::parse_expression("...,...", {{1}, {1}});
  EXPECT_EQ(ones.label_count(), 1u);
  EXPECT_EQ(ones.shape_of(ones.output), (std::vector<std::int64_t>{1}));
}

// expression + shapes -> a problem on the built-in path, with random f64 operands
tnrt::problem ellipsis_problem(const std::string& expr, const shapes_t& shapes, std::vector<tnrt::host_tensor>& in) {
  tnrt::problem p;
  p.type = tnrt::dtype::f64;
  p.net = tnrt::parse_expression(expr, shapes);
  p.tree = tnrt::tree_from_linear_path(p.net, tnrt::optimize_path(p.net));
  in.clear();
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    in.emplace_back(tnrt::dtype::f64, shapes[i]);
    tnrt::fill_random(in.back(), 11, i, -1.0, 1.0);
  }
  return p;
}

TEST(formats_expression, ellipsis_contracts_as_numpy_broadcasts) {
  // C(a,b,i,k) = sum_j A(a,0,i,j) B(b,j,k): A's extent-1 dimension broadcasts against B's 7,
  // written out as loops, independent of how the parser names things
  std::vector<tnrt::host_tensor> in;
  const auto p = ellipsis_problem("...ij,...jk->...ik", {{5, 1, 2, 3}, {7, 3, 4}}, in);
  const tnrt::host_tensor got = tnrt::cpu::contract(p, in);
  ASSERT_EQ(got.shape(), (std::vector<std::int64_t>{5, 7, 2, 4}));
  const double* A = in[0].as<double>();
  const double* B = in[1].as<double>();
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 7; ++b)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k) {
          double want = 0;
          for (int j = 0; j < 3; ++j) want += A[(a * 2 + i) * 3 + j] * B[(b * 3 + j) * 4 + k];
          EXPECT_NEAR(got.as<double>()[((a * 7 + b) * 2 + i) * 4 + k], want, 1e-13);
        }
  // against the naive reference over the expanded network, a few more shapes of the rules
  // (output shapes as np.einsum gives them)
  struct ellipsis_case {
    std::string expr;
    shapes_t shapes;
    std::vector<std::int64_t> numpy_shape;
  };
  const std::vector<ellipsis_case> cases = {
      {"...ij,...jk->...ik", {{3, 2, 4}, {3, 4, 5}}, {3, 2, 5}},       // equal batch
      {"...ij,...jk", {{2, 3, 2, 4}, {4, 5}}, {2, 3, 2, 5}},          // differing ranks, implicit output
      {"i...->...", {{4, 2, 3}}, {2, 3}},                             // sum over the leading index
      {"...ii->...i", {{2, 3, 3}}, {2, 3}},                           // batched diagonal
      {"a...,...->...a", {{3, 1, 5}, {4, 1}}, {4, 5, 3}},             // each broadcasts the other's 1
      {"...,...b,b...->...", {{6}, {2, 1, 3}, {3, 2, 6}}, {2, 6}},    // three operands, two broadcast
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    const auto q = ellipsis_problem(c.expr, c.shapes, in);
    const tnrt::host_tensor g = tnrt::cpu::contract(q, in);
    const tnrt::host_tensor w = tnrt::test::naive_contract(q, in);
    EXPECT_EQ(g.shape(), c.numpy_shape);
    ASSERT_EQ(g.shape(), w.shape());
    EXPECT_LE(tnrt::test::relative_error(g, w), 1e-13);
  }
  const auto sum = ellipsis_problem("i...->...", {{4, 2, 3}}, in);
  const tnrt::host_tensor s = tnrt::cpu::contract(sum, in);
  for (int e = 0; e < 6; ++e) {
    double want = 0;
    for (int i = 0; i < 4; ++i) want += in[0].as<double>()[i * 6 + e];
    EXPECT_NEAR(s.as<double>()[e], want, 1e-14);
  }
}

TEST(formats_expression, ellipsis_errors) {
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("...i,...i->...", {{2, 3}, {3, 3}}); },
                                  {"'...' dimension 0", "extent 2 in operand 0", "3 in operand 1", "agree or be 1"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("...ij->ij", {{2, 3, 4}}); }, {"'...' covers 1 dimension", "no '...'"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("...ijk->...", {{2, 3}}); },
                                  {"operand 0", "'...ijk'", "3 indices besides '...'", "rank 2"});
  expect_error<tnrt::shape_error>([] { tnrt::parse_expression("...i->...", {{0, 3}}); }, {"'...' dimension has extent 0"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("...a...->a", {{2}}); }, {"second '...'"});
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("..a->a", {{2}}); }, {"'.'", "character 1"});
  // '...ij->ij' is fine when the ellipsis covers nothing
  EXPECT_NO_THROW(tnrt::parse_expression("...ij->ij", {{2, 3}}));
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
  expect_error<tnrt::parse_error>([] { tnrt::parse_expression("a+", {{2, 3}}); }, {"'+'", "U+002B"});
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
