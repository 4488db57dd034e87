// The library API on a real GPU (include/tnrt/context.hpp), as a user's program calls it: device
// buffers of the test's own (cudaMalloc) on streams of its own, verified against the CPU engine.
//  - eager contract and compiled programs in all four dtypes, inputs and outputs in row-major,
//    column-major, permuted and padded (non-contiguous) layouts, scalar and tensor results, a
//    pool result handed to the caller, and no host synchronization inside contract or run;
//  - a program run 1 000 times with different input pointers and values, every result checked;
//  - 4 threads on 4 streams x 1 000 eager contractions on one context, and one program shared by
//    the 4 streams, every result checked (the pool's cross-stream reuse and the program's
//    cross-stream ordering under load);
//  - bad views: typed errors, nothing enqueued.
// Seeds are fixed and printed.
#include "gpu_test_util.hpp"  // first: tells whether the CUDA/cuTENSOR headers are reachable

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tnrt/context.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt {
namespace {

using gputest::layout;

using gputest::stream_owner;

using gputest::device_buffer;

// A logical tensor placed on the device in a layout: the buffer (padding NaN) and its view.
struct placed {
  std::unique_ptr<device_buffer> buf;
  gputest::strided_buffer lay;
  std::vector<std::int64_t> shape;
  tensor_view view(dtype t) const {
    tensor_view v;
    v.data = buf->ptr;
    v.type = t;
    v.shape = shape;
    v.strides = lay.strides;
    v.device = 0;
    return v;
  }
};

placed place(const host_tensor& logical, layout l, std::mt19937_64& rng, cudaStream_t st) {
  placed p;
  p.shape = logical.shape();
  p.lay = gputest::make_layout(p.shape, l, rng);
  const std::vector<unsigned char> bytes = gputest::scatter(logical, p.lay);
  p.buf = std::make_unique<device_buffer>(bytes.size());
  gputest::check_cuda(cudaMemcpyAsync(p.buf->ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, st), "H2D");
  gputest::check_cuda(cudaStreamSynchronize(st), "sync");
  return p;
}

host_tensor fetch(const placed& p, dtype t, cudaStream_t st) {
  std::vector<unsigned char> bytes(p.buf->bytes);
  gputest::check_cuda(cudaMemcpyAsync(bytes.data(), p.buf->ptr, bytes.size(), cudaMemcpyDeviceToHost, st), "D2H");
  gputest::check_cuda(cudaStreamSynchronize(st), "sync");
  return gputest::gather(bytes, t, p.shape, p.lay);
}

std::uint64_t syncs(const context& ctx) {
  const counters c = ctx.stats();
  return c.syncs.stream_syncs + c.syncs.event_syncs + c.syncs.device_syncs;
}

std::vector<problem> api_problems(dtype t) {
  std::vector<problem> out;
  for (int tensors : {3, 6, 9, 12}) {
    gputest::random_network_spec spec;
    spec.tensors = tensors;
    spec.max_extent = 4;
    spec.max_elements = 1 << 14;
    spec.open_labels = tensors % 3;  // scalar results too
    out.push_back(gputest::random_problem(spec, 7100 + static_cast<std::uint64_t>(tensors), t));
  }
  // a step-less problem: one operand, the result is a (strided) copy of it
  problem single;
  single.type = t;
  single.source = "single operand";
  single.net.extents = {3, 5};
  single.net.label_names = {"a", "b"};
  single.net.inputs = {{0, 1}};
  single.net.output = {0, 1};
  out.push_back(single);
  return out;
}

TEST(CudaApi, EagerAndCompiledOnUserStreamsAnyLayout) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  std::mt19937_64 rng(8101);
  std::printf("[api] seed 8101\n");
  const layout layouts[] = {layout::row_major, layout::column_major, layout::permuted, layout::padded};
  int checked = 0;
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    for (const problem& p : api_problems(t)) {
      const auto in = gputest::random_inputs(p, 31 + static_cast<std::uint64_t>(checked), 0.25, 1.25);
      const host_tensor want = cpu::contract(p, in);
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      program prog = ctx.compile(p);
      for (layout in_l : layouts) {
        for (layout out_l : {layout::row_major, layout::padded}) {
          std::vector<placed> dev;
          std::vector<tensor_view> views;
          for (const host_tensor& h : in) dev.push_back(place(h, in_l, rng, stream.s));
          for (const placed& d : dev) views.push_back(d.view(t));
          host_tensor zero(t, want.shape());
          fill_constant(zero, 0.0);
          placed out = place(zero, out_l, rng, stream.s);
          const std::uint64_t s0 = syncs(ctx);
          ctx.contract(p, views, out.view(t), stream.s);
          const std::uint64_t s1 = syncs(ctx);
          EXPECT_EQ(s1, s0) << "eager contract synchronized the host";
          const double e_eager = gputest::rel_error(fetch(out, t, stream.s), want);
          prog.run(views, out.view(t), stream.s);
          EXPECT_EQ(syncs(ctx), s1) << "program.run synchronized the host";
          const double e_comp = gputest::rel_error(fetch(out, t, stream.s), want);
          const device_tensor r = ctx.contract(p, views, stream.s);
          const double e_pool = gputest::rel_error(r.to_host(), want);
          EXPECT_LE(e_eager, tol) << p.source << " " << name_of(t) << " in " << gputest::name_of(in_l) << " out " << gputest::name_of(out_l);
          EXPECT_LE(e_comp, tol) << p.source << " " << name_of(t) << " in " << gputest::name_of(in_l) << " out " << gputest::name_of(out_l);
          EXPECT_LE(e_pool, tol) << p.source << " " << name_of(t) << " pool result";
          ++checked;
        }
      }
    }
  }
  std::printf("[api] %d layout combinations checked (eager, compiled, pool result each)\n", checked);
  const counters c = ctx.stats();
  EXPECT_GT(c.api.analysis_hits, 0U);
  EXPECT_EQ(c.retirement.leaked, 0U);
}

