// The retirement queue against the fake runtime: deferral, every drain point, every fallback, capture.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "support/fake_runtime.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/errors.hpp"

namespace {

using tnrt::device::retire_mode;
using tnrt::device::retirement_queue;
using tnrt::device::retirement_stats;
using tnrt::test::call_kind;
using tnrt::test::fake_runtime;

constexpr std::size_t block_bytes = 4096;

void expect_identity(const retirement_stats& s) {
  EXPECT_EQ(s.released + s.leaked + s.in_flight, s.deferred + s.immediate);
}

// Blocks are plain host buffers here; the pool is not involved. The release callback checks with
// the fake that no pending work still touches the block.
struct queue_fixture : ::testing::Test {
  fake_runtime rt;
  std::vector<std::vector<char>> storage = std::vector<std::vector<char>>(64, std::vector<char>(block_bytes));
  std::vector<void*> released;
  retirement_queue::release_fn release = [this](void* p) {
    rt.check_idle(p, block_bytes, "queue release");
    released.push_back(p);
  };
  void* block(std::size_t i) { return storage[i].data(); }
  // A kernel on `s` uses block i, then the block is retired on `s`.
  void use_and_retire(retirement_queue& q, std::size_t i, tnrt::device::stream_handle s) {
    rt.use(block(i), block_bytes, s);
    q.retire(block(i), s);
  }
};

const auto s0 = fake_runtime::stream(0);
const auto s1 = fake_runtime::stream(1);
const auto s2 = fake_runtime::stream(2);

TEST_F(queue_fixture, retire_defers_until_the_event_completes_without_any_barrier) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  EXPECT_TRUE(q.holds(block(0)));
  EXPECT_EQ(q.drain(), 0u);
  EXPECT_TRUE(released.empty());
  rt.complete(s0);
  EXPECT_EQ(q.drain(), 1u);
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  EXPECT_FALSE(q.holds(block(0)));
  const auto st = q.stats();
  EXPECT_EQ(st.deferred, 1u);
  EXPECT_EQ(st.released, 1u);
  EXPECT_EQ(st.in_flight, 0u);
  EXPECT_EQ(st.max_in_flight, 1u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_event), 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, non_blocking_drain_queries_every_entry_not_only_the_head) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);  // head: stays pending
  use_and_retire(q, 1, s1);
  use_and_retire(q, 2, s1);
  rt.complete(s1);
  EXPECT_EQ(q.drain(), 2u);
  EXPECT_EQ(std::set<void*>(released.begin(), released.end()), (std::set<void*>{block(1), block(2)}));
  EXPECT_TRUE(q.holds(block(0)));
  EXPECT_EQ(q.stats().in_flight, 1u);
}

TEST_F(queue_fixture, retire_is_a_drain_point) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  rt.complete(s0);
  use_and_retire(q, 1, s0);  // drains block 0 before queueing block 1
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  EXPECT_EQ(q.stats().in_flight, 1u);
}

