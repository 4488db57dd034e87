// Sliced contractions on a real GPU (context::compile_sliced, src/cuda/sliced.hpp): the sum of the
// slices against the unsliced contraction of the same context, on random networks in all four
// dtypes with sliced labels inside and outside the output, row-major and strided views on a
// stream of the test's own; slice ranges that add up to the whole; the memory held within the
// limit and the prediction; the graph replayed without host synchronizations.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tnrt/context.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"
#include "tnrt/slicing.hpp"

namespace tnrt {
namespace {

using gputest::stream_owner;

struct placed {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  gputest::strided_buffer lay;
  std::vector<std::int64_t> shape;
  placed() = default;
  placed(const placed&) = delete;
  placed& operator=(const placed&) = delete;
  placed(placed&& o) noexcept : ptr(o.ptr), bytes(o.bytes), lay(std::move(o.lay)), shape(std::move(o.shape)) { o.ptr = nullptr; }
  ~placed() { (void)cudaFree(ptr); }
  tensor_view view(dtype t) const {
    tensor_view v;
    v.data = ptr;
    v.type = t;
    v.shape = shape;
    v.strides = lay.strides;
    v.device = 0;
    return v;
  }
};

placed place(const host_tensor& logical, gputest::layout l, std::mt19937_64& rng) {
  placed p;
  p.shape = logical.shape();
  p.lay = gputest::make_layout(p.shape, l, rng);
  const std::vector<unsigned char> bytes = gputest::scatter(logical, p.lay);
  p.bytes = bytes.size();
  gputest::check_cuda(cudaMalloc(&p.ptr, p.bytes == 0 ? 1 : p.bytes), "cudaMalloc");
  gputest::check_cuda(cudaMemcpy(p.ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "H2D");
  return p;
}

host_tensor fetch(const placed& p, dtype t) {
  std::vector<unsigned char> bytes(p.bytes);
  gputest::check_cuda(cudaMemcpy(bytes.data(), p.ptr, bytes.size(), cudaMemcpyDeviceToHost), "D2H");
  return gputest::gather(bytes, t, p.shape, p.lay);
}

std::vector<label_t> input_labels(const problem& p) {
  std::vector<label_t> ls;
  for (const auto& in : p.net.inputs)
    for (label_t l : in)
      if (p.net.extents[static_cast<std::size_t>(l)] > 1) ls.push_back(l);
  return gputest::sorted_unique(ls);
}

TEST(CudaSliced, RandomNetworksSlicedEqualUnslicedEveryDtypeAnyLayout) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  int cases = 0, with_output = 0, with_summed = 0;
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    for (std::uint64_t c = 0; c < 12; ++c) {
      gputest::random_network_spec spec;
      spec.tensors = 4 + static_cast<int>(c % 6);
      spec.max_extent = 4;
      spec.max_elements = 1 << 14;
      spec.open_labels = static_cast<int>(c % 3);
      const std::uint64_t seed = 12100 + c + 100 * static_cast<std::uint64_t>(t);
      const problem p = gputest::random_problem(spec, seed, t);
      std::vector<label_t> candidates = input_labels(p);
      if (candidates.empty()) continue;
      std::mt19937_64 rng(seed);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      slice_request req;
      req.labels.assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(1 + c % 3, candidates.size())));
      for (label_t l : req.labels) {
        const bool out = std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end();
        with_output += out;
        with_summed += !out;
      }
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(t)) + " sliced " + p.net.describe(req.labels));
      const std::vector<host_tensor> in = gputest::random_inputs(p, seed, 0.25, 1.25);
      const gputest::layout lay = c % 2 == 0 ? gputest::layout::row_major : gputest::layout::padded;
      std::vector<placed> dev;
      std::vector<tensor_view> views;
      for (const host_tensor& h : in) dev.push_back(place(h, lay, rng));
      for (const placed& d : dev) views.push_back(d.view(t));
      host_tensor zero(t, p.net.shape_of(p.net.output));
      fill_constant(zero, 7.0);  // the run must overwrite it
      placed out = place(zero, c % 3 == 0 ? gputest::layout::permuted : gputest::layout::row_major, rng);
      placed ref = place(zero, gputest::layout::row_major, rng);
      sliced_program sp = ctx.compile_sliced(p, req);
      ASSERT_GT(sp.slices(), 1);
      sp.run(views, out.view(t), stream.s);
      ctx.contract(p, views, ref.view(t), stream.s);
      gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      const host_tensor want = cpu::contract(p, in);
      EXPECT_LE(gputest::rel_error(fetch(out, t), want), tol);
      EXPECT_LE(gputest::rel_error(fetch(ref, t), want), tol);
      ++cases;
    }
  }
  std::printf("[sliced] %d random networks, %d output and %d summed sliced labels\n", cases, with_output, with_summed);
  EXPECT_GT(cases, 30);
  EXPECT_GT(with_output, 5);
  EXPECT_GT(with_summed, 5);
}

