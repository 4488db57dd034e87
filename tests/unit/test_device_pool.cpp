// The caching pool against the fake runtime: sizing policy, stream ownership, release, OOM recovery.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <typeinfo>

#include "support/fake_runtime.hpp"
#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/errors.hpp"

namespace {

using tnrt::device::caching_pool;
using tnrt::device::retirement_queue;
using tnrt::test::allocate_checked;
using tnrt::test::call_kind;
using tnrt::test::fake_runtime;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

const auto s0 = fake_runtime::stream(0);
const auto s1 = fake_runtime::stream(1);

TEST(device_pool, rounds_to_256_and_aligns) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 1, s0);
  void* z = allocate_checked(pool, rt, 0, s0);
  void* b = allocate_checked(pool, rt, 300, s0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 256, 0u);
  EXPECT_NE(a, z);  // bytes == 0 still gives a unique pointer
  EXPECT_EQ(pool.size_of_block(a), 256u);
  EXPECT_EQ(pool.size_of_block(z), 256u);
  EXPECT_EQ(pool.size_of_block(b), 512u);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{256}, std::size_t{257}, std::size_t{300}}) {
    void* c = allocate_checked(pool, rt, n, s0);
    EXPECT_EQ(pool.size_of_block(c), caching_pool::block_bytes(n)) << n << " bytes";
    pool.deallocate(c, s0);
  }
  const auto st = pool.stats();
  EXPECT_EQ(st.bytes_in_use, 1024u);
  EXPECT_EQ(st.driver_allocations, 1u);  // one 2 MiB small segment
  EXPECT_EQ(st.bytes_cached, 2 * MiB - 1024);
  EXPECT_EQ(rt.driver_bytes(), 2 * MiB);
  pool.deallocate(a, s0);
  pool.deallocate(z, s0);
  pool.deallocate(b, s0);
}

TEST(device_pool, large_requests_get_their_own_segment_rounded_to_2_MiB) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 3 * MiB, s0);
  EXPECT_EQ(rt.driver_bytes(), 4 * MiB);
  // Remainder 1 MiB >= the large split threshold: split off and reusable by another large request.
  void* b = allocate_checked(pool, rt, MiB, s0);
  EXPECT_EQ(pool.stats().driver_allocations, 1u);
  EXPECT_EQ(static_cast<char*>(b), static_cast<char*>(a) + 3 * MiB);
  // A small request never takes memory from a large segment.
  void* c = allocate_checked(pool, rt, 4 * KiB, s0);
  EXPECT_EQ(pool.stats().driver_allocations, 2u);
  pool.deallocate(a, s0);
  pool.deallocate(b, s0);
  pool.deallocate(c, s0);
}

TEST(device_pool, best_fit_split_and_coalesce) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 64 * KiB, s0);
  void* b = allocate_checked(pool, rt, 16 * KiB, s0);
  void* c = allocate_checked(pool, rt, 64 * KiB, s0);
  pool.deallocate(b, s0);
  // Best fit: a 16 KiB request takes the 16 KiB hole, not the big tail.
  void* d = allocate_checked(pool, rt, 16 * KiB, s0);
  EXPECT_EQ(d, b);
  EXPECT_EQ(pool.stats().reuses, 3u);  // b, c and d were carved from cached memory
  pool.deallocate(a, s0);
  pool.deallocate(d, s0);
  pool.deallocate(c, s0);
  // Everything coalesced back into one 2 MiB block: a request for it fits without the driver.
  void* whole = allocate_checked(pool, rt, 1 * MiB - 256, s0);
  EXPECT_EQ(whole, a);
  EXPECT_EQ(pool.stats().driver_allocations, 1u);
  pool.deallocate(whole, s0);
  EXPECT_EQ(pool.release_cached(), 2 * MiB);
  EXPECT_EQ(rt.driver_bytes(), 0u);
  EXPECT_EQ(pool.stats().driver_frees, 1u);
}

TEST(device_pool, unknown_and_double_frees_throw) {
  fake_runtime rt;
  caching_pool pool(rt);
  int local = 0;
  EXPECT_THROW(pool.deallocate(&local, s0), tnrt::internal_error);
  void* a = pool.allocate(100, s0);
  pool.deallocate(a, s0);
  EXPECT_THROW(pool.deallocate(a, s0), tnrt::internal_error);
  EXPECT_THROW(pool.deallocate_unowned(a), tnrt::internal_error);
  EXPECT_THROW((void)pool.size_of_block(a), tnrt::internal_error);
}

TEST(device_pool, stream_ordered_free_is_reused_at_once_on_the_same_stream) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(a, 4 * KiB, s0);
  pool.deallocate(a, s0);
  void* b = allocate_checked(pool, rt, 4 * KiB, s0);  // pending use on s0 is fine for s0
  EXPECT_EQ(b, a);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_EQ(rt.calls(call_kind::create_event), 0u);
  pool.deallocate(b, s0);
}

