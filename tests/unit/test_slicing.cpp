// Slicing (include/tnrt/slicing.hpp): contract_sliced against the unsliced cpu::contract on random
// networks in all four dtypes, with sliced labels inside and outside the output, on diagonals,
// hyperedges and one-operand networks; plan_slices' limit, monotonicity and given labels; typed
// errors for bad labels, bad inputs and limits nothing fits in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <cstring>
#include <string>
#include <utility>

#include "support/naive_einsum.hpp"
#include "support/random_problem.hpp"
#include "support/test_util.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/memory_plan.hpp"
#include "tnrt/path.hpp"
#include "tnrt/slicing.hpp"

namespace tnrt {
namespace {

using test::random_inputs;
using test::random_problem;

const dtype all_types[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};

std::vector<label_t> input_labels(const problem& p) {
  std::vector<label_t> ls;
  for (const auto& in : p.net.inputs) ls.insert(ls.end(), in.begin(), in.end());
  std::sort(ls.begin(), ls.end());
  ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
  return ls;
}

bool in_output(const problem& p, label_t l) {
  return std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end();
}

// Positive data, so no cancellation: a relative norm with a bound scaled by precision, the length
// of the sums and the number of steps (both results are rounded, in different orders).
double tolerance(const problem& p) {
  const double eps = is_double(p.type) ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  double k = 1;
  for (std::int64_t e : p.net.extents) k *= static_cast<double>(e);
  return 16.0 * eps * std::sqrt(k) * static_cast<double>(p.tree.steps.size() + 1);
}

void expect_sliced_equals_unsliced(const problem& p, std::span<const label_t> labels, std::uint64_t seed) {
  const auto in = random_inputs(p, seed);
  const host_tensor want = cpu::contract(p, in);
  const host_tensor got = cpu::contract_sliced(p, in, labels);
  ASSERT_EQ(got.type(), want.type());
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_LE(test::relative_error(got, want), tolerance(p));
  EXPECT_GT(test::max_abs(want), 0.0);  // never compare all-zero results
}

TEST(slicing, random_networks_sliced_equal_unsliced_in_every_dtype) {
  int with_output_label = 0, with_summed_label = 0, with_both = 0;
  for (dtype t : all_types) {
    for (std::uint64_t c = 0; c < 80; ++c) {
      const std::uint64_t seed = 9100 + c;
      const problem p = random_problem(seed, t);
      std::vector<label_t> candidates = input_labels(p);
      if (candidates.empty()) continue;
      std::mt19937_64 rng(seed ^ 0x5eed);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      const std::size_t k = 1 + static_cast<std::size_t>(rng() % std::min<std::size_t>(3, candidates.size()));
      const std::vector<label_t> labels(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k));
      const bool out = std::any_of(labels.begin(), labels.end(), [&](label_t l) { return in_output(p, l); });
      const bool summed = std::any_of(labels.begin(), labels.end(), [&](label_t l) { return !in_output(p, l); });
      with_output_label += out;
      with_summed_label += summed;
      with_both += out && summed;
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(t)) + " sliced " +
                   p.net.describe(labels));
      expect_sliced_equals_unsliced(p, labels, seed);
    }
  }
  // the random draw covers every accumulation case
  EXPECT_GT(with_output_label, 20);
  EXPECT_GT(with_summed_label, 20);
  EXPECT_GT(with_both, 5);
}

// C(a,c) = A(a,b) B(b,c)
problem matmul(std::int64_t a, std::int64_t b, std::int64_t c, dtype t) { return test::matmul_problem(a, b, c, t); }

TEST(slicing, matmul_sliced_over_the_sum_the_output_and_both) {
  for (dtype t : all_types) {
    const problem p = matmul(5, 7, 3, t);
    SCOPED_TRACE(std::string(name_of(t)));
    for (const std::vector<label_t>& labels : {std::vector<label_t>{1}, {0}, {2}, {0, 2}, {1, 0}, {2, 1, 0}}) {
      SCOPED_TRACE("sliced " + p.net.describe(labels));
      expect_sliced_equals_unsliced(p, labels, 11);
    }
  }
}