TEST(CudaApi, ProgramThousandRunsNewPointersAndValues) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  gputest::random_network_spec spec;
  spec.tensors = 10;
  spec.max_extent = 4;
  spec.max_elements = 1 << 14;
  spec.open_labels = 2;
  const problem p = gputest::random_problem(spec, 8202, dtype::f32);
  program prog = ctx.compile(p);
  std::mt19937_64 rng(8203);
  constexpr int sets = 4;  // input and output buffers rotate: every run sees other pointers than the last
  std::vector<std::vector<placed>> dev(sets);
  std::vector<placed> outs;
  std::vector<std::vector<host_tensor>> values(sets);
  const host_tensor zero = [&] {
    host_tensor z(p.type, p.net.shape_of(p.net.output));
    fill_constant(z, 0.0);
    return z;
  }();
  for (int s = 0; s < sets; ++s) outs.push_back(place(zero, layout::row_major, rng, stream.s));
  const double tol = gputest::tolerance(p.type, gputest::longest_sum(p), 256.0);
  std::uint64_t inside = 0;
  int bad = 0;
  for (int run = 0; run < 1000; ++run) {
    const int s = run % sets;
    // New values every run, in place or in a new buffer (new pointers).
    values[static_cast<std::size_t>(s)] = gputest::random_inputs(p, 9000 + static_cast<std::uint64_t>(run), 0.25, 1.25);
    dev[static_cast<std::size_t>(s)].clear();
    for (const host_tensor& h : values[static_cast<std::size_t>(s)])
      dev[static_cast<std::size_t>(s)].push_back(place(h, run % 3 == 0 ? layout::permuted : layout::row_major, rng, stream.s));
    std::vector<tensor_view> views;
    for (const placed& d : dev[static_cast<std::size_t>(s)]) views.push_back(d.view(p.type));
    const std::uint64_t s0 = syncs(ctx);
    prog.run(views, outs[static_cast<std::size_t>(s)].view(p.type), stream.s);
    inside += syncs(ctx) - s0;
    const host_tensor want = cpu::contract(p, values[static_cast<std::size_t>(s)]);
    const double e = gputest::rel_error(fetch(outs[static_cast<std::size_t>(s)], p.type, stream.s), want);
    if (!(e <= tol) && ++bad <= 5) ADD_FAILURE() << "run " << run << ": relative error " << e << " above " << tol;
  }
  std::printf("[api] 1000 runs, %d outside tolerance, %llu host synchronizations inside run\n", bad, static_cast<unsigned long long>(inside));
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(inside, 0U);
  EXPECT_EQ(ctx.stats().api.program_runs, 1000U);
}