TEST(device_pool, another_stream_takes_an_owned_block_only_after_an_event_wait) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, MiB + 512 * KiB, s0);
  rt.use(a, pool.size_of_block(a), s0);
  pool.deallocate(a, s0);
  void* b = allocate_checked(pool, rt, MiB + 512 * KiB, s1);  // the fake checks the ordering
  EXPECT_EQ(b, a);
  EXPECT_EQ(rt.calls(call_kind::stream_wait_event), 1u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  pool.deallocate(b, s1);
}

TEST(device_pool, failed_event_handoff_goes_to_the_driver_instead) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(a, 4 * KiB, s0);
  pool.deallocate(a, s0);
  rt.fail(call_kind::record_event);
  void* b = allocate_checked(pool, rt, 4 * KiB, s1);
  EXPECT_NE(b, a);
  EXPECT_EQ(pool.stats().driver_allocations, 2u);
  EXPECT_EQ(rt.live_events(), 0u);
  pool.deallocate(b, s1);
}

TEST(device_pool, capturing_owner_is_not_recorded_on) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(a, 4 * KiB, s0);
  pool.deallocate(a, s0);
  rt.set_capturing(s0, true);
  void* b = allocate_checked(pool, rt, 4 * KiB, s1);
  EXPECT_NE(b, a);
  EXPECT_EQ(rt.calls(call_kind::record_event), 0u);
  rt.set_capturing(s0, false);
}

TEST(device_pool, unowned_free_is_reusable_on_any_stream) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(a, 4 * KiB, s0);
  rt.complete(s0);
  pool.deallocate_unowned(a);
  void* b = allocate_checked(pool, rt, 4 * KiB, s1);
  EXPECT_EQ(b, a);
  EXPECT_EQ(rt.calls(call_kind::stream_wait_event), 0u);
  pool.deallocate(b, s1);
}

TEST(device_pool, release_cached_synchronizes_owner_streams_and_keeps_live_segments) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 3 * MiB, s0);
  void* b = allocate_checked(pool, rt, 3 * MiB, s1);
  rt.use(a, 3 * MiB, s0);
  pool.deallocate(a, s0);
  EXPECT_EQ(pool.release_cached(), 4 * MiB);  // a's segment; b's is live
  EXPECT_EQ(rt.stream_syncs_on(s0), 1u);
  EXPECT_TRUE(rt.violations().empty());  // the fake checks no pending use at driver free
  EXPECT_EQ(pool.stats().bytes_cached, 1 * MiB);  // b's split-off remainder stays with its segment
  EXPECT_EQ(pool.stats().bytes_in_use, 3 * MiB);
  pool.deallocate(b, s1);
}

TEST(device_pool, release_cached_keeps_segments_whose_stream_cannot_be_synchronized) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 3 * MiB, s0);
  rt.use(a, 3 * MiB, s0);
  pool.deallocate(a, s0);
  rt.fail(call_kind::synchronize_stream);
  EXPECT_EQ(pool.release_cached(), 0u);
  EXPECT_EQ(rt.driver_bytes(), 4 * MiB);
  rt.set_capturing(s0, true);
  EXPECT_EQ(pool.release_cached(), 0u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 1u);  // not called during capture
  rt.set_capturing(s0, false);
  EXPECT_EQ(pool.release_cached(), 4 * MiB);
}

TEST(device_pool, stats_track_high_water_marks) {
  fake_runtime rt;
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 3 * MiB, s0);
  void* b = allocate_checked(pool, rt, 5 * MiB, s0);
  pool.deallocate(a, s0);
  pool.deallocate(b, s0);
  void* c = allocate_checked(pool, rt, 256, s0);
  const auto st = pool.stats();
  EXPECT_EQ(st.high_water, 8 * MiB);
  EXPECT_EQ(st.reserved_high_water, 12 * MiB);
  EXPECT_EQ(st.allocations, 3u);
  EXPECT_EQ(st.reuses, 0u);
  EXPECT_EQ(st.bytes_in_use, 256u);
  EXPECT_EQ(st.bytes_cached, 12 * MiB - 256);
  pool.deallocate(c, s0);
}

TEST(device_pool, oom_drains_the_queue_releases_cache_and_retries) {
  fake_runtime rt;
  rt.set_memory_limit(8 * MiB);
  caching_pool pool(rt);
  retirement_queue queue(rt, [&](void* p) {
    rt.check_idle(p, pool.size_of_block(p), "queue release");
    pool.deallocate_unowned(p);
  });
  pool.set_retirement_queue(&queue);
  void* a = allocate_checked(pool, rt, 4 * MiB, s0);  // 4 MiB segment
  void* b = allocate_checked(pool, rt, 2 * MiB, s1);  // 2 MiB segment
  rt.use(a, 4 * MiB, s0);
  queue.retire(a, s0);  // pending
  rt.use(b, 2 * MiB, s1);
  pool.deallocate(b, s1);  // cached, owned by s1
  // 6 MiB: 2 MiB left in the driver. Drain (a comes back), release both segments, retry.
  void* c = allocate_checked(pool, rt, 6 * MiB, s0);
  const auto st = pool.stats();
  EXPECT_EQ(st.oom_recoveries, 1u);
  EXPECT_EQ(st.driver_frees, 2u);
  EXPECT_EQ(queue.stats().released, 1u);
  EXPECT_EQ(queue.stats().event_syncs, 1u);
  EXPECT_EQ(rt.driver_bytes(), 6 * MiB);
  pool.deallocate(c, s0);
}