TEST(slicing, diagonals_hyperedges_and_one_operand_networks) {
  // s = sum_a A(a,a) B(a): a repeated in one operand and shared with another
  problem trace;
  trace.source = "trace";
  trace.net.extents = {6};
  trace.net.label_names = {"a"};
  trace.net.inputs = {{0, 0}, {0}};
  trace.tree.steps = {{0, 1, {}}};
  // D(b) = sum_a A(a,b) B(a,b) C(a) D(a,b): a in four operands
  problem hyper;
  hyper.source = "hyperedge";
  hyper.net.extents = {9, 5};
  hyper.net.label_names = {"a", "b"};
  hyper.net.inputs = {{0, 1}, {0, 1}, {0}, {1, 0}};
  hyper.net.output = {1};
  hyper.tree.steps = {{0, 1, {0, 1}}, {4, 2, {1, 0}}, {5, 3, {1}}};
  // B(a,b) = A(a,b): no steps
  problem copy;
  copy.source = "copy";
  copy.net.extents = {3, 4};
  copy.net.label_names = {"a", "b"};
  copy.net.inputs = {{0, 1}};
  copy.net.output = {0, 1};
  for (dtype t : all_types) {
    SCOPED_TRACE(std::string(name_of(t)));
    trace.type = hyper.type = copy.type = t;
    expect_sliced_equals_unsliced(trace, std::vector<label_t>{0}, 3);
    for (const std::vector<label_t>& labels : {std::vector<label_t>{0}, {1}, {1, 0}}) {
      expect_sliced_equals_unsliced(hyper, labels, 5);
      expect_sliced_equals_unsliced(copy, labels, 6);
    }
  }
}

TEST(slicing, block_writes_are_exact) {
  // Slicing only output labels sums nothing: each element comes from exactly one slice.
  const problem p = matmul(4, 6, 5, dtype::f64);
  const auto in = random_inputs(p, 21);
  const std::vector<label_t> labels = {2, 0};
  EXPECT_EQ(test::relative_error(cpu::contract_sliced(p, in, labels), cpu::contract(p, in)), 0.0);
}

TEST(slicing, slice_problem_sets_extents_to_one_and_keeps_the_rest) {
  const problem p = matmul(5, 7, 3, dtype::c64);
  const std::vector<label_t> labels = {1, 2};
  const problem q = slice_problem(p, labels);
  EXPECT_EQ(q.net.extents, (std::vector<std::int64_t>{5, 1, 1}));
  EXPECT_EQ(q.net.inputs, p.net.inputs);
  EXPECT_EQ(q.net.output, p.net.output);
  EXPECT_EQ(q.net.label_names, p.net.label_names);
  EXPECT_EQ(q.tree.steps.size(), p.tree.steps.size());
  EXPECT_EQ(q.type, p.type);
  EXPECT_NE(q.source.find("one slice over {b,c}"), std::string::npos) << q.source;
}

TEST(slicing, progress_reports_every_slice) {
  const problem p = matmul(2, 3, 4, dtype::f32);
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  const std::vector<label_t> labels = {1, 2};
  cpu::contract_sliced(p, random_inputs(p, 1), labels,
                       [&](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); });
  ASSERT_EQ(calls.size(), 12u);
  for (std::size_t i = 0; i < calls.size(); ++i)
    EXPECT_EQ(calls[i], (std::pair<std::int64_t, std::int64_t>(static_cast<std::int64_t>(i) + 1, 12)));
}