// The same buffers every run (the io graph's nodes are not updated then), new values written in
// place on the stream before each run, views without strides (run()'s fast check), and every few
// runs one input passed through a strided view and back: each result must see the new values.
TEST(CudaApi, ProgramSameBuffersNewValuesInPlace) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  gputest::random_network_spec spec;
  spec.tensors = 8;
  spec.max_extent = 4;
  spec.max_elements = 1 << 12;
  spec.open_labels = 1;
  const problem p = gputest::random_problem(spec, 8302, dtype::f64);
  program prog = ctx.compile(p);
  std::vector<std::unique_ptr<device_buffer>> in;
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& labels : p.net.inputs) shapes.push_back(p.net.shape_of(labels));
  const std::vector<std::int64_t> out_shape = p.net.shape_of(p.net.output);
  for (const auto& s : shapes) in.push_back(std::make_unique<device_buffer>(static_cast<std::size_t>(element_count(s)) * 8));
  device_buffer out(static_cast<std::size_t>(element_count(out_shape)) * 8);
  const double tol = gputest::tolerance(p.type, gputest::longest_sum(p), 256.0);
  int bad = 0;
  for (int run = 0; run < 60; ++run) {
    const std::vector<host_tensor> values = gputest::random_inputs(p, 9900 + static_cast<std::uint64_t>(run), 0.25, 1.25);
    for (std::size_t i = 0; i < values.size(); ++i)
      gputest::check_cuda(cudaMemcpyAsync(in[i]->ptr, values[i].data(), values[i].bytes(), cudaMemcpyHostToDevice, stream.s), "H2D");
    gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");  // the host values live only this iteration
    std::vector<std::vector<std::int64_t>> strides(values.size());
    std::vector<tensor_view> views;
    for (std::size_t i = 0; i < values.size(); ++i) {
      tensor_view v;
      v.data = in[i]->ptr;
      v.type = p.type;
      v.shape = shapes[i];
      v.device = 0;
      if (run % 7 == 3 && i == 0) {  // the same buffer, row-major, but through explicit strides
        strides[i] = row_major_strides(shapes[i]);
        v.strides = strides[i];
      }
      views.push_back(v);
    }
    tensor_view o;
    o.data = out.ptr;
    o.type = p.type;
    o.shape = out_shape;
    o.device = 0;
    prog.run(views, o, stream.s);
    host_tensor got(p.type, out_shape);
    gputest::check_cuda(cudaMemcpyAsync(got.data(), out.ptr, got.bytes(), cudaMemcpyDeviceToHost, stream.s), "D2H");
    gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
    const double e = gputest::rel_error(got, cpu::contract(p, values));
    if (!(e <= tol) && ++bad <= 5) ADD_FAILURE() << "run " << run << ": relative error " << e << " above " << tol;
  }
  EXPECT_EQ(bad, 0);
}