TEST(device_pool, oom_reuses_a_drained_block_without_the_driver) {
  fake_runtime rt;
  rt.set_memory_limit(4 * MiB);
  caching_pool pool(rt);
  retirement_queue queue(rt, [&](void* p) { pool.deallocate_unowned(p); });
  pool.set_retirement_queue(&queue);
  void* a = allocate_checked(pool, rt, 4 * MiB, s0);
  rt.use(a, 4 * MiB, s0);
  queue.retire(a, s0);
  void* b = allocate_checked(pool, rt, 4 * MiB, s1);
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool.stats().oom_recoveries, 1u);
  EXPECT_EQ(pool.stats().driver_allocations, 1u);
  pool.deallocate(b, s1);
}

TEST(device_pool, oom_throws_out_of_memory_naming_request_in_use_and_cached) {
  fake_runtime rt;
  rt.set_memory_limit(6 * MiB);
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 3 * MiB, s0);  // 4 MiB segment, 1 MiB split off and cached
  try {
    (void)pool.allocate(5 * MiB, s0);
    FAIL() << "expected out_of_memory";
  } catch (const tnrt::out_of_memory& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(std::to_string(5 * MiB) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(3 * MiB) + " bytes in use"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(1 * MiB) + " bytes cached"), std::string::npos) << message;
    EXPECT_EQ(typeid(e), typeid(tnrt::out_of_memory)) << "a subclass, not out_of_memory itself";
  }
  EXPECT_EQ(pool.stats().oom_recoveries, 0u);
  pool.deallocate(a, s0);
}

TEST(device_pool, injected_allocate_failure_is_recovered_by_the_retry) {
  fake_runtime rt;
  caching_pool pool(rt);
  rt.fail(call_kind::allocate);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  EXPECT_EQ(pool.stats().oom_recoveries, 1u);
  rt.fail(call_kind::allocate, 2);
  EXPECT_THROW((void)pool.allocate(8 * MiB, s0), tnrt::out_of_memory);
  pool.deallocate(a, s0);
}

TEST(device_pool, destructor_releases_cached_memory) {
  fake_runtime rt;
  {
    caching_pool pool(rt);
    void* a = allocate_checked(pool, rt, 4 * KiB, s0);
    void* b = allocate_checked(pool, rt, 4 * MiB, s1);
    rt.use(b, 4 * MiB, s1);
    pool.deallocate(a, s0);
    pool.deallocate(b, s1);
  }
  EXPECT_EQ(rt.driver_bytes(), 0u);
  EXPECT_TRUE(rt.violations().empty());
}

TEST(device_pool, a_block_leaked_by_the_queue_is_never_handed_out_again) {
  fake_runtime rt;
  caching_pool pool(rt);
  retirement_queue queue(rt, [&](void* p) {
    rt.check_idle(p, pool.size_of_block(p), "queue release");
    pool.deallocate_unowned(p);
  });
  pool.set_retirement_queue(&queue);
  void* leaked = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(leaked, 4 * KiB, s0);
  rt.fail(call_kind::record_event);
  rt.fail(call_kind::synchronize_stream);
  queue.retire(leaked, s0);  // no event, no barrier: leak rather than race
  ASSERT_EQ(queue.stats().leaked, 1u);
  rt.complete_all();
  queue.drain_all();
  (void)pool.release_cached();
  for (int i = 0; i < 600; ++i) {  // enough 4 KiB blocks to exhaust the segment several times
    void* p = allocate_checked(pool, rt, 4 * KiB, i % 2 == 0 ? s0 : s1);
    EXPECT_NE(p, leaked);
    if (i % 3 == 0) pool.deallocate(p, s0);
  }
  EXPECT_GE(pool.stats().bytes_in_use, 4 * KiB);
  EXPECT_THROW(pool.deallocate_unowned(static_cast<char*>(leaked) + 256), tnrt::internal_error);
}

TEST(device_pool, the_fake_detects_an_unsafe_handout) {
  // The detector itself: a caller that lies (unowned free while work is pending) is caught.
  fake_runtime rt;
  rt.set_fail_on_violation(false);
  caching_pool pool(rt);
  void* a = allocate_checked(pool, rt, 4 * KiB, s0);
  rt.use(a, 4 * KiB, s0);
  pool.deallocate_unowned(a);
  void* b = allocate_checked(pool, rt, 4 * KiB, s1);
  EXPECT_EQ(b, a);
  ASSERT_EQ(rt.violations().size(), 1u);
  EXPECT_NE(rt.violations()[0].find("still uses it"), std::string::npos);
  rt.complete_all();
  pool.deallocate(b, s1);
}

}  // namespace