TEST(slicing, plan_under_a_limit_fits_and_is_monotone) {
  int planned = 0;
  for (std::uint64_t c = 0; c < 40; ++c) {
    const std::uint64_t seed = 700 + c;
    const problem p = random_problem(seed, c % 2 ? dtype::c128 : dtype::f32, 2, 9, 7);
    SCOPED_TRACE("seed " + std::to_string(seed));
    const slice_plan whole = plan_slices(p, std::numeric_limits<std::size_t>::max());
    EXPECT_TRUE(whole.labels.empty());
    EXPECT_EQ(whole.slices, 1);
    EXPECT_EQ(whole.peak_bytes_sliced, whole.peak_bytes_unsliced);
    EXPECT_EQ(whole.peak_bytes_unsliced, slice_peak_bytes(p));
    EXPECT_EQ(whole.flops_sliced, whole.flops_unsliced);
    EXPECT_EQ(whole.flops_unsliced, cost_of(p.net, p.tree).flops);

    std::vector<label_t> previous;
    std::int64_t previous_slices = 1;
    for (std::size_t limit = whole.peak_bytes_unsliced; limit > 0; limit = limit * 3 / 4) {
      slice_plan plan;
      try {
        plan = plan_slices(p, limit);
      } catch (const out_of_memory&) {
        // every smaller limit fails too: the peak of slicing everything is the floor
        EXPECT_THROW(plan_slices(p, limit / 2), out_of_memory);
        break;
      }
      ++planned;
      const problem q = slice_problem(p, plan.labels);
      EXPECT_EQ(plan.peak_bytes_sliced, slice_peak_bytes(q));
      EXPECT_LE(plan.peak_bytes_sliced, limit);
      std::int64_t slices = 1;
      for (label_t l : plan.labels) slices *= p.net.extents[static_cast<std::size_t>(l)];
      EXPECT_EQ(plan.slices, slices);
      EXPECT_DOUBLE_EQ(plan.flops_sliced, static_cast<double>(slices) * cost_of(q.net, q.tree).flops);
      EXPECT_GE(plan.flops_sliced, plan.flops_unsliced * (1 - 1e-12));
      // a smaller limit extends the labels of a larger one
      EXPECT_GE(plan.slices, previous_slices);
      ASSERT_GE(plan.labels.size(), previous.size());
      EXPECT_TRUE(std::equal(previous.begin(), previous.end(), plan.labels.begin()));
      previous = plan.labels;
      previous_slices = plan.slices;
    }
    if (!previous.empty()) expect_sliced_equals_unsliced(p, previous, seed);
  }
  EXPECT_GT(planned, 100);
}

// T(a,c) = A(a,b) B(b,c), R(a,d) = T(a,c) C(c,d) with a wide summed label b: cutting b shrinks the
// large inputs most but repeats the second step 512 times; cutting a and then c shrinks them enough
// for half the memory and costs no flops (each is in every step), so the greedy takes those.
TEST(slicing, greedy_prefers_cuts_that_cost_no_flops) {
  problem p;
  p.type = dtype::f64;
  p.source = "chain";
  p.net.extents = {4, 512, 4, 4};
  p.net.label_names = {"a", "b", "c", "d"};
  p.net.inputs = {{0, 1}, {1, 2}, {2, 3}};
  p.net.output = {0, 3};
  p.tree.steps = {{0, 1, {0, 2}}, {3, 2, {0, 3}}};
  const slice_plan whole = plan_slices(p, std::numeric_limits<std::size_t>::max());
  const slice_plan plan = plan_slices(p, whole.peak_bytes_unsliced / 2);
  EXPECT_EQ(plan.labels, (std::vector<label_t>{0, 2}));
  EXPECT_EQ(plan.slices, 16);
  EXPECT_DOUBLE_EQ(plan.flops_sliced, plan.flops_unsliced);
  EXPECT_LE(plan.peak_bytes_sliced, whole.peak_bytes_unsliced / 2);
  expect_sliced_equals_unsliced(p, plan.labels, 4);
  // a limit the free cuts cannot reach takes b, at a flop overhead
  const slice_plan tight = plan_slices(p, 2048);
  EXPECT_NE(std::find(tight.labels.begin(), tight.labels.end(), 1), tight.labels.end());
  EXPECT_GT(tight.flops_sliced, tight.flops_unsliced);
  EXPECT_LE(tight.peak_bytes_sliced, 2048u);
  expect_sliced_equals_unsliced(p, tight.labels, 4);
}

TEST(slicing, given_labels_are_the_plan) {
  const problem p = matmul(16, 64, 32, dtype::f32);
  const std::vector<label_t> given = {2, 1};
  const slice_plan plan = plan_slices(p, std::numeric_limits<std::size_t>::max(), given);
  EXPECT_EQ(plan.labels, given);
  EXPECT_EQ(plan.slices, 64 * 32);
  const problem q = slice_problem(p, given);
  EXPECT_EQ(plan.peak_bytes_sliced, slice_peak_bytes(q));
  EXPECT_LT(plan.peak_bytes_sliced, plan.peak_bytes_unsliced);
  EXPECT_DOUBLE_EQ(plan.flops_sliced, 64.0 * 32.0 * 16.0);
  EXPECT_DOUBLE_EQ(plan.flops_unsliced, 16.0 * 64.0 * 32.0);
  // given labels that do not fit are not extended
  test::expect_error<out_of_memory>([&] { plan_slices(p, plan.peak_bytes_sliced - 1, given); },
                                    {"given labels", "{c,b}", "limit"});
  EXPECT_NO_THROW(plan_slices(p, plan.peak_bytes_sliced, given));
}

