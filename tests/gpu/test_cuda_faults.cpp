// Injected failures of the CUDA runtime seam on a real GPU (cuda_runtime::inject): the retirement
// queue falls back to a stream barrier when an event cannot be created or recorded, leaks (never
// reuses) a block when no completion can be witnessed at all, keeps an entry whose query failed
// and releases it later, and the pool reports a refused allocation as out_of_memory naming the
// request. After every test engine.synchronize() leaves nothing in flight.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/step_lowering.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt {
namespace {

using cuda::engine;
using cuda::fault;

void print_stats(const char* when, const device::retirement_stats& r) {
  std::printf("[retire %s] deferred %llu immediate %llu released %llu fallbacks %llu query_errors %llu leaked %llu in_flight %llu\n", when,
              static_cast<unsigned long long>(r.deferred), static_cast<unsigned long long>(r.immediate),
              static_cast<unsigned long long>(r.released), static_cast<unsigned long long>(r.barrier_fallbacks),
              static_cast<unsigned long long>(r.query_errors), static_cast<unsigned long long>(r.leaked),
              static_cast<unsigned long long>(r.in_flight));
}

// A 64x64 f32 matmul on device whose input A is then retired through the engine's queue.
class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    TNRT_SKIP_WITHOUT_GPU();
    eng_ = std::make_unique<engine>(cuda::options{});
    net_.extents = {64, 64, 64};
    net_.label_names = {"a", "b", "c"};
    ha_ = host_tensor(dtype::f32, {64, 64});
    hb_ = host_tensor(dtype::f32, {64, 64});
    fill_random(ha_, 11, 0, -1.0, 1.0);
    fill_random(hb_, 11, 1, -1.0, 1.0);
    want_ = cpu::contract_step(ha_, la_, &hb_, lb_, ld_, net_.extents);
  }
  void TearDown() override {
    if (!eng_) return;
    for (auto k : {fault::create_event, fault::record_event, fault::query_event, fault::synchronize_event, fault::synchronize_stream, fault::allocate})
      eng_->runtime().inject(k, 0);
    eng_->synchronize();
    const auto r = eng_->stats().retirement;
    print_stats("teardown", r);
    EXPECT_EQ(r.in_flight, 0U) << "engine.synchronize() left retirements in flight";
    EXPECT_EQ(r.released + r.leaked + r.in_flight, r.deferred + r.immediate);
  }

  // Enqueues the matmul into fresh pool blocks; returns {a, b, d}.
  std::vector<void*> run_matmul() {
    void* a = gputest::upload(*eng_, ha_);
    void* b = gputest::upload(*eng_, hb_);
    void* d = eng_->pool().allocate(want_.bytes(), eng_->stream_handle());
    const labelled_layout la{&la_, {64, 1}}, lb{&lb_, {64, 1}}, ld{&ld_, {64, 1}};
    eng_->execute(lower_step(la, &lb, ld, net_.extents), dtype::f32, a, b, d);
    return {a, b, d};
  }
  void expect_result(void* d) {
    const host_tensor got = gputest::download(*eng_, d, dtype::f32, {64, 64});
    const double err = gputest::rel_error(got, want_);
    std::printf("[check] rel error %.3e\n", err);
    EXPECT_LE(err, 1e-4);
  }
  // A retired block comes back to the pool; overwrite whatever the pool hands out next of that size
  // so that a premature release would corrupt a still-pending read.
  void scribble(std::size_t bytes, int n = 4) {
    std::vector<void*> blocks;
    for (int i = 0; i < n; ++i) {
      blocks.push_back(eng_->pool().allocate(bytes, eng_->stream_handle()));
      ASSERT_EQ(cudaMemsetAsync(blocks.back(), 0xff, bytes, eng_->stream()), cudaSuccess);
    }
    for (void* p : blocks) eng_->pool().deallocate(p, eng_->stream_handle());
  }

  std::unique_ptr<engine> eng_;
  network net_;
  std::vector<label_t> la_{0, 1}, lb_{1, 2}, ld_{0, 2};
  host_tensor ha_, hb_, want_;
};

TEST_F(Faults, CreateEventFailureFallsBackToBarrier) {
  auto bufs = run_matmul();
  const auto r0 = eng_->stats().retirement;
  const auto syncs0 = eng_->runtime().counts().stream_syncs;
  eng_->runtime().inject(fault::create_event, 1);
  eng_->queue().retire(bufs[0], eng_->stream_handle());  // A: read by the pending matmul
  const auto r1 = eng_->stats().retirement;
  print_stats("after create_event fault", r1);
  EXPECT_EQ(r1.barrier_fallbacks, r0.barrier_fallbacks + 1);
  EXPECT_EQ(r1.immediate, r0.immediate + 1);
  EXPECT_EQ(r1.released, r0.released + 1);
  EXPECT_EQ(r1.leaked, r0.leaked);
  EXPECT_GT(eng_->runtime().counts().stream_syncs, syncs0) << "the fallback must be a stream barrier";
  EXPECT_FALSE(eng_->queue().holds(bufs[0]));
  scribble(ha_.bytes());
  expect_result(bufs[2]);
  eng_->pool().deallocate(bufs[1], eng_->stream_handle());
  eng_->pool().deallocate(bufs[2], eng_->stream_handle());
}

