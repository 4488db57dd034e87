// Shared per-slot scratch: the sizing tables, and the buffer lifecycle through pool and queue.
#include <gtest/gtest.h>

#include <cstdint>

#include "support/fake_runtime.hpp"
#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"
#include "tnrt/errors.hpp"

namespace {

using tnrt::device::caching_pool;
using tnrt::device::plan_workspace;
using tnrt::device::retirement_queue;
using tnrt::device::round_workspace_capacity;
using tnrt::device::shared_workspace;
using tnrt::device::workspace_decision;
using tnrt::test::call_kind;
using tnrt::test::fake_runtime;
using kind = workspace_decision::kind;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

const auto s0 = fake_runtime::stream(0);
const auto s1 = fake_runtime::stream(1);

TEST(device_workspace_policy, capacity_rounds_to_power_of_two_with_a_floor) {
  EXPECT_EQ(round_workspace_capacity(0), 0u);
  EXPECT_EQ(round_workspace_capacity(1), MiB);
  EXPECT_EQ(round_workspace_capacity(MiB), MiB);
  EXPECT_EQ(round_workspace_capacity(MiB + 1), 2 * MiB);
  EXPECT_EQ(round_workspace_capacity(3 * MiB), 4 * MiB);
  EXPECT_EQ(round_workspace_capacity(std::size_t{1} << 63), std::size_t{1} << 63);
  EXPECT_EQ(round_workspace_capacity((std::size_t{1} << 63) + 1), std::nullopt);
  EXPECT_EQ(round_workspace_capacity(SIZE_MAX), std::nullopt);
}

struct plan_case {
  std::size_t request, slot, total, cap;
  workspace_decision expected;
};

TEST(device_workspace_policy, plan_reuses_retains_exact_and_falls_back_to_temporary) {
  const plan_case cases[] = {
      {0, 0, 0, GiB, {kind::reuse, 0}},                            // nothing asked
      {MiB, 2 * MiB, 2 * MiB, GiB, {kind::reuse, 0}},              // fits the slot
      {2 * MiB, 2 * MiB, 2 * MiB, 0, {kind::reuse, 0}},            // reuse never consults the cap
      {1, 0, 0, GiB, {kind::retain, MiB}},                         // floor
      {3 * MiB, 0, 0, GiB, {kind::retain, 4 * MiB}},               // power of two
      {3 * MiB, 0, 0, 3 * MiB, {kind::retain, 3 * MiB}},           // rounding breaks the cap: exact
      {3 * MiB, 0, 0, 3 * MiB - 1, {kind::temporary, 3 * MiB}},    // even exact breaks it
      {3 * MiB, 2 * MiB, 2 * MiB, 4 * MiB, {kind::retain, 4 * MiB}},  // own capacity is not counted
      {3 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, {kind::retain, 3 * MiB}},  // others hold 1 MiB
      {3 * MiB, 2 * MiB, 4 * MiB, 4 * MiB, {kind::temporary, 3 * MiB}},  // others hold 2 MiB
      {1, 0, 0, 0, {kind::temporary, 1}},                          // cap 0 retains nothing
      {5 * MiB, 0, 10 * GiB, GiB, {kind::temporary, 5 * MiB}},     // already over the cap
      {SIZE_MAX, 0, 0, SIZE_MAX, {kind::retain, SIZE_MAX}},        // rounding overflows: exact
  };
  for (const auto& c : cases) {
    EXPECT_EQ(plan_workspace(c.request, c.slot, c.total, c.cap), c.expected)
        << "request " << c.request << " slot " << c.slot << " total " << c.total << " cap " << c.cap;
  }
}

struct workspace_fixture : ::testing::Test {
  fake_runtime rt;
  caching_pool pool{rt};
  retirement_queue queue{rt, [this](void* p) {
                           rt.check_idle(p, pool.size_of_block(p), "workspace release");
                           pool.deallocate_unowned(p);
                         }};
  // Acquire, check with the fake that the buffer is safe for `s`, and run a kernel on it.
  shared_workspace::lease run(shared_workspace& ws, std::size_t slot, std::size_t bytes,
                              tnrt::device::stream_handle s) {
    auto l = ws.acquire(slot, bytes, s);
    if (l.ptr != nullptr) {
      rt.check_handout(l.ptr, l.bytes, s, "workspace acquire");
      rt.use(l.ptr, l.bytes, s);
    }
    ws.finish(l, s);
    return l;
  }
};

TEST_F(workspace_fixture, zero_bytes_is_a_null_lease) {
  shared_workspace ws(pool, queue);
  const auto l = ws.acquire(0, 0, s0);
  EXPECT_EQ(l.ptr, nullptr);
  EXPECT_EQ(l.bytes, 0u);
  EXPECT_EQ(ws.stats().slots, 0u);
}

TEST_F(workspace_fixture, slot_buffer_is_rounded_retained_and_reused) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, 3 * MiB, s0);
  EXPECT_EQ(a.bytes, 4 * MiB);
  EXPECT_FALSE(a.temporary);
  const auto b = run(ws, 0, 4 * MiB, s0);
  EXPECT_EQ(b.ptr, a.ptr);
  const auto c = run(ws, 16, MiB, s0);  // slot 16 % 16 == slot 0
  EXPECT_EQ(c.ptr, a.ptr);
  const auto st = ws.stats();
  EXPECT_EQ(st.slots, 1u);
  EXPECT_EQ(st.retained_bytes, 4 * MiB);
  EXPECT_EQ(st.grows, 0u);
  EXPECT_EQ(st.high_water_request, 4 * MiB);
  EXPECT_EQ(st.cap, shared_workspace::default_cap);
}