TEST(slicing, invalid_labels_are_shape_errors) {
  problem p = matmul(3, 4, 5, dtype::f64);
  p.net.extents.push_back(2);  // label d, in no operand
  p.net.label_names.push_back("d");
  const auto in = random_inputs(p, 2);
  const std::vector<std::vector<label_t>> bad = {{-1}, {4}, {1, 1}, {3}};
  const std::vector<std::string> why = {"label id -1", "label id 4", "sliced twice", "occurs in no input"};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(why[i]);
    test::expect_error<shape_error>([&] { slice_problem(p, bad[i]); }, {why[i]});
    test::expect_error<shape_error>([&] { plan_slices(p, std::numeric_limits<std::size_t>::max(), bad[i]); }, {why[i]});
    test::expect_error<shape_error>([&] { cpu::contract_sliced(p, in, bad[i]); }, {why[i]});
  }
}

TEST(slicing, mismatched_inputs_are_typed_errors) {
  const problem p = matmul(3, 4, 5, dtype::f32);
  const std::vector<label_t> labels = {1};
  auto in = random_inputs(p, 1);
  test::expect_error<shape_error>([&] { cpu::contract_sliced(p, std::span<const host_tensor>(in.data(), 1), labels); },
                                  {"2 inputs"});
  std::vector<host_tensor> wrong;
  wrong.emplace_back(dtype::f32, std::vector<std::int64_t>{3, 4});
  wrong.emplace_back(dtype::f64, std::vector<std::int64_t>{4, 5});
  test::expect_error<dtype_error>([&] { cpu::contract_sliced(p, wrong, labels); }, {"input 1"});
  wrong[1] = host_tensor(dtype::f32, std::vector<std::int64_t>{5, 4});
  test::expect_error<shape_error>([&] { cpu::contract_sliced(p, wrong, labels); }, {"input 1", "(5,4)"});
}

TEST(slicing, a_limit_nothing_fits_in_is_out_of_memory) {
  const problem p = matmul(8, 8, 8, dtype::c128);
  const std::vector<label_t> all = {0, 1, 2};
  const std::size_t floor = slice_peak_bytes(slice_problem(p, all));
  const slice_plan plan = plan_slices(p, floor);  // exactly the floor fits
  EXPECT_LE(plan.peak_bytes_sliced, floor);
  EXPECT_LT(floor, plan.peak_bytes_unsliced);
  test::expect_error<out_of_memory>([&] { plan_slices(p, floor - 1); },
                                    {"matmul", "every label sliced", std::to_string(floor - 1) + " bytes"});
  test::expect_error<out_of_memory>([&] { plan_slices(p, 0); }, {"every label sliced"});
}

}  // namespace
}  // namespace tnrt

namespace tnrt {
namespace {

// Scatters a row-major tensor into a buffer of the given strides (padding elsewhere).
std::vector<unsigned char> scatter_to(const host_tensor& t, const std::vector<std::int64_t>& strides, std::size_t span_elems) {
  const std::size_t elem = size_of(t.type());
  std::vector<unsigned char> buf(span_elems * elem, 0x7f);
  const std::vector<std::int64_t>& shape = t.shape();
  std::vector<std::int64_t> idx(shape.size(), 0);
  const auto* src = static_cast<const unsigned char*>(t.data());
  for (std::int64_t e = 0; e < element_count(t.shape()); ++e) {
    std::int64_t off = 0;
    for (std::size_t m = 0; m < shape.size(); ++m) off += idx[m] * strides[m];
    std::memcpy(buf.data() + static_cast<std::size_t>(off) * elem, src + static_cast<std::size_t>(e) * elem, elem);
    for (std::size_t m = shape.size(); m-- > 0;) {
      if (++idx[m] < shape[m]) break;
      idx[m] = 0;
    }
  }
  return buf;
}

std::vector<unsigned char> scatter_to(const host_tensor& t, const std::vector<std::int64_t>& strides, std::size_t span_elems);

host_tensor gather_from(const std::vector<unsigned char>& buf, const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& shape, dtype t) {
  host_tensor r(t, shape);
  const std::size_t elem = size_of(t);
  std::vector<std::int64_t> idx(shape.size(), 0);
  auto* dst = static_cast<unsigned char*>(r.data());
  for (std::int64_t e = 0; e < element_count(r.shape()); ++e) {
    std::int64_t off = 0;
    for (std::size_t m = 0; m < shape.size(); ++m) off += idx[m] * strides[m];
    std::memcpy(dst + static_cast<std::size_t>(e) * elem, buf.data() + static_cast<std::size_t>(off) * elem, elem);
    for (std::size_t m = shape.size(); m-- > 0;) {
      if (++idx[m] < shape[m]) break;
      idx[m] = 0;
    }
  }
  return r;
}

// Random strides for a shape: the modes in a random order, each padded by 0-2 elements. Returns the
// strides and the span in elements.
std::pair<std::vector<std::int64_t>, std::size_t> random_strides(const std::vector<std::int64_t>& shape, std::mt19937_64& rng) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t m = 0; m < order.size(); ++m) order[m] = m;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> strides(shape.size(), 0);
  std::int64_t span = 1;
  for (std::size_t m : order) {
    strides[m] = span;
    span = span * shape[m] + static_cast<std::int64_t>(rng() % 3);
  }
  return {strides, static_cast<std::size_t>(span)};
}

