// The library API on the CPU reference engine (a context with options::device = cpu_device), and
// what a GPU context says where there is none: host-tensor and view overloads, strided views in
// and out, a result handed to the caller, a program run many times, and every bad view a typed
// error that names it.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "support/naive_einsum.hpp"
#include "tnrt/context.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace {

problem matmul(dtype t) {
  problem p;
  p.net = parse_expression("ab,bc->ac", {{2, 3}, {3, 4}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}});
  p.type = t;
  p.source = "ab,bc->ac";
  return p;
}

host_tensor iota_tensor(dtype t, std::vector<std::int64_t> shape, double start) {
  host_tensor h(t, std::move(shape));
  visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t i = 0; i < h.size(); ++i) h.as<T>()[i] = T(static_cast<float>(start + static_cast<double>(i)));
  });
  return h;
}

options on_cpu() {
  options o;
  o.device = cpu_device;
  return o;
}

TEST(ApiCpu, HostTensorsMatchTheEngine) {
  context ctx(on_cpu());
  EXPECT_TRUE(ctx.on_cpu());
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    const problem p = matmul(t);
    std::vector<host_tensor> in;
    in.push_back(iota_tensor(t, {2, 3}, 1));
    in.push_back(iota_tensor(t, {3, 4}, -2));
    const host_tensor got = ctx.contract(p, in);
    const host_tensor want = cpu::contract(p, in);
    ASSERT_EQ(got.shape(), want.shape());
    visit_dtype(t, [&](auto zero) {
      using T = decltype(zero);
      for (std::int64_t i = 0; i < got.size(); ++i) EXPECT_EQ(got.as<T>()[i], want.as<T>()[i]);
    });
  }
  EXPECT_EQ(ctx.stats().api.eager_calls, 4U);
}

TEST(ApiCpu, StridedViewsInAndOut) {
  context ctx(on_cpu());
  const problem p = matmul(dtype::f64);
  const host_tensor a = iota_tensor(dtype::f64, {2, 3}, 1), b = iota_tensor(dtype::f64, {3, 4}, 0.5);
  std::vector<host_tensor> dense;
  dense.push_back(iota_tensor(dtype::f64, {2, 3}, 1));
  dense.push_back(iota_tensor(dtype::f64, {3, 4}, 0.5));
  const host_tensor want = cpu::contract(p, dense);
  // a column-major copy of a, b padded (row stride 6), the output column-major with padding.
  std::vector<double> acol(6), bpad(18, -1e300), cpad(12, 7.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) acol[static_cast<std::size_t>(i + 2 * j)] = a.as<double>()[i * 3 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) bpad[static_cast<std::size_t>(i * 6 + j)] = b.as<double>()[i * 4 + j];
  const std::int64_t sa[] = {2, 3}, sb[] = {3, 4}, sc[] = {2, 4};
  const std::int64_t st_a[] = {1, 2}, st_b[] = {6, 1}, st_c[] = {1, 3};
  const tensor_view va{acol.data(), dtype::f64, sa, st_a, cpu_device};
  const tensor_view vb{bpad.data(), dtype::f64, sb, st_b, cpu_device};
  const tensor_view vc{cpad.data(), dtype::f64, sc, st_c, cpu_device};
  const std::vector<tensor_view> in = {va, vb};
  ctx.contract(p, in, vc, nullptr);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(cpad[static_cast<std::size_t>(i + 3 * k)], want.as<double>()[i * 4 + k]);
  EXPECT_DOUBLE_EQ(cpad[2], 7.0) << "the output's padding was written";
  // The same through a result handed to the caller, and through a program run twice.
  const device_tensor r = ctx.contract(p, in, nullptr);
  const host_tensor rh = r.to_host();
  for (std::int64_t i = 0; i < rh.size(); ++i) EXPECT_DOUBLE_EQ(rh.as<double>()[i], want.as<double>()[i]);
  program prog = ctx.compile(p);
  std::fill(cpad.begin(), cpad.end(), 0.0);
  prog.run(in, vc, nullptr);
  prog.run(in, vc, nullptr);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(cpad[static_cast<std::size_t>(i + 3 * k)], want.as<double>()[i * 4 + k]);
  EXPECT_EQ(prog.cost().flops, 2.0 * 2 * 3 * 4);
  EXPECT_EQ(ctx.stats().api.program_runs, 2U);
}