TEST_F(queue_fixture, drain_all_waits_per_event_oldest_first_and_leaves_later_work_alone) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  use_and_retire(q, 1, s0);
  const auto later = rt.enqueue(s0);  // work after the last retirement
  q.drain_all();
  EXPECT_EQ(released, (std::vector<void*>{block(0), block(1)}));
  EXPECT_EQ(rt.calls(call_kind::synchronize_event), 2u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_LT(rt.completed(s0), later);  // per event, not a stream barrier
  const auto st = q.stats();
  EXPECT_EQ(st.event_syncs, 2u);
  EXPECT_EQ(st.in_flight, 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, destructor_drains_everything) {
  {
    retirement_queue q(rt, release);
    use_and_retire(q, 0, s0);
    use_and_retire(q, 1, s1);
  }
  EXPECT_EQ(released.size(), 2u);
  EXPECT_EQ(rt.live_events(), 0u);
}

TEST_F(queue_fixture, at_capacity_the_oldest_entry_is_waited_on) {
  retirement_queue q(rt, release, 2);
  use_and_retire(q, 0, s0);
  use_and_retire(q, 1, s1);
  use_and_retire(q, 2, s2);
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  const auto st = q.stats();
  EXPECT_EQ(st.in_flight, 2u);
  EXPECT_EQ(st.max_in_flight, 2u);
  EXPECT_EQ(st.capacity_waits, 1u);
  EXPECT_EQ(st.barrier_fallbacks, 1u);
  EXPECT_EQ(st.event_syncs, 1u);
  EXPECT_EQ(rt.event_syncs_on(s0), 1u);
  EXPECT_EQ(rt.event_syncs_on(s1), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, shrinking_capacity_waits_on_the_oldest_entries) {
  retirement_queue q(rt, release, 4);
  for (std::size_t i = 0; i < 4; ++i) use_and_retire(q, i, s0);
  q.set_capacity(1);
  EXPECT_EQ(q.capacity(), 1u);
  EXPECT_EQ(released, (std::vector<void*>{block(0), block(1), block(2)}));
  EXPECT_EQ(q.stats().in_flight, 1u);
  EXPECT_THROW(q.set_capacity(0), tnrt::internal_error);
  EXPECT_THROW(retirement_queue(rt, release, 0), tnrt::internal_error);
}

TEST_F(queue_fixture, event_create_failure_falls_back_to_a_stream_barrier) {
  retirement_queue q(rt, release);
  rt.fail(call_kind::create_event);
  use_and_retire(q, 0, s0);
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  const auto st = q.stats();
  EXPECT_EQ(st.immediate, 1u);
  EXPECT_EQ(st.barrier_fallbacks, 1u);
  EXPECT_EQ(st.stream_syncs, 1u);
  EXPECT_EQ(st.deferred, 0u);
  EXPECT_EQ(rt.stream_syncs_on(s0), 1u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, event_record_failure_destroys_the_event_and_falls_back_to_a_stream_barrier) {
  retirement_queue q(rt, release);
  rt.fail(call_kind::record_event);
  use_and_retire(q, 0, s0);
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  EXPECT_EQ(rt.live_events(), 0u);
  EXPECT_EQ(q.stats().immediate, 1u);
  expect_identity(q.stats());
}

TEST_F(queue_fixture, record_failure_then_stream_sync_failure_leaks_the_block) {
  retirement_queue q(rt, release);
  rt.fail(call_kind::record_event);
  rt.fail(call_kind::synchronize_stream);
  use_and_retire(q, 0, s0);
  EXPECT_TRUE(released.empty());
  EXPECT_FALSE(q.holds(block(0)));
  const auto st = q.stats();
  EXPECT_EQ(st.leaked, 1u);
  EXPECT_EQ(st.immediate, 1u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
  rt.complete_all();
  q.drain_all();
  EXPECT_TRUE(released.empty());  // a leaked block never comes back
}

TEST_F(queue_fixture, failed_query_keeps_the_entry_and_a_later_query_releases_it) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  rt.complete(s0);
  rt.fail(call_kind::query_event);
  EXPECT_EQ(q.drain(), 0u);
  EXPECT_TRUE(q.holds(block(0)));
  EXPECT_EQ(q.stats().query_errors, 1u);
  EXPECT_EQ(q.drain(), 1u);
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  expect_identity(q.stats());
}

TEST_F(queue_fixture, event_sync_failure_in_blocking_drain_falls_back_to_stream_sync) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  rt.fail(call_kind::synchronize_event);
  q.drain_all();
  EXPECT_EQ(released, std::vector<void*>{block(0)});
  const auto st = q.stats();
  EXPECT_EQ(st.event_syncs, 1u);
  EXPECT_EQ(st.stream_syncs, 1u);
  EXPECT_EQ(st.leaked, 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, event_sync_and_stream_sync_failure_leaks_and_destroys_the_event) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  rt.fail(call_kind::synchronize_event);
  rt.fail(call_kind::synchronize_stream);
  q.drain_all();
  EXPECT_TRUE(released.empty());
  const auto st = q.stats();
  EXPECT_EQ(st.leaked, 1u);
  EXPECT_EQ(st.in_flight, 0u);
  EXPECT_EQ(rt.live_events(), 0u);
  expect_identity(st);
}

TEST_F(queue_fixture, capturing_stream_is_never_polled) {
  retirement_queue q(rt, release);
  use_and_retire(q, 0, s0);
  rt.set_capturing(s0, true);
  rt.reset_counters();
  use_and_retire(q, 1, s0);  // retire during capture: record, no drain
  use_and_retire(q, 2, s1);  // another stream's retire drains, skipping s0's entries
  EXPECT_EQ(q.drain(), 0u);
  q.drain_all();  // s0's entries stay: nothing can be waited on during capture
  EXPECT_EQ(rt.queries_on(s0), 0u);
  EXPECT_EQ(rt.event_syncs_on(s0), 0u);
  EXPECT_EQ(rt.stream_syncs_on(s0), 0u);
  EXPECT_EQ(rt.calls(call_kind::record_event), 2u);
  EXPECT_TRUE(q.holds(block(0)));
  EXPECT_TRUE(q.holds(block(1)));
  EXPECT_EQ(released, std::vector<void*>{block(2)});
  rt.set_capturing(s0, false);
  rt.complete(s0);
  EXPECT_EQ(q.drain(), 2u);
  EXPECT_TRUE(rt.violations().empty());
  expect_identity(q.stats());
}

TEST_F(queue_fixture, retire_during_capture_does_not_drain_and_record_failure_leaks_instead_of_syncing) {
  retirement_queue q(rt, release);
  rt.set_capturing(s0, true);
  rt.fail(call_kind::record_event);
  use_and_retire(q, 0, s0);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_EQ(q.stats().leaked, 1u);
  EXPECT_EQ(rt.calls(call_kind::query_event), 0u);
}

TEST_F(queue_fixture, capacity_during_capture_waits_on_a_non_capturing_entry_or_overflows) {
  retirement_queue q(rt, release, 2);
  use_and_retire(q, 0, s0);
  use_and_retire(q, 1, s1);
  rt.set_capturing(s0, true);
  rt.reset_counters();
  use_and_retire(q, 2, s0);  // full: waits on s1's entry, the oldest that may be waited on
  EXPECT_EQ(released, std::vector<void*>{block(1)});
  use_and_retire(q, 3, s0);  // full of capturing entries: the bound gives way
  const auto st = q.stats();
  EXPECT_EQ(st.capture_overflows, 1u);
  EXPECT_EQ(st.in_flight, 3u);
  EXPECT_EQ(rt.queries_on(s0) + rt.event_syncs_on(s0) + rt.stream_syncs_on(s0), 0u);
  rt.set_capturing(s0, false);
  q.drain_all();
  EXPECT_EQ(released.size(), 4u);
  expect_identity(q.stats());
}

TEST_F(queue_fixture, barrier_mode_synchronizes_on_every_retire) {
  retirement_queue q(rt, release, 16, retire_mode::barrier);
  EXPECT_EQ(q.mode(), retire_mode::barrier);
  use_and_retire(q, 0, s0);
  use_and_retire(q, 1, s1);
  EXPECT_EQ(released.size(), 2u);
  auto st = q.stats();
  EXPECT_EQ(st.immediate, 2u);
  EXPECT_EQ(st.stream_syncs, 2u);
  EXPECT_EQ(st.deferred, 0u);
  EXPECT_EQ(rt.calls(call_kind::create_event), 0u);
  rt.fail(call_kind::synchronize_stream);
  use_and_retire(q, 2, s0);
  st = q.stats();
  EXPECT_EQ(st.leaked, 1u);
  expect_identity(st);
  q.set_mode(retire_mode::deferred);
  use_and_retire(q, 3, s0);
  EXPECT_EQ(q.stats().deferred, 1u);
}

TEST_F(queue_fixture, throwing_release_does_not_escape) {
  retirement_queue q(rt, [](void*) { throw std::runtime_error("release failed"); });
  rt.use(block(0), block_bytes, s0);
  q.retire(block(0), s0);
  rt.complete_all();
  EXPECT_NO_THROW(q.drain_all());
  EXPECT_EQ(q.stats().released, 1u);
}

TEST_F(queue_fixture, null_block_is_ignored) {
  retirement_queue q(rt, release);
  q.retire(nullptr, s0);
  EXPECT_EQ(q.stats().deferred + q.stats().immediate, 0u);
}

}  // namespace
