// cpu::contract over whole trees against naive_contract: random networks with hyperedges, repeated
// labels, one-sided sums, size-1 modes and scalar results, in all four dtypes; input validation and
// the progress callback.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "support/naive_einsum.hpp"
#include "support/random_problem.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

const dtype all_types[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};

// A random network of 2..6 operands over up to 8 labels (extents 1..3) and a random binary tree.
problem random_problem(std::uint64_t seed, dtype type) { return test::random_problem(seed, type, 1, 3, 6); }
using test::random_inputs;

std::string describe(const problem& p) {
  std::string s;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) s += (i ? "," : "") + p.net.describe(p.net.inputs[i]);
  s += "->" + p.net.describe(p.net.output) + " steps:";
  for (const step& st : p.tree.steps) s += " (" + std::to_string(st.lhs) + "," + std::to_string(st.rhs) + ")->" + p.net.describe(st.out);
  return s;
}

TEST(cpu_contract, random_trees_match_the_naive_reference) {
  for (dtype t : all_types) {
    for (std::uint64_t c = 0; c < 150; ++c) {
      const std::uint64_t seed = 5000 + c;
      const problem p = random_problem(seed, t);
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(t)) + " " + describe(p));
      const auto in = random_inputs(p, seed);
      const host_tensor got = cpu::contract(p, in);
      const host_tensor want = test::naive_contract(p, in);
      ASSERT_EQ(got.shape(), want.shape());
      // positive data: no cancellation, so a plain relative norm with a length-scaled bound
      const double eps = is_double(t) ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
      std::int64_t k = 1;
      for (std::int64_t e : p.net.extents) k *= e;
      const double tol = 8.0 * eps * std::sqrt(static_cast<double>(k)) * static_cast<double>(p.tree.steps.size() + 1);
      ASSERT_LE(test::relative_error(got, want), tol);
    }
  }
}

TEST(cpu_contract, hyperedge_chain_in_several_steps) {
  // C(b) = sum_a A(a,b) B(a,b) C(a) D(a,b): label a in four operands, b kept throughout.
  problem p;
  p.net.extents = {37, 5};
  p.net.label_names = {"a", "b"};
  p.net.inputs = {{0, 1}, {0, 1}, {0}, {1, 0}};
  p.net.output = {1};
  p.tree.steps = {{0, 1, {0, 1}}, {4, 2, {1, 0}}, {5, 3, {1}}};
  for (dtype t : all_types) {
    p.type = t;
    const auto in = random_inputs(p, 7);
    EXPECT_LE(test::relative_error(cpu::contract(p, in), test::naive_contract(p, in)), is_double(t) ? 1e-13 : 1e-5) << name_of(t);
  }
}

TEST(cpu_contract, single_operand_networks) {
  problem p;
  p.net.extents = {3, 4};
  p.net.label_names = {"a", "b"};
  p.net.inputs = {{0, 1}};
  p.net.output = {0, 1};
  p.type = dtype::f64;
  const auto in = random_inputs(p, 3);
  const host_tensor r = cpu::contract(p, in);
  EXPECT_EQ(test::relative_error(r, in[0]), 0.0);
  // a trace as one unary step
  p.net.extents = {3};
  p.net.label_names = {"a"};
  p.net.inputs = {{0, 0}};
  p.net.output = {};
  p.tree.steps = {{0, -1, {}}};
  const auto in2 = random_inputs(p, 4);
  EXPECT_LE(test::relative_error(cpu::contract(p, in2), test::naive_contract(p, in2)), 1e-14);
}

TEST(cpu_contract, progress_reports_every_step) {
  const problem p = random_problem(77, dtype::f32);
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  cpu::contract(p, random_inputs(p, 1), [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); });
  ASSERT_EQ(calls.size(), p.tree.steps.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, i + 1);
    EXPECT_EQ(calls[i].second, p.tree.steps.size());
  }
}

TEST(cpu_contract, rejects_mismatched_inputs_naming_the_operand) {
  problem p;
  p.net.extents = {2, 3};
  p.net.label_names = {"a", "b"};
  p.net.inputs = {{0, 1}, {1}};
  p.net.output = {0};
  p.tree.steps = {{0, 1, {0}}};
  p.type = dtype::f32;
  auto in = random_inputs(p, 1);
  EXPECT_NO_THROW(cpu::contract(p, in));
  EXPECT_THROW(cpu::contract(p, std::span<const host_tensor>(in.data(), 1)), shape_error);
  std::vector<host_tensor> wrong_type;
  wrong_type.emplace_back(dtype::f64, std::vector<std::int64_t>{2, 3});
  wrong_type.emplace_back(dtype::f32, std::vector<std::int64_t>{3});
  fill_constant(wrong_type[0], 1.0);
  fill_constant(wrong_type[1], 1.0);
  try {
    cpu::contract(p, wrong_type);
    ADD_FAILURE() << "no dtype_error";
  } catch (const dtype_error& e) {
    EXPECT_NE(std::string(e.what()).find("input 0"), std::string::npos) << e.what();
  }
  std::vector<host_tensor> wrong_shape;
  wrong_shape.emplace_back(dtype::f32, std::vector<std::int64_t>{2, 3});
  wrong_shape.emplace_back(dtype::f32, std::vector<std::int64_t>{4});
  fill_constant(wrong_shape[0], 1.0);
  fill_constant(wrong_shape[1], 1.0);
  try {
    cpu::contract(p, wrong_shape);
    ADD_FAILURE() << "no shape_error";
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tnrt