TEST(ApiCpu, BadViewsAreTypedErrors) {
  context ctx(on_cpu());
  const problem p = matmul(dtype::f32);
  std::vector<float> a(6, 1), b(12, 1), c(8, 0);
  const std::int64_t sa[] = {2, 3}, sb[] = {3, 4}, sc[] = {2, 4}, wrong[] = {4, 3}, neg[] = {-1, 2}, overlap[] = {1, 1};
  const std::vector<tensor_view> good = {{a.data(), dtype::f32, sa, {}, cpu_device}, {b.data(), dtype::f32, sb, {}, cpu_device}};
  const tensor_view out{c.data(), dtype::f32, sc, {}, cpu_device};
  ctx.contract(p, good, out, nullptr);
  EXPECT_FLOAT_EQ(c[0], 3.0F);
  auto with = [&](auto change) {
    std::vector<tensor_view> v = good;
    change(v);
    return v;
  };
  EXPECT_THROW(ctx.contract(p, with([](auto& v) { v[0].type = dtype::f64; }), out, nullptr), dtype_error);
  EXPECT_THROW(ctx.contract(p, with([&](auto& v) { v[1].shape = wrong; }), out, nullptr), shape_error);
  EXPECT_THROW(ctx.contract(p, with([&](auto& v) { v[0].strides = neg; }), out, nullptr), not_supported);
  EXPECT_THROW(ctx.contract(p, with([](auto& v) { v[1].device = 0; }), out, nullptr), device_error);
  EXPECT_THROW(ctx.contract(p, with([](auto& v) { v.pop_back(); }), out, nullptr), shape_error);
  EXPECT_THROW(ctx.contract(p, with([](auto& v) { v[0].data = nullptr; }), out, nullptr), shape_error);
  const tensor_view self_overlap{c.data(), dtype::f32, sc, overlap, cpu_device};
  EXPECT_THROW(ctx.contract(p, good, self_overlap, nullptr), not_supported);
  const tensor_view alias{a.data(), dtype::f32, sc, {}, cpu_device};
  EXPECT_THROW(ctx.contract(p, good, alias, nullptr), not_supported);
  try {
    ctx.contract(p, with([&](auto& v) { v[1].shape = wrong; }), out, nullptr);
  } catch (const shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
  }
  std::vector<host_tensor> wrong_type;
  wrong_type.emplace_back(dtype::f64, std::vector<std::int64_t>{2, 3});
  wrong_type.emplace_back(dtype::f64, std::vector<std::int64_t>{3, 4});
  EXPECT_THROW((void)ctx.contract(p, wrong_type), dtype_error);
  EXPECT_THROW(check_host_inputs(p, wrong_type), dtype_error);
  EXPECT_THROW(check_host_inputs(p, std::span<const host_tensor>(wrong_type).first(1)), shape_error);
  program empty;
  EXPECT_THROW(empty.run(good, out, nullptr), usage_error);
}

TEST(ApiCpu, GpuContextWithoutGpuSaysWhy) {
  if (unavailable_reason(0).empty()) GTEST_SKIP() << "a GPU is usable here";
  try {
    context ctx;  // device 0
    FAIL() << "a GPU context was made without a usable GPU";
  } catch (const device_error& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
  options bad;
  bad.device = -7;
  EXPECT_THROW(context{bad}, usage_error);
}

}  // namespace
}  // namespace tnrt

