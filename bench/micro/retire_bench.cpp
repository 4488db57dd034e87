// Cost per call, on the real CUDA runtime, of:
//   - retirement_queue::retire (deferred: create + record an event, non-blocking drain inside),
//   - retirement_queue::retire in barrier mode (a stream synchronize per retire: the old cure),
//   - a non-blocking drain (retirement_queue::drain) with events pending,
//   - a stream synchronize (cuda_runtime::synchronize_stream) right after enqueueing work,
// each with a cudaMemsetAsync of a small buffer enqueued before the call so that events are
// pending. Median and 90th percentile over many iterations; prints a short table.
//
//   tnrt_retire_bench [iterations=20000] [memset_bytes=65536]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/cuda_runtime.hpp"
#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct summary {
  double median_us = 0, p90_us = 0, max_us = 0;
};

summary summarize(std::vector<double> us) {
  summary s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  s.median_us = us[us.size() / 2];
  s.p90_us = us[us.size() * 9 / 10];
  s.max_us = us.back();
  return s;
}

double elapsed_us(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "retire_bench: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct bench_env {
  tnrt::cuda::cuda_runtime* rt;
  cudaStream_t stream;
  void* scratch;
  std::size_t memset_bytes;
  void pending_work() const { (void)cudaMemsetAsync(scratch, 0x5a, memset_bytes, stream); }
};

// retire() per call in `mode`; each iteration retires one fresh 256-byte pool block.
summary bench_retire(const bench_env& env, tnrt::device::retire_mode mode, int iterations, tnrt::device::retirement_stats* out) {
  tnrt::device::caching_pool pool(*env.rt);
  tnrt::device::retirement_queue queue(*env.rt, [&pool](void* b) { pool.deallocate_unowned(b); },
                                       tnrt::device::retirement_queue::default_capacity, mode);
  pool.set_retirement_queue(&queue);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    void* block = pool.allocate(256, env.stream);
    env.pending_work();
    const auto t0 = clock_type::now();
    queue.retire(block, env.stream);
    const auto t1 = clock_type::now();
    us.push_back(elapsed_us(t0, t1));
  }
  queue.drain_all();
  *out = queue.stats();
  pool.set_retirement_queue(nullptr);
  return summarize(std::move(us));
}

// drain() per call with a few entries pending behind fresh work.
summary bench_drain(const bench_env& env, int iterations, std::size_t* released) {
  tnrt::device::caching_pool pool(*env.rt);
  tnrt::device::retirement_queue queue(*env.rt, [&pool](void* b) { pool.deallocate_unowned(b); });
  pool.set_retirement_queue(&queue);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  *released = 0;
  for (int i = 0; i < iterations; ++i) {
    env.pending_work();
    queue.retire(pool.allocate(256, env.stream), env.stream);
    const auto t0 = clock_type::now();
    *released += queue.drain();
    const auto t1 = clock_type::now();
    us.push_back(elapsed_us(t0, t1));
  }
  queue.drain_all();
  pool.set_retirement_queue(nullptr);
  return summarize(std::move(us));
}

summary bench_stream_sync(const bench_env& env, int iterations) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    env.pending_work();
    const auto t0 = clock_type::now();
    (void)env.rt->synchronize_stream(env.stream);
    const auto t1 = clock_type::now();
    us.push_back(elapsed_us(t0, t1));
  }
  return summarize(std::move(us));
}

summary bench_enqueue_only(const bench_env& env, int iterations) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = clock_type::now();
    env.pending_work();
    const auto t1 = clock_type::now();
    us.push_back(elapsed_us(t0, t1));
    if (i % 64 == 63) (void)cudaStreamSynchronize(env.stream);
  }
  (void)cudaStreamSynchronize(env.stream);
  return summarize(std::move(us));
}

void row(const char* what, const summary& s, const std::string& note = {}) {
  std::printf("%-40s %10.2f %10.2f %10.2f  %s\n", what, s.median_us, s.p90_us, s.max_us, note.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
  const std::size_t memset_bytes = argc > 2 ? static_cast<std::size_t>(std::max(1L, std::atol(argv[2]))) : std::size_t{65536};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    std::printf("retire_bench: no usable CUDA device; nothing measured\n");
    return 0;
  }
  if (!check(cudaSetDevice(0), "cudaSetDevice")) return 1;
  cudaDeviceProp prop{};
  (void)cudaGetDeviceProperties(&prop, 0);
  tnrt::cuda::cuda_runtime rt(0);
  cudaStream_t stream = nullptr;
  if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")) return 1;
  void* scratch = nullptr;
  if (!check(cudaMalloc(&scratch, memset_bytes), "cudaMalloc")) return 1;
  const bench_env env{&rt, stream, scratch, memset_bytes};

  // Warm-up: first-call costs (context, event pools) out of the way.
  {
    tnrt::device::retirement_stats ignored;
    (void)bench_retire(env, tnrt::device::retire_mode::deferred, 200, &ignored);
    (void)bench_stream_sync(env, 200);
  }

  tnrt::device::retirement_stats deferred_stats, barrier_stats;
  const summary enqueue = bench_enqueue_only(env, iterations);
  const summary retire_deferred = bench_retire(env, tnrt::device::retire_mode::deferred, iterations, &deferred_stats);
  const summary retire_barrier = bench_retire(env, tnrt::device::retire_mode::barrier, iterations, &barrier_stats);
  std::size_t released = 0;
  const summary drain = bench_drain(env, iterations, &released);
  const summary sync = bench_stream_sync(env, iterations);

  std::printf("retire_bench on %s: %d iterations, cudaMemsetAsync of %zu bytes before each call\n", prop.name, iterations, memset_bytes);
  std::printf("%-40s %10s %10s %10s\n", "operation (host time per call)", "median us", "p90 us", "max us");
  row("cudaMemsetAsync (the pending work)", enqueue);
  row("retire, deferred (event + queue)", retire_deferred,
      "capacity waits " + std::to_string(deferred_stats.capacity_waits) + ", max in flight " + std::to_string(deferred_stats.max_in_flight));
  row("retire, barrier mode (stream sync)", retire_barrier, "stream syncs " + std::to_string(barrier_stats.stream_syncs));
  row("drain, non-blocking", drain, "released " + std::to_string(released) + " during timed drains");
  row("synchronize_stream", sync);

  (void)cudaFree(scratch);
  (void)cudaStreamDestroy(stream);
  return 0;
}
