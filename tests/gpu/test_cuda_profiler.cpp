// The CUPTI profiler (src/cuda/profiler, `tnrt contract --profile`), on the GPU: a known number of
// kernels (tests/gpu/test_cuda_profiler_kernels.cu) and synchronizations inside begin_run() ..
// end_run() windows must come back exactly, warm-up work before the first window must not, and the
// runner's own waits are told apart. Then whole runs through cuda::run with profiling on, eager and
// compiled, checked against the CPU engine. Skips without a GPU or without CUPTI.
//
// The runtime-domain counts (cudaStreamSynchronize, ...) are asserted exactly. Whether CUPTI also
// reports the driver call each of them makes (cuStreamSynchronize, ...) is printed, and only
// checked to be all-or-nothing; driver calls made directly are asserted exactly.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cuda/profiler.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt::gputest {
cudaError_t launch_spin_kernels(cudaStream_t stream, int count, unsigned nanoseconds);
}

namespace tnrt {
namespace {

using cuda::sync_call;

std::uint64_t count(const cuda::sync_counts& c, sync_call k) { return c[static_cast<std::size_t>(k)]; }

void print_syncs(const char* what, const cuda::profile_report& r) {
  std::printf("[profiler] %s:", what);
  for (std::size_t k = 0; k < cuda::sync_call_kinds; ++k)
    std::printf(" %s %llu (runner %llu)", cuda::name_of(static_cast<sync_call>(k)), static_cast<unsigned long long>(r.syncs[k]),
                static_cast<unsigned long long>(r.runner_syncs[k]));
  std::printf("\n");
}

#define TNRT_SKIP_WITHOUT_CUPTI()                                                            \
  do {                                                                                       \
    if (auto tnrt_why_ = ::tnrt::cuda::profiler_unavailable_reason(); !tnrt_why_.empty())    \
      GTEST_SKIP() << "no CUPTI: " << tnrt_why_;                                             \
  } while (0)

// Runs without a GPU too: either CUPTI loads (and says which) or the reason names what was tried.
TEST(ProfilerLibrary, LoadsOrSaysWhatWasTried) {
  const std::string why = cuda::profiler_unavailable_reason();
  if (why.empty()) {
    EXPECT_NE(cuda::profiler_library().find("CUPTI "), std::string::npos) << cuda::profiler_library();
    std::printf("[profiler] %s\n", cuda::profiler_library().c_str());
  } else {
    EXPECT_NE(why.find("libcupti"), std::string::npos) << why;
    EXPECT_TRUE(cuda::profiler_library().empty());
  }
}

class Profiler : public ::testing::Test {
 protected:
  void SetUp() override {
    TNRT_SKIP_WITHOUT_GPU();
    TNRT_SKIP_WITHOUT_CUPTI();
  }
};

TEST_F(Profiler, CountsKernelsAndSynchronizationsExactly) {
  using cu_ctx_synchronize_fn = CUresult (*)();
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  TNRT_TEST_CUDA(cudaGetDriverEntryPointByVersion("cuCtxSynchronize", &fn, 12000, cudaEnableDefault, &found));
  ASSERT_EQ(found, cudaDriverEntryPointSuccess);
  const auto cu_ctx_synchronize = reinterpret_cast<cu_ctx_synchronize_fn>(fn);

  cudaStream_t s = nullptr;
  cudaEvent_t e = nullptr;
  void* buf = nullptr;
  TNRT_TEST_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  TNRT_TEST_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  TNRT_TEST_CUDA(cudaMalloc(&buf, 2 << 20));

  cuda::profile_report r;
  {
    cuda::profiler prof;
    EXPECT_THROW(cuda::profiler second, device_error) << "two sessions at once";
    // Warm-up: recorded by CUPTI (activity is on) but before the first window, so not counted.
    TNRT_TEST_CUDA(gputest::launch_spin_kernels(s, 5, 1000));
    TNRT_TEST_CUDA(cudaStreamSynchronize(s));

    // Run 0: 7 kernels, 3 stream syncs (the last one the runner's), an event sync, a device sync and
    // two cuCtxSynchronize.
    prof.begin_run();
    TNRT_TEST_CUDA(gputest::launch_spin_kernels(s, 7, 2000));
    TNRT_TEST_CUDA(cudaStreamSynchronize(s));
    TNRT_TEST_CUDA(cudaStreamSynchronize(s));
    TNRT_TEST_CUDA(cudaEventRecord(e, s));
    TNRT_TEST_CUDA(cudaEventSynchronize(e));
    TNRT_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(cu_ctx_synchronize(), CUDA_SUCCESS);
    ASSERT_EQ(cu_ctx_synchronize(), CUDA_SUCCESS);
    {
      const cuda::profiler::own_syncs own(&prof);
      TNRT_TEST_CUDA(cudaStreamSynchronize(s));
    }
    prof.end_run();

    TNRT_TEST_CUDA(cudaStreamSynchronize(s));  // between runs: not counted

    prof.begin_run();  // run 1: 4 kernels, one memset, one device-to-device copy, the runner's sync
    TNRT_TEST_CUDA(gputest::launch_spin_kernels(s, 4, 2000));
    TNRT_TEST_CUDA(cudaMemsetAsync(buf, 1, 1 << 20, s));
    TNRT_TEST_CUDA(cudaMemcpyAsync(static_cast<char*>(buf) + (1 << 20), buf, 1 << 20, cudaMemcpyDeviceToDevice, s));
    {
      const cuda::profiler::own_syncs own(&prof);
      TNRT_TEST_CUDA(cudaStreamSynchronize(s));
    }
    prof.end_run();
    r = prof.finish();
  }
  TNRT_TEST_CUDA(cudaFree(buf));
  TNRT_TEST_CUDA(cudaEventDestroy(e));
  TNRT_TEST_CUDA(cudaStreamDestroy(s));

  print_syncs("exact test", r);
  std::printf("[profiler] kernels %zu (outside runs %llu), busy %.1f us, span %.1f us, memsets %llu, memcpys %llu\n",
              r.kernels.kernels, static_cast<unsigned long long>(r.kernels_outside_runs), static_cast<double>(r.kernels.busy_ns) / 1e3,
              static_cast<double>(r.kernels.span_ns) / 1e3, static_cast<unsigned long long>(r.memsets),
              static_cast<unsigned long long>(r.memcpys));
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.kernels_per_run, (std::vector<std::size_t>{7, 4}));
  EXPECT_EQ(r.kernels.kernels, 11u);
  EXPECT_EQ(r.kernels_outside_runs, 5u);
  EXPECT_EQ(r.kernels_untimed, 0u);
  EXPECT_EQ(r.records_dropped, 0u);
  EXPECT_EQ(r.kernels.gaps_ns.size(), 6u + 3u);
  // Kernels on one stream run one after another: busy at least 11 x 2 us, never more than the span.
  EXPECT_GE(r.kernels.busy_ns, 11u * 2000u);
  EXPECT_LE(r.kernels.busy_ns, r.kernels.span_ns);
  EXPECT_EQ(r.memsets, 1u);
  EXPECT_EQ(r.memcpys, 1u);