TEST_F(Faults, RecordEventFailureFallsBackToBarrier) {
  auto bufs = run_matmul();
  const auto r0 = eng_->stats().retirement;
  eng_->runtime().inject(fault::record_event, 1);
  eng_->queue().retire(bufs[1], eng_->stream_handle());  // B
  const auto r1 = eng_->stats().retirement;
  print_stats("after record_event fault", r1);
  EXPECT_EQ(r1.barrier_fallbacks, r0.barrier_fallbacks + 1);
  EXPECT_EQ(r1.released, r0.released + 1);
  EXPECT_EQ(r1.leaked, r0.leaked);
  scribble(hb_.bytes());
  expect_result(bufs[2]);
  eng_->pool().deallocate(bufs[0], eng_->stream_handle());
  eng_->pool().deallocate(bufs[2], eng_->stream_handle());
}

TEST_F(Faults, NoWitnessMeansLeakAndTheBlockIsNeverReused) {
  auto bufs = run_matmul();
  void* leaked = bufs[0];
  const std::size_t size = eng_->pool().size_of_block(leaked);
  const auto in_use0 = eng_->pool().stats().bytes_in_use;
  const auto r0 = eng_->stats().retirement;
  eng_->runtime().inject(fault::create_event, 1);
  eng_->runtime().inject(fault::synchronize_stream, 1);
  eng_->queue().retire(leaked, eng_->stream_handle());
  const auto r1 = eng_->stats().retirement;
  print_stats("after create_event + synchronize_stream faults", r1);
  EXPECT_EQ(r1.leaked, r0.leaked + 1);
  EXPECT_EQ(r1.released, r0.released);
  EXPECT_FALSE(eng_->queue().holds(leaked));
  eng_->runtime().inject(fault::synchronize_stream, 0);
  eng_->synchronize();
  expect_result(bufs[2]);
  // The leaked block still counts as in use and no allocation (same size, smaller, larger) overlaps it.
  EXPECT_EQ(eng_->pool().stats().bytes_in_use, in_use0);
  const auto* lo = static_cast<const unsigned char*>(leaked);
  const auto* hi = lo + size;
  std::vector<void*> got;
  for (std::size_t bytes : {size, size, size / 2, size / 4, size * 2, std::size_t{256}, size, size}) {
    void* p = eng_->pool().allocate(bytes, eng_->stream_handle());
    got.push_back(p);
    const auto* plo = static_cast<const unsigned char*>(p);
    const auto* phi = plo + bytes;
    EXPECT_FALSE(plo < hi && lo < phi) << "block " << p << " (" << bytes << " bytes) overlaps the leaked block " << leaked;
  }
  for (void* p : got) eng_->pool().deallocate(p, eng_->stream_handle());
  eng_->synchronize();
  EXPECT_EQ(eng_->pool().stats().bytes_in_use, in_use0);
  eng_->pool().deallocate(bufs[1], eng_->stream_handle());
  eng_->pool().deallocate(bufs[2], eng_->stream_handle());
}

TEST_F(Faults, FailedQueryKeepsTheEntryUntilLater) {
  auto bufs = run_matmul();
  const auto r0 = eng_->stats().retirement;
  eng_->runtime().inject(fault::query_event, 1000);
  eng_->queue().retire(bufs[0], eng_->stream_handle());
  (void)eng_->queue().drain();
  (void)eng_->queue().drain();
  const auto r1 = eng_->stats().retirement;
  print_stats("with query faults", r1);
  EXPECT_EQ(r1.deferred, r0.deferred + 1);
  EXPECT_GE(r1.in_flight, 1U) << "an entry whose query failed must stay queued";
  EXPECT_GE(r1.query_errors, r0.query_errors + 1);
  EXPECT_TRUE(eng_->queue().holds(bufs[0]));
  EXPECT_EQ(r1.released, r0.released);
  // Queries work again: once the stream is idle, a non-blocking drain releases it.
  eng_->runtime().inject(fault::query_event, 0);
  ASSERT_EQ(cudaStreamSynchronize(eng_->stream()), cudaSuccess);
  EXPECT_GE(eng_->queue().drain(), 1U);
  const auto r2 = eng_->stats().retirement;
  print_stats("after queries recover", r2);
  EXPECT_FALSE(eng_->queue().holds(bufs[0]));
  EXPECT_EQ(r2.in_flight, 0U);
  EXPECT_GE(r2.released, r0.released + 1);
  expect_result(bufs[2]);
  eng_->pool().deallocate(bufs[1], eng_->stream_handle());
  eng_->pool().deallocate(bufs[2], eng_->stream_handle());
}