// Static inputs: the program's own buffers (input_views) written in place and run without copies,
// alternating with runs from the caller's buffers (copied in), every result against the CPU; the
// views are the program's shapes and type; a CPU program has none.
TEST(CudaApi, ProgramStaticInputViews) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  gputest::random_network_spec spec;
  spec.tensors = 9;
  spec.max_extent = 4;
  spec.max_elements = 1 << 12;
  spec.open_labels = 1;
  const problem p = gputest::random_problem(spec, 8411, dtype::c64);
  program prog = ctx.compile(p);
  const std::vector<tensor_view> own = prog.input_views();
  ASSERT_EQ(own.size(), p.net.inputs.size());
  std::vector<std::unique_ptr<device_buffer>> mine;
  for (std::size_t i = 0; i < own.size(); ++i) {
    EXPECT_EQ(own[i].type, p.type);
    EXPECT_EQ(std::vector<std::int64_t>(own[i].shape.begin(), own[i].shape.end()), p.net.shape_of(p.net.inputs[i]));
    mine.push_back(std::make_unique<device_buffer>(static_cast<std::size_t>(element_count(p.net.shape_of(p.net.inputs[i]))) * 8));
  }
  const std::vector<std::int64_t> out_shape = p.net.shape_of(p.net.output);
  device_buffer out(static_cast<std::size_t>(element_count(out_shape)) * 8);
  tensor_view o;
  o.data = out.ptr;
  o.type = p.type;
  o.shape = out_shape;
  o.device = 0;
  const double tol = gputest::tolerance(p.type, gputest::longest_sum(p), 256.0);
  for (int run = 0; run < 12; ++run) {
    const std::vector<host_tensor> values = gputest::random_inputs(p, 7700 + static_cast<std::uint64_t>(run), 0.25, 1.25);
    const bool in_place = run % 3 != 2;  // two runs in place, then one from the caller's buffers
    std::vector<tensor_view> views = own;
    for (std::size_t i = 0; i < values.size(); ++i) {
      void* dst = in_place ? own[i].data : mine[i]->ptr;
      if (!in_place) views[i].data = dst;
      gputest::check_cuda(cudaMemcpyAsync(dst, values[i].data(), values[i].bytes(), cudaMemcpyHostToDevice, stream.s), "H2D");
    }
    prog.run(views, o, stream.s);
    host_tensor got(p.type, out_shape);
    gputest::check_cuda(cudaMemcpyAsync(got.data(), out.ptr, got.bytes(), cudaMemcpyDeviceToHost, stream.s), "D2H");
    gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
    EXPECT_LE(gputest::rel_error(got, cpu::contract(p, values)), tol) << "run " << run << (in_place ? " in place" : " copied in");
  }
  context cpu_ctx(options{.device = cpu_device});
  EXPECT_THROW((void)cpu_ctx.compile(p).input_views(), not_supported);
}