  EXPECT_EQ(count(r.syncs, sync_call::cuda_stream_synchronize), 4u);  // 3 in run 0, 1 in run 1
  EXPECT_EQ(count(r.runner_syncs, sync_call::cuda_stream_synchronize), 2u);
  EXPECT_EQ(count(r.syncs, sync_call::cuda_event_synchronize), 1u);
  EXPECT_EQ(count(r.syncs, sync_call::cuda_device_synchronize), 1u);
  // The driver domain: the two direct cuCtxSynchronize calls at least; the runtime's calls either
  // all show up as their driver calls too or none does.
  const std::uint64_t cu_stream = count(r.syncs, sync_call::cu_stream_synchronize);
  const std::uint64_t cu_event = count(r.syncs, sync_call::cu_event_synchronize);
  const std::uint64_t cu_ctx = count(r.syncs, sync_call::cu_ctx_synchronize);
  const bool nested = cu_stream > 0;
  std::printf("[profiler] runtime calls %s reported in the driver domain too\n", nested ? "ARE" : "are NOT");
  EXPECT_EQ(cu_stream, nested ? 4u : 0u);
  EXPECT_EQ(cu_event, nested ? 1u : 0u);
  EXPECT_EQ(count(r.runner_syncs, sync_call::cu_stream_synchronize), nested ? 2u : 0u);
  EXPECT_TRUE(cu_ctx == 2u || (nested && cu_ctx == 3u)) << "cuCtxSynchronize " << cu_ctx;
  EXPECT_EQ(count(r.runner_syncs, sync_call::cu_ctx_synchronize), 0u);
}

TEST_F(Profiler, ASessionLeftWithoutFinishDoesNotBlockTheNext) {
  cudaStream_t s = nullptr;
  TNRT_TEST_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    cuda::profiler prof;
    prof.begin_run();
    TNRT_TEST_CUDA(gputest::launch_spin_kernels(s, 3, 1000));
    TNRT_TEST_CUDA(cudaStreamSynchronize(s));
  }  // destroyed mid-run, as when the run throws
  cuda::profiler prof;
  prof.begin_run();
  TNRT_TEST_CUDA(gputest::launch_spin_kernels(s, 2, 1000));
  TNRT_TEST_CUDA(cudaStreamSynchronize(s));
  prof.end_run();
  const cuda::profile_report r = prof.finish();
  TNRT_TEST_CUDA(cudaStreamDestroy(s));
  EXPECT_EQ(r.kernels_per_run, (std::vector<std::size_t>{2}));
  EXPECT_EQ(count(r.syncs, sync_call::cuda_stream_synchronize), 1u);
}

