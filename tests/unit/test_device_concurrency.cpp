// Several threads retiring, acquiring, freeing and draining at once over one pool, queue and
// workspace (run under TSan in CI). The fake's checks still apply: nothing is handed out or released
// while pending work uses it, and the counters balance at the end.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "support/fake_runtime.hpp"
#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"
#include "tnrt/errors.hpp"

namespace {

using tnrt::device::caching_pool;
using tnrt::device::retirement_queue;
using tnrt::device::shared_workspace;
using tnrt::test::allocate_checked;
using tnrt::test::call_kind;
using tnrt::test::fake_runtime;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

TEST(device_concurrency, threads_retire_acquire_and_drain_at_once) {
  constexpr std::size_t workers = 4;
  constexpr int iterations = 1500;
  fake_runtime rt;
  rt.set_memory_limit(64 * MiB);
  caching_pool pool(rt);
  retirement_queue queue(rt, [&](void* p) {
    rt.check_idle(p, pool.size_of_block(p), "queue release");
    pool.deallocate_unowned(p);
  }, 8);
  pool.set_retirement_queue(&queue);
  {
    shared_workspace ws(pool, queue, 16 * MiB, workers);
    std::atomic<bool> stop{false};
    // The backend enqueues under its plan-cache mutex; set_cap/clear must not fall between an
    // acquire and the enqueue of the work that uses the lease (shared_workspace.hpp).
    std::mutex enqueue_mutex;
    std::atomic<std::uint64_t> ooms{0};

    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        std::mt19937_64 rng(1000 + w);
        const auto stream = fake_runtime::stream(w);
        std::vector<void*> mine;
        for (int i = 0; i < iterations; ++i) {
          try {
            switch (rng() % 6) {
              case 0:
              case 1: {
                const std::size_t bytes = rng() % 4 == 0 ? MiB + rng() % (2 * MiB) : rng() % (64 * KiB);
                void* p = allocate_checked(pool, rt, bytes, stream);
                rt.use(p, pool.size_of_block(p), stream);
                mine.push_back(p);
                break;
              }
              case 2:
                if (!mine.empty()) {
                  queue.retire(mine.back(), stream);
                  mine.pop_back();
                }
                break;
              case 3:
                if (!mine.empty()) {
                  pool.deallocate(mine.back(), stream);
                  mine.pop_back();
                }
                break;
              case 4: {
                std::lock_guard lock(enqueue_mutex);
                const auto l = ws.acquire(w, 1 + rng() % (3 * MiB), stream);
                rt.check_handout(l.ptr, l.bytes, stream, "workspace acquire");
                rt.use(l.ptr, l.bytes, stream);
                ws.finish(l, stream);
                break;
              }
              default:
                (void)queue.drain();
                break;
            }
          } catch (const tnrt::out_of_memory&) {
            ooms.fetch_add(1, std::memory_order_relaxed);
          }
        }
        for (void* p : mine) queue.retire(p, stream);
      });
    }
    // The "GPU": completes work on random streams while the workers run; also a second host thread
    // doing blocking drains, cap changes and cache releases.
    std::thread gpu([&] {
      std::mt19937_64 rng(7);
      while (!stop.load(std::memory_order_acquire)) {
        rt.advance(fake_runtime::stream(rng() % workers), 1 + rng() % 8);
        std::this_thread::yield();
      }
    });
    std::thread housekeeping([&] {
      std::mt19937_64 rng(11);
      while (!stop.load(std::memory_order_acquire)) {
        switch (rng() % 4) {
          case 0: queue.drain_all(); break;
          case 1: {
            std::lock_guard lock(enqueue_mutex);
            ws.set_cap((rng() % 3) * 8 * MiB);
            break;
          }
          case 2: (void)pool.release_cached(); break;
          default: (void)queue.stats(); (void)pool.stats(); (void)ws.stats(); break;
        }
        std::this_thread::yield();
      }
    });
    for (auto& t : threads) t.join();
    stop.store(true, std::memory_order_release);
    gpu.join();
    housekeeping.join();
    ws.clear();
  }
  queue.drain_all();
  const auto q = queue.stats();
  EXPECT_EQ(q.in_flight, 0u);
  EXPECT_EQ(q.leaked, 0u);  // no failures were injected
  EXPECT_EQ(q.released, q.deferred + q.immediate);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  EXPECT_TRUE(rt.violations().empty());
  (void)pool.release_cached();
  EXPECT_EQ(rt.driver_bytes(), 0u);
}

TEST(device_concurrency, concurrent_failures_never_release_unwitnessed_blocks) {
  fake_runtime rt;
  caching_pool pool(rt);
  retirement_queue queue(rt, [&](void* p) {
    rt.check_idle(p, pool.size_of_block(p), "queue release");
    pool.deallocate_unowned(p);
  }, 4);
  rt.fail(call_kind::query_event, 50);
  rt.fail(call_kind::record_event, 20);
  rt.fail(call_kind::synchronize_event, 10);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < 3; ++w) {
    threads.emplace_back([&, w] {
      const auto stream = fake_runtime::stream(w);
      for (int i = 0; i < 400; ++i) {
        void* p = allocate_checked(pool, rt, 4 * KiB, stream);
        rt.use(p, 4 * KiB, stream);
        queue.retire(p, stream);
        if (i % 7 == 0) rt.advance(stream, 3);
      }
    });
  }
  for (auto& t : threads) t.join();
  queue.drain_all();
  const auto q = queue.stats();
  EXPECT_EQ(q.in_flight, 0u);
  EXPECT_EQ(q.released + q.leaked, q.deferred + q.immediate);
  EXPECT_EQ(q.deferred + q.immediate, 1200u);
  EXPECT_EQ(rt.live_events(), 0u);
}

}  // namespace