TEST_F(Faults, FailedQueryThenSynchronizeReleases) {
  auto bufs = run_matmul();
  eng_->runtime().inject(fault::query_event, 1000);
  eng_->queue().retire(bufs[0], eng_->stream_handle());
  EXPECT_TRUE(eng_->queue().holds(bufs[0]));
  eng_->synchronize();  // blocking drain: event synchronization, no query
  EXPECT_FALSE(eng_->queue().holds(bufs[0]));
  EXPECT_EQ(eng_->stats().retirement.in_flight, 0U);
  expect_result(bufs[2]);
  eng_->pool().deallocate(bufs[1], eng_->stream_handle());
  eng_->pool().deallocate(bufs[2], eng_->stream_handle());
}

TEST_F(Faults, RefusedAllocationIsOutOfMemoryNamingTheRequest) {
  auto bufs = run_matmul();
  const std::size_t request = (std::size_t{3} << 30) + 12345;  // larger than anything cached
  eng_->runtime().inject(fault::allocate, 1000);
  try {
    void* p = eng_->pool().allocate(request, eng_->stream_handle());
    eng_->pool().deallocate(p, eng_->stream_handle());
    ADD_FAILURE() << "allocation succeeded despite injected driver failures";
  } catch (const out_of_memory& e) {
    std::printf("[oom] %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find(std::to_string(request)), std::string::npos) << e.what();
  }
  eng_->runtime().inject(fault::allocate, 0);
  // The pool still works, and so does the engine.
  void* p = eng_->pool().allocate(1 << 20, eng_->stream_handle());
  EXPECT_NE(p, nullptr);
  eng_->pool().deallocate(p, eng_->stream_handle());
  expect_result(bufs[2]);
  for (void* b : bufs) eng_->pool().deallocate(b, eng_->stream_handle());
}

TEST_F(Faults, ImpossibleAllocationIsOutOfMemoryNamingTheRequest) {
  const std::size_t request = std::size_t{1} << 50;  // 1 PiB: the driver refuses for real
  try {
    void* p = eng_->pool().allocate(request, eng_->stream_handle());
    eng_->pool().deallocate(p, eng_->stream_handle());
    ADD_FAILURE() << "a 1 PiB allocation succeeded";
  } catch (const out_of_memory& e) {
    std::printf("[oom] %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find(std::to_string(request)), std::string::npos) << e.what();
  }
  auto bufs = run_matmul();  // the CUDA error state was cleared: the engine still works
  expect_result(bufs[2]);
  for (void* b : bufs) eng_->pool().deallocate(b, eng_->stream_handle());
}

// The engine's own retirement path (shared workspace growth) under an event failure: still right.
TEST_F(Faults, EngineRetirementUnderEventFailureStaysCorrect) {
  // A 1024^3 matmul after the 64^3 one may grow the shared workspace, retiring the old buffer.
  network net;
  net.extents = {1024, 1024, 1024};
  net.label_names = {"a", "b", "c"};
  host_tensor a(dtype::f32, {1024, 1024}), b(dtype::f32, {1024, 1024});
  fill_random(a, 12, 0, -1.0, 1.0);
  fill_random(b, 12, 1, -1.0, 1.0);
  const host_tensor want = cpu::contract_step(a, la_, &b, lb_, ld_, net.extents);
  auto small = run_matmul();
  void* da = gputest::upload(*eng_, a);
  void* db = gputest::upload(*eng_, b);
  void* dd = eng_->pool().allocate(want.bytes(), eng_->stream_handle());
  const auto r0 = eng_->stats().retirement;
  eng_->runtime().inject(fault::create_event, 1000);
  const labelled_layout la{&la_, {1024, 1}}, lb{&lb_, {1024, 1}}, ld{&ld_, {1024, 1}};
  eng_->execute(lower_step(la, &lb, ld, net.extents), dtype::f32, da, db, dd);
  eng_->runtime().inject(fault::create_event, 0);
  const auto r1 = eng_->stats().retirement;
  print_stats("engine path with create_event faults", r1);
  EXPECT_EQ(r1.deferred, r0.deferred) << "no event could be created, yet an entry was queued";
  EXPECT_EQ(r1.barrier_fallbacks - r0.barrier_fallbacks, r1.immediate - r0.immediate);
  const host_tensor got = gputest::download(*eng_, dd, dtype::f32, {1024, 1024});
  const double err = gputest::rel_error(got, want);
  std::printf("[check] 1024^3: rel error %.3e\n", err);
  EXPECT_LE(err, gputest::tolerance(dtype::f32, 1024));
  expect_result(small[2]);
  for (void* p : {da, db, dd}) eng_->pool().deallocate(p, eng_->stream_handle());
  for (void* p : small) eng_->pool().deallocate(p, eng_->stream_handle());
}

}  // namespace
}  // namespace tnrt