// Whole runs with profiling on: the result is still right, every timed run has the same kernels,
// the runner's one wait per run is its own, and warm-ups are left out.
void profiled_run(cuda::exec_mode mode) {
  gputest::random_network_spec spec;
  spec.tensors = 10;
  const problem p = gputest::random_problem(spec, 606, dtype::f32);
  const auto inputs = gputest::random_inputs(p, 707, 0.5, 1.5);
  cuda::run_request req;
  req.prob = &p;
  req.inputs = inputs;
  req.opt.mode = mode;
  req.opt.fuse_small_steps = false;  // one library call per step: kernels >= steps
  // Eager learns its layout over a network's first eight calls, each layout's steps launching their
  // own kernels: a fixed layout keeps every timed run's kernels the same.
  if (mode == cuda::exec_mode::eager) req.opt.time_layouts = false;
  req.warmups = 2;
  req.repeats = 5;
  req.profile = true;
  const cuda::run_result r = cuda::run(req);
  ASSERT_TRUE(r.profile.has_value());
  const cuda::profile_report& pr = *r.profile;
  print_syncs(mode == cuda::exec_mode::eager ? "eager run" : "compiled run", pr);
  std::printf("[profiler] %zu steps: kernels per run %zu, busy %.3f ms, span %.3f ms, outside runs %llu\n", p.tree.steps.size(),
              pr.kernels_per_run.empty() ? 0 : pr.kernels_per_run[0], static_cast<double>(pr.kernels.busy_ns) / 1e6,
              static_cast<double>(pr.kernels.span_ns) / 1e6, static_cast<unsigned long long>(pr.kernels_outside_runs));
  EXPECT_EQ(pr.runs, 5);
  ASSERT_EQ(pr.kernels_per_run.size(), 5u);
  for (std::size_t k : pr.kernels_per_run) EXPECT_EQ(k, pr.kernels_per_run[0]);
  EXPECT_GE(pr.kernels_per_run[0], p.tree.steps.size());
  EXPECT_GE(pr.kernels_outside_runs, 2 * pr.kernels_per_run[0]) << "the warm-ups ran the same kernels";
  EXPECT_GT(pr.kernels.busy_ns, 0u);
  EXPECT_LE(pr.kernels.busy_ns, pr.kernels.span_ns);
  EXPECT_EQ(count(pr.runner_syncs, sync_call::cuda_stream_synchronize), 5u);
  // CUPTI sees at least what tnrt's runtime seam counted inside the calls (and any library's own).
  EXPECT_GE(count(pr.syncs, sync_call::cuda_stream_synchronize) + count(pr.syncs, sync_call::cuda_event_synchronize) - 5u,
            r.syncs_inside_calls);
  EXPECT_EQ(pr.records_dropped, 0u);
  const host_tensor want = cpu::contract(p, inputs);
  EXPECT_LE(gputest::rel_error(r.result, want), gputest::tolerance(dtype::f32, gputest::longest_sum(p)));
}

TEST_F(Profiler, EagerRunThroughTheRunner) { profiled_run(cuda::exec_mode::eager); }
TEST_F(Profiler, CompiledRunThroughTheRunner) { profiled_run(cuda::exec_mode::compiled); }

}  // namespace
}  // namespace tnrt