TEST_F(workspace_fixture, growth_allocates_before_retiring_the_old_buffer) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  const auto b = run(ws, 0, 3 * MiB, s0);
  EXPECT_NE(b.ptr, a.ptr);  // both live at once: the new one was allocated first
  EXPECT_TRUE(queue.holds(a.ptr));
  EXPECT_EQ(ws.stats().grows, 1u);
  EXPECT_EQ(ws.stats().retained_bytes, 4 * MiB);
  EXPECT_EQ(queue.stats().deferred, 1u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
}

TEST_F(workspace_fixture, failed_growth_keeps_the_old_buffer) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  rt.set_memory_limit(rt.driver_bytes());
  EXPECT_THROW((void)ws.acquire(0, 8 * MiB, s0), tnrt::out_of_memory);
  EXPECT_FALSE(queue.holds(a.ptr));
  EXPECT_EQ(queue.stats().deferred, 0u);
  EXPECT_EQ(ws.stats().retained_bytes, MiB);
  const auto again = run(ws, 0, MiB, s0);
  EXPECT_EQ(again.ptr, a.ptr);
}

TEST_F(workspace_fixture, acquire_is_a_drain_point) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  (void)run(ws, 0, 2 * MiB, s0);  // a retires
  ASSERT_TRUE(queue.holds(a.ptr));
  rt.complete(s0);
  const auto queries = rt.calls(call_kind::query_event);
  (void)run(ws, 0, MiB, s0);  // a reuse, but the queue is still drained first
  EXPECT_GT(rt.calls(call_kind::query_event), queries);
  EXPECT_FALSE(queue.holds(a.ptr));
  EXPECT_EQ(queue.stats().released, 1u);
}

TEST_F(workspace_fixture, exact_size_when_rounding_breaks_the_cap) {
  shared_workspace ws(pool, queue, 3 * MiB);
  const auto a = run(ws, 0, 3 * MiB - 512, s0);
  EXPECT_EQ(a.bytes, 3 * MiB - 512);
  EXPECT_FALSE(a.temporary);
  EXPECT_EQ(ws.stats().retained_bytes, 3 * MiB - 512);
}

TEST_F(workspace_fixture, temporary_when_even_the_exact_size_breaks_the_cap) {
  shared_workspace ws(pool, queue, 2 * MiB);
  const auto keep = run(ws, 0, MiB, s0);
  const auto t = run(ws, 1, 2 * MiB, s1);  // others hold 1 MiB: 2 MiB does not fit
  EXPECT_TRUE(t.temporary);
  EXPECT_EQ(t.bytes, 2 * MiB);
  EXPECT_TRUE(queue.holds(t.ptr));  // retired right after its use, on its stream
  EXPECT_FALSE(queue.holds(keep.ptr));
  const auto st = ws.stats();
  EXPECT_EQ(st.temporary_uses, 1u);
  EXPECT_EQ(st.slots, 1u);
  EXPECT_EQ(st.retained_bytes, MiB);
}

