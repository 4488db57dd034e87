// A compiled program survives 1000 replays with new inputs: a random mid-size network (16 tensors,
// extents 2..4), each replay re-uploads fresh random inputs into prog.input(i), runs, downloads the
// result and compares it with the CPU engine. Replays make no host synchronization of their own
// and allocate nothing from the pool.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cuda/compiled.hpp"
#include "cuda/step_timer.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt {
namespace {

void replay(dtype t, bool use_graph, int replays, std::uint64_t seed) {
  gputest::random_network_spec spec;
  spec.tensors = 16;
  spec.min_extent = 2;
  spec.max_extent = 4;
  spec.open_labels = 3;
  spec.hyperedges = 2;
  spec.max_elements = 1 << 14;  // keeps the 1000 CPU references quick
  std::uint64_t used = 0;
  const problem p = gputest::random_problem(spec, seed, t, &used);
  const auto cost = cost_of(p.net, p.tree);
  std::printf("[replay] %s graph=%d: network seed %llu, %zu tensors, %zu steps, largest %.0f elements, 2^%.1f flops\n",
              std::string(name_of(t)).c_str(), use_graph ? 1 : 0, static_cast<unsigned long long>(used), p.net.inputs.size(),
              p.tree.steps.size(), cost.max_elements, cost.log2_tc);

  cuda::options opt;
  opt.use_graph = use_graph;
  cuda::engine eng(opt);
  cuda::compiled_program prog(eng, p);
  EXPECT_EQ(prog.uses_graph(), use_graph) << prog.graph_note();
  const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
  const auto allocations0 = eng.pool().stats().allocations;
  double worst = 0;
  int failures = 0;
  for (int r = 0; r < replays; ++r) {
    const std::uint64_t input_seed = used * 7919 + static_cast<std::uint64_t>(r);
    const auto in = gputest::random_inputs(p, input_seed, 0.25, 1.25);
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
    const auto counts0 = eng.runtime().counts();
    prog.run();
    const auto counts1 = eng.runtime().counts();
    if (counts1.stream_syncs != counts0.stream_syncs || counts1.event_syncs != counts0.event_syncs) {
      ADD_FAILURE() << "replay " << r << " synchronized the host";
    }
    const host_tensor got = gputest::download(eng, prog.result(), t, p.net.shape_of(p.net.output));
    const host_tensor want = cpu::contract(p, in);
    const double err = gputest::rel_error(got, want);
    worst = std::max(worst, err);
    if (!(err <= tol) && ++failures <= 5) ADD_FAILURE() << "replay " << r << " (input seed " << input_seed << "): rel error " << err << " > " << tol;
  }
  std::printf("[replay] %d replays, worst rel error %.3e (tol %.1e), %d failures\n", replays, worst, tol, failures);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(eng.pool().stats().allocations, allocations0) << "replays allocated from the pool";
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

class Replay : public ::testing::Test {
 protected:
  void SetUp() override { TNRT_SKIP_WITHOUT_GPU(); }
};

TEST_F(Replay, ThousandReplaysWithGraphF32) { replay(dtype::f32, true, 1000, 4242); }
TEST_F(Replay, ReplaysWithoutGraphC128) { replay(dtype::c128, false, 200, 4343); }

// How compiled times a step alone (options::step_timing, src/cuda/step_timer.hpp): an enqueue that
// spends 2 ms on the host before its 4-byte memset. `enqueue` timing holds the host's 2 ms; `device`
// timing holds the GPU's work only: its spin doubles from 50 us until it outlasts the enqueue, and
// the events then see the memset alone.
TEST_F(Replay, DeviceTimingLeavesTheHostsEnqueueOut) {
  cuda::options opt;
  cuda::engine eng(opt);
  const cudaStream_t st = eng.stream();
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4), cudaSuccess);
  auto slow_enqueue = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    TNRT_CUDA(cudaMemsetAsync(d, 0, 4, st));
  };
  cuda::step_timer host(false), device(true);
  const float with_host = host.ms(st, slow_enqueue);
  float gpu = 1e30F;
  for (int rep = 0; rep < 3; ++rep) gpu = std::min(gpu, device.ms(st, slow_enqueue));
  std::printf("[step-timer] enqueue %.3f ms, device %.4f ms (spin %lld us after %d doublings)\n", with_host, gpu, device.lead_ns() / 1000,
              device.doublings());
  EXPECT_GE(with_host, 1.9F);
  EXPECT_LT(gpu, 0.2F);
  EXPECT_GE(device.doublings(), 5);  // 50 us -> 3.2 ms: the first lead over 2 ms is 3.2 ms
  EXPECT_EQ(device.lead_ns(), cuda::step_timer::max_lead_ns);
  // A quick enqueue needs no doubling.
  cuda::step_timer quick(true);
  const float q = quick.ms(st, [&] { TNRT_CUDA(cudaMemsetAsync(d, 0, 4, st)); });
  EXPECT_LT(q, 0.2F);
  EXPECT_EQ(quick.doublings(), 0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

// Both step timings build programs that compute the network (the CPU engine's result).
TEST_F(Replay, EitherStepTimingComputesTheNetwork) {
  gputest::random_network_spec spec;
  spec.tensors = 14;
  spec.min_extent = 2;
  spec.max_extent = 5;
  spec.open_labels = 2;
  spec.max_elements = 1 << 16;
  for (const timing_method how : {timing_method::device, timing_method::enqueue}) {
    const problem p = gputest::random_problem(spec, 4545, dtype::f32);
    cuda::options opt;
    opt.step_timing = how;
    cuda::engine eng(opt);
    cuda::compiled_program prog(eng, p);
    const auto in = gputest::random_inputs(p, 99, 0.25, 1.25);
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
    prog.run();
    const host_tensor got = gputest::download(eng, prog.result(), dtype::f32, p.net.shape_of(p.net.output));
    const double err = gputest::rel_error(got, cpu::contract(p, in));
    EXPECT_LE(err, gputest::tolerance(dtype::f32, gputest::longest_sum(p), 256.0)) << (how == timing_method::device ? "device" : "enqueue");
  }
}

}  // namespace
}  // namespace tnrt