// The device kernels' plan, run on the host: every slice's inputs gathered by layout_slices' moves
// from strided buffers, the one-slice problem contracted, its result added into a strided result by
// the output move. It must equal the unsliced contraction.
TEST(slice_layout, moves_assemble_the_unsliced_result_from_strided_buffers) {
  int cases = 0, merged = 0;
  for (dtype t : all_types) {
    for (std::uint64_t c = 0; c < 40; ++c) {
      const std::uint64_t seed = 9700 + c;
      const problem p = random_problem(seed, t);
      std::vector<label_t> candidates = input_labels(p);
      if (candidates.empty()) continue;
      std::mt19937_64 rng(seed ^ 0xabc);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      const std::size_t k = 1 + static_cast<std::size_t>(rng() % std::min<std::size_t>(3, candidates.size()));
      const std::vector<label_t> labels(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k));
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(t)) + " sliced " + p.net.describe(labels));
      const auto in = random_inputs(p, seed);
      const bool strided = c % 2 == 1;
      std::vector<std::vector<std::int64_t>> in_strides;
      std::vector<std::vector<unsigned char>> bufs;
      for (const host_tensor& h : in) {
        if (strided) {
          auto [st, span] = random_strides(h.shape(), rng);
          bufs.push_back(scatter_to(h, st, span));
          in_strides.push_back(st);
        } else {
          bufs.emplace_back(static_cast<const unsigned char*>(h.data()), static_cast<const unsigned char*>(h.data()) + h.bytes());
          in_strides.emplace_back();
        }
      }
      const std::vector<std::int64_t> out_shape = p.net.shape_of(p.net.output);
      const auto [out_st, out_span] = strided ? random_strides(out_shape, rng) : std::make_pair(row_major_strides(out_shape), static_cast<std::size_t>(element_count(out_shape)));
      const slice_layout l = layout_slices(p, labels, in_strides, strided ? std::span<const std::int64_t>(out_st) : std::span<const std::int64_t>());
      for (const slice_move& m : l.input_moves) merged += m.extents.size() < 2 ? 1 : 0;
      const problem q = slice_problem(p, labels);
      std::vector<host_tensor> slice_in;
      for (std::size_t i = 0; i < in.size(); ++i) slice_in.emplace_back(p.type, q.net.shape_of(p.net.inputs[i]));
      std::vector<unsigned char> out(out_span * size_of(t), 0x7f);
      apply_slice_move(l, l.output_zero, 0, nullptr, out.data(), t, false);  // zero the result's elements (not the padding)
      for (std::int64_t s = 0; s < l.slices; ++s) {
        for (std::size_t i = 0; i < in.size(); ++i) apply_slice_move(l, l.input_moves[i], s, bufs[i].data(), slice_in[i].data(), t, false);
        const host_tensor part = cpu::contract(q, slice_in);
        apply_slice_move(l, l.output_move, s, part.data(), out.data(), t, true);
      }
      const host_tensor got = gather_from(out, out_st, out_shape, t);
      EXPECT_LE(test::relative_error(got, cpu::contract(p, in)), tolerance(p));
      ++cases;
    }
  }
  EXPECT_GT(cases, 100);
  EXPECT_GT(merged, 10);  // row-major sub-tensors coalesce
}

}  // namespace
}  // namespace tnrt