namespace tnrt {
namespace {

// A chain big enough to need slicing under a small limit: abcd,de,ef->abf style.
problem chain(dtype t) {
  problem p;
  p.net = parse_expression("ab,bc,cd,de->ae", {{16, 32}, {32, 32}, {32, 32}, {32, 16}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}, {0, 1}});
  p.type = t;
  p.source = "chain";
  return p;
}

TEST(ApiCpu, SlicedUnderALimitEqualsUnsliced) {
  context ctx(on_cpu());
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    const problem p = chain(t);
    std::vector<host_tensor> in;
    for (std::size_t i = 0; i < p.net.inputs.size(); ++i) {
      in.emplace_back(t, p.net.shape_of(p.net.inputs[i]));
      fill_random(in.back(), 40, i, 0.5, 1.5);
    }
    const host_tensor want = ctx.contract(p, in);
    slice_request req;
    req.memory_limit_bytes = slice_peak_bytes(p) / 3;
    const slice_report r = ctx.plan_sliced(p, req);
    EXPECT_GT(r.plan.slices, 1);
    EXPECT_LE(r.predicted_bytes, req.memory_limit_bytes);
    EXPECT_FALSE(r.predicted_exactly);
    EXPECT_GE(r.cost.flops, r.cost_unsliced.flops * 0.999);
    sliced_program sp = ctx.compile_sliced(p, req);
    std::vector<std::int64_t> seen;
    const host_tensor got = sp.run(in, [&](std::int64_t done, std::int64_t) { seen.push_back(done); });
    EXPECT_LE(test::relative_error(got, want), is_double(t) ? 1e-12 : 1e-5);
    EXPECT_EQ(seen.back(), sp.slices());
    // Two halves give the whole.
    const std::int64_t half = sp.slices() / 2;
    host_tensor a = sp.run(in, {}, 0, half), b = sp.run(in, {}, half, -1);
    visit_dtype(t, [&](auto zero) {
      using T = decltype(zero);
      for (std::int64_t i = 0; i < a.size(); ++i) a.as<T>()[i] += b.as<T>()[i];
    });
    EXPECT_LE(test::relative_error(a, want), is_double(t) ? 1e-12 : 1e-5);
    // Device-view overload on host views.
    host_tensor out(t, want.shape());
    std::vector<tensor_view> views;
    for (const host_tensor& h : in) views.push_back(view_of(h));
    sp.run(views, view_of(out), nullptr);
    EXPECT_LE(test::relative_error(out, want), is_double(t) ? 1e-12 : 1e-5);
  }
}

TEST(ApiCpu, SlicedBadRequestsAreTypedErrors) {
  context ctx(on_cpu());
  const problem p = chain(dtype::f32);
  slice_request tiny;
  tiny.memory_limit_bytes = 64;
  EXPECT_THROW((void)ctx.plan_sliced(p, tiny), out_of_memory);
  slice_request given;
  given.labels = {1};
  given.memory_limit_bytes = 1024;  // one slice over b alone does not fit 1 KiB
  EXPECT_THROW((void)ctx.plan_sliced(p, given), out_of_memory);
  given.memory_limit_bytes = 0;
  sliced_program sp = ctx.compile_sliced(p, given);
  EXPECT_EQ(sp.slices(), 32);
  std::vector<host_tensor> in;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) in.emplace_back(p.type, p.net.shape_of(p.net.inputs[i]));
  EXPECT_THROW((void)sp.run(in, {}, 30, 5), shape_error);
  EXPECT_THROW((void)sp.run(in, {}, -1, 1), shape_error);
  sliced_program empty;
  EXPECT_THROW((void)empty.slices(), usage_error);
  // The file's own slices are used when the request names none.
  problem with_slices = p;
  with_slices.slices = {2};
  EXPECT_EQ(ctx.plan_sliced(with_slices).plan.slices, 32);
}

}  // namespace
}  // namespace tnrt
