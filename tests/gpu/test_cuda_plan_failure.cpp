// An injected cuTENSOR plan failure during an eager tree (at its first plan build, after that step's
// output was taken from the pool): the call fails with a device error naming it, what it took goes
// back to the pool, the plan cache is left as it was, and the same engine then contracts the same
// tree correctly.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cuda/eager.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

TEST(PlanFailure, EagerTreeFailsCleanlyThenRunsCorrectly) {
  if (auto why = cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  gputest::random_network_spec spec;
  spec.tensors = 10;
  spec.min_extent = 2;
  spec.max_extent = 4;
  const problem p = gputest::random_problem(spec, 91, dtype::f64);
  const auto inputs = gputest::random_inputs(p, 92);
  cuda::options opt;
  opt.fuse_small_steps = false;  // every step through cuTENSOR, so a plan build happens mid-tree
  cuda::engine eng(opt);
  std::vector<void*> dev;
  for (const auto& t : inputs) dev.push_back(gputest::upload(eng, t));
  eng.synchronize();
  const auto in_use_before = eng.pool().stats().bytes_in_use;
  const auto cache_before = eng.stats().plan_cache;

  int failures = 0;
  try {
    eng.inject_plan_failures(1);
    (void)cuda::contract_eager(eng, p, dev);
    ADD_FAILURE() << "the injected plan failure did not surface";
  } catch (const device_error& e) {
    std::printf("[plan failure] %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos);
    ++failures;
  }
  eng.synchronize();
  EXPECT_EQ(eng.pool().stats().bytes_in_use, in_use_before + eng.workspace().stats().retained_bytes)
      << "an intermediate of the failed call was not given back";
  EXPECT_EQ(eng.stats().plan_cache.entries, cache_before.entries) << "a failed build must leave the cache unchanged";

  // The same engine, the same tree: correct now.
  const cuda::device_operand r = cuda::contract_eager(eng, p, dev);
  const host_tensor got = gputest::download(eng, r.ptr, p.type, p.net.shape_of(p.net.output));
  const host_tensor want = cpu::contract(p, inputs);
  EXPECT_LE(gputest::rel_error(got, want), 1e-12);
  if (r.owned) eng.pool().deallocate(r.ptr, eng.stream_handle());
  for (void* d : dev) eng.pool().deallocate(d, eng.stream_handle());
  eng.synchronize();
  EXPECT_EQ(eng.queue().stats().leaked, 0U);
  EXPECT_EQ(failures, 1);
}

}  // namespace
}  // namespace tnrt