// A matrix chain sliced under a limit found by plan_sliced: the pieces of a range run add up to
// the whole, the memory held stays under the limit and matches the prediction, and runs make no
// host synchronization.
TEST(CudaSliced, LimitRangesMemoryAndNoHostSync) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  problem p;
  p.net = parse_expression("ab,bc,cd,de->ae", {{256, 512}, {512, 512}, {512, 512}, {512, 256}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}, {0, 1}});
  p.type = dtype::f64;
  p.source = "chain";
  const std::vector<host_tensor> in = gputest::random_inputs(p, 77, 0.25, 1.25);
  std::mt19937_64 rng(1);
  std::vector<placed> dev;
  std::vector<tensor_view> views;
  for (const host_tensor& h : in) dev.push_back(place(h, gputest::layout::row_major, rng));
  for (const placed& d : dev) views.push_back(d.view(p.type));
  host_tensor zero(p.type, p.net.shape_of(p.net.output));
  fill_constant(zero, 0.0);
  placed out = place(zero, gputest::layout::row_major, rng);
  slice_request whole;
  whole.count_result = false;
  const slice_report unsliced = ctx.plan_sliced(p, whole);
  EXPECT_EQ(unsliced.plan.slices, 1);
  slice_request req;
  req.memory_limit_bytes = unsliced.predicted_bytes * 6 / 10;
  req.count_result = false;
  const slice_report r = ctx.plan_sliced(p, req);
  std::printf("[sliced] limit %zu B: %lld slices over %s, %d at once, predicted %zu B, flops x%.2f\n", r.limit_bytes,
              static_cast<long long>(r.plan.slices), p.net.describe(r.plan.labels).c_str(), r.parallel, r.predicted_bytes,
              r.cost.flops / r.cost_unsliced.flops);
  EXPECT_TRUE(r.predicted_exactly);
  EXPECT_GT(r.plan.slices, 1);
  EXPECT_LE(r.predicted_bytes, req.memory_limit_bytes);
  sliced_program sp = ctx.compile_sliced(p, req);
  EXPECT_EQ(sp.memory().total_bytes, r.predicted_bytes);
  EXPECT_LE(sp.memory().total_bytes, req.memory_limit_bytes);
  const counters before = ctx.stats();
  sp.run(views, out.view(p.type), stream.s);
  const counters after = ctx.stats();
  EXPECT_EQ(after.syncs.stream_syncs + after.syncs.event_syncs + after.syncs.device_syncs,
            before.syncs.stream_syncs + before.syncs.event_syncs + before.syncs.device_syncs);
  const host_tensor want = cpu::contract(p, in);
  gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
  EXPECT_LE(gputest::rel_error(fetch(out, p.type), want), 1e-12);
  // Two ranges into two outputs add up to the whole.
  placed lo = place(zero, gputest::layout::row_major, rng), hi = place(zero, gputest::layout::row_major, rng);
  const std::int64_t half = sp.slices() / 2;
  sp.run(views, lo.view(p.type), stream.s, 0, half);
  sp.run(views, hi.view(p.type), stream.s, half, -1);
  gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
  host_tensor sum = fetch(lo, p.type);
  const host_tensor h = fetch(hi, p.type);
  for (std::int64_t i = 0; i < sum.size(); ++i) sum.as<double>()[i] += h.as<double>()[i];
  EXPECT_LE(gputest::rel_error(sum, want), 1e-12);
  EXPECT_THROW(sp.run(views, out.view(p.type), stream.s, half, sp.slices()), shape_error);
  // Host tensors with progress.
  std::int64_t last = 0;
  const host_tensor got = sp.run(in, [&](std::int64_t done, std::int64_t) { last = done; });
  EXPECT_EQ(last, sp.slices());
  EXPECT_LE(gputest::rel_error(got, want), 1e-12);
  // One at a time and four at once give the same sum; four at once hold four programs.
  for (int parallel : {1, 4}) {
    slice_request q = req;
    q.memory_limit_bytes = 0;
    q.labels = r.plan.labels;
    q.parallel = parallel;
    sliced_program sq = ctx.compile_sliced(p, q);
    EXPECT_EQ(sq.report().parallel, std::min<std::int64_t>(parallel, sq.slices()));
    EXPECT_EQ(sq.memory().total_bytes, sq.report().predicted_bytes);
    placed o = place(zero, gputest::layout::row_major, rng);
    sq.run(views, o.view(p.type), stream.s);
    gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
    EXPECT_LE(gputest::rel_error(fetch(o, p.type), want), 1e-12) << parallel << " at once";
  }
  // A limit nothing fits: a typed error before anything is allocated.
  slice_request none;
  none.memory_limit_bytes = 1024;
  EXPECT_THROW((void)ctx.plan_sliced(p, none), out_of_memory);
  // A requested limit above the options' share of the free memory (80%) but within it is the
  // limit, as compile's admission takes it; one above everything is capped at what there is.
  std::size_t free_bytes = 0, total_bytes = 0;
  gputest::check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  slice_request high;
  high.memory_limit_bytes = free_bytes / 10 * 9;
  EXPECT_EQ(ctx.plan_sliced(p, high).limit_bytes, high.memory_limit_bytes);
  high.memory_limit_bytes = total_bytes * 4;
  EXPECT_LE(ctx.plan_sliced(p, high).limit_bytes, total_bytes);
}

}  // namespace
}  // namespace tnrt