TEST(CudaApi, FourStreamsThousandContractionsEach) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  constexpr int threads = 4, per_thread = 1000;
  // Eight small problems of different shapes: pool blocks of every size move between streams.
  std::vector<problem> probs;
  for (int i = 0; i < 8; ++i) {
    gputest::random_network_spec spec;
    spec.tensors = 3 + i % 5;
    spec.max_extent = 5;
    spec.max_elements = 1 << 12;
    spec.open_labels = i % 3;
    probs.push_back(gputest::random_problem(spec, 8300 + static_cast<std::uint64_t>(i) * 17, i % 2 == 0 ? dtype::f32 : dtype::c64));
  }
  program shared = ctx.compile(probs[0]);
  std::atomic<int> bad{0}, done{0};
  std::vector<std::thread> pool;
  std::vector<std::string> errors(threads);
  for (int th = 0; th < threads; ++th) {
    pool.emplace_back([&, th] {
      try {
        stream_owner stream;
        std::mt19937_64 rng(8400 + static_cast<std::uint64_t>(th));
        for (int i = 0; i < per_thread; ++i) {
          const bool use_program = i % 10 == 0;
          const problem& p = use_program ? probs[0] : probs[static_cast<std::size_t>(rng() % probs.size())];
          const auto in = gputest::random_inputs(p, static_cast<std::uint64_t>(th) * 100000 + static_cast<std::uint64_t>(i), 0.25, 1.25);
          std::vector<placed> dev;
          std::vector<tensor_view> views;
          for (const host_tensor& h : in) dev.push_back(place(h, layout::row_major, rng, stream.s));
          for (const placed& d : dev) views.push_back(d.view(p.type));
          host_tensor got;
          if (use_program) {
            host_tensor z(p.type, p.net.shape_of(p.net.output));
            fill_constant(z, 0.0);
            placed out = place(z, layout::row_major, rng, stream.s);
            shared.run(views, out.view(p.type), stream.s);
            got = fetch(out, p.type, stream.s);
          } else {
            const device_tensor r = ctx.contract(p, views, stream.s);
            got = r.to_host();
          }
          const host_tensor want = cpu::contract(p, in);
          if (!(gputest::rel_error(got, want) <= gputest::tolerance(p.type, gputest::longest_sum(p), 256.0))) ++bad;
          ++done;
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(th)] = e.what();
      }
    });
  }
  for (auto& t : pool) t.join();
  for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
  const counters c = ctx.stats();
  std::printf("[api] 4 streams: %d contractions, %d wrong; pool reuses %llu of %llu allocations; bridged calls %llu; "
              "retirement leaked %llu\n",
              done.load(), bad.load(), static_cast<unsigned long long>(c.pool.reuses), static_cast<unsigned long long>(c.pool.allocations),
              static_cast<unsigned long long>(c.api.bridged_calls), static_cast<unsigned long long>(c.retirement.leaked));
  EXPECT_EQ(done.load(), threads * per_thread);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(c.api.bridged_calls, 0U) << "no eager call was bridged to the own stream";
  EXPECT_EQ(c.retirement.leaked, 0U);
}

TEST(CudaApi, BadViewsAreTypedErrors) {
  TNRT_SKIP_WITHOUT_GPU();
  context ctx;
  stream_owner stream;
  problem p;
  p.type = dtype::f32;
  p.source = "ab,bc->ac";
  p.net.extents = {2, 3, 4};
  p.net.label_names = {"a", "b", "c"};
  p.net.inputs = {{0, 1}, {1, 2}};
  p.net.output = {0, 2};
  p.tree.steps = {step{0, 1, {0, 2}}};
  device_buffer a(6 * 4), b(12 * 4), c(8 * 4);
  const std::int64_t sa[] = {2, 3}, sb[] = {3, 4}, sc[] = {2, 4}, neg[] = {-3, 1}, wrong[] = {3, 3};
  auto view = [](void* d, std::span<const std::int64_t> shape, dtype t = dtype::f32) {
    tensor_view v;
    v.data = d;
    v.type = t;
    v.shape = shape;
    v.device = 0;
    return v;
  };
  std::vector<tensor_view> in = {view(a.ptr, sa), view(b.ptr, sb)};
  const tensor_view out = view(c.ptr, sc);
  ctx.contract(p, in, out, stream.s);  // the good call works
  auto bad_in = in;
  bad_in[1].type = dtype::f64;
  EXPECT_THROW(ctx.contract(p, bad_in, out, stream.s), dtype_error);
  bad_in = in;
  bad_in[1].shape = wrong;
  EXPECT_THROW(ctx.contract(p, bad_in, out, stream.s), shape_error);
  bad_in = in;
  bad_in[0].strides = neg;
  EXPECT_THROW(ctx.contract(p, bad_in, out, stream.s), not_supported);
  bad_in = in;
  bad_in[0].device = cpu_device;
  EXPECT_THROW(ctx.contract(p, bad_in, out, stream.s), device_error);
  EXPECT_THROW(ctx.contract(p, std::span<const tensor_view>(in).first(1), out, stream.s), shape_error);
  tensor_view alias = view(a.ptr, sc);
  EXPECT_THROW(ctx.contract(p, in, alias, stream.s), not_supported);
  program prog = ctx.compile(p);
  EXPECT_THROW(prog.run(bad_in, out, stream.s), device_error);
  gputest::check_cuda(cudaStreamSynchronize(stream.s), "sync");
}

}  // namespace
}  // namespace tnrt