TEST_F(workspace_fixture, cap_zero_retains_nothing) {
  shared_workspace ws(pool, queue, 0);
  for (int i = 0; i < 3; ++i) {
    const auto t = run(ws, 0, MiB, s0);
    EXPECT_TRUE(t.temporary);
  }
  EXPECT_EQ(ws.stats().retained_bytes, 0u);
  EXPECT_EQ(ws.stats().slots, 0u);
  EXPECT_EQ(ws.stats().temporary_uses, 3u);
}

TEST_F(workspace_fixture, lowering_the_cap_retires_largest_first_until_it_fits) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  const auto b = run(ws, 1, 8 * MiB, s1);
  const auto c = run(ws, 2, 2 * MiB, s0);
  ws.set_cap(4 * MiB);
  EXPECT_EQ(ws.cap(), 4 * MiB);
  EXPECT_TRUE(queue.holds(b.ptr));
  EXPECT_FALSE(queue.holds(a.ptr));
  EXPECT_FALSE(queue.holds(c.ptr));
  EXPECT_EQ(ws.stats().retained_bytes, 3 * MiB);
  ws.set_cap(MiB);
  EXPECT_TRUE(queue.holds(c.ptr));
  EXPECT_EQ(ws.stats().retained_bytes, MiB);
  ws.set_cap(0);
  EXPECT_TRUE(queue.holds(a.ptr));
  EXPECT_EQ(ws.stats().slots, 0u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
}

TEST_F(workspace_fixture, clear_retires_every_slot_on_its_last_stream_and_drains_blocking) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  const auto b = run(ws, 1, MiB, s1);
  ws.clear();
  EXPECT_FALSE(queue.holds(a.ptr));
  EXPECT_FALSE(queue.holds(b.ptr));
  EXPECT_EQ(queue.stats().released, 2u);
  EXPECT_EQ(rt.event_syncs_on(s0), 1u);  // per event, on the stream each buffer was last used on
  EXPECT_EQ(rt.event_syncs_on(s1), 1u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 0u);
  EXPECT_EQ(ws.stats().slots, 0u);
  EXPECT_EQ(ws.stats().retained_bytes, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(ws.stats().cap, shared_workspace::default_cap);  // the cap survives clear
}

TEST_F(workspace_fixture, clear_during_capture_leaves_the_capturing_streams_entries_queued) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  const auto b = run(ws, 1, MiB, s1);
  rt.set_capturing(s0, true);
  rt.reset_counters();
  ws.clear();
  EXPECT_TRUE(queue.holds(a.ptr));
  EXPECT_FALSE(queue.holds(b.ptr));
  EXPECT_EQ(rt.queries_on(s0) + rt.event_syncs_on(s0) + rt.stream_syncs_on(s0), 0u);
  rt.set_capturing(s0, false);
  queue.drain_all();
  EXPECT_FALSE(queue.holds(a.ptr));
}

TEST_F(workspace_fixture, another_stream_on_the_same_slot_gets_a_new_buffer) {
  shared_workspace ws(pool, queue);
  const auto a = run(ws, 0, MiB, s0);
  const auto b = run(ws, 0, MiB, s1);
  EXPECT_NE(b.ptr, a.ptr);
  EXPECT_TRUE(queue.holds(a.ptr));  // retired on s0, where it was last used
  EXPECT_EQ(ws.stats().retained_bytes, MiB);
  EXPECT_EQ(ws.stats().grows, 0u);
}

TEST_F(workspace_fixture, teardown_retires_and_drains) {
  {
    shared_workspace ws(pool, queue);
    (void)run(ws, 0, MiB, s0);
    (void)run(ws, 1, 2 * MiB, s1);
  }
  EXPECT_EQ(queue.stats().in_flight, 0u);
  EXPECT_EQ(queue.stats().released, 2u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_TRUE(rt.violations().empty());
}

}  // namespace
