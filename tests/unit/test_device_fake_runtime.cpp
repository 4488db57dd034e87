// The fake runtime's own semantics: every device-layer test relies on them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/fake_runtime.hpp"

namespace {

using tnrt::device::event_handle;
using tnrt::device::status;
using tnrt::test::call_kind;
using tnrt::test::fake_runtime;

const auto s0 = fake_runtime::stream(0);
const auto s1 = fake_runtime::stream(1);

bool contains(const std::vector<std::string>& all, const std::string& what) {
  for (const auto& v : all) {
    if (v.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(device_fake_runtime, events_complete_when_the_work_before_them_completes) {
  fake_runtime rt;
  rt.enqueue(s0);
  rt.enqueue(s0);
  event_handle e = nullptr;
  ASSERT_EQ(rt.create_event(&e), status::ok);
  EXPECT_EQ(rt.query_event(e), status::ok);  // never recorded: complete, as in CUDA
  ASSERT_EQ(rt.record_event(e, s0), status::ok);
  rt.enqueue(s0);  // after the event
  EXPECT_EQ(rt.query_event(e), status::not_ready);
  rt.advance(s0);
  EXPECT_EQ(rt.query_event(e), status::not_ready);
  rt.advance(s0);
  EXPECT_EQ(rt.query_event(e), status::ok);
  EXPECT_EQ(rt.completed(s0), 2u);
  EXPECT_EQ(rt.destroy_event(e), status::ok);
  EXPECT_EQ(rt.live_events(), 0u);
}

TEST(device_fake_runtime, synchronize_completes_exactly_what_it_waits_for) {
  fake_runtime rt;
  rt.enqueue(s0);
  event_handle e = nullptr;
  ASSERT_EQ(rt.create_event(&e), status::ok);
  ASSERT_EQ(rt.record_event(e, s0), status::ok);
  rt.enqueue(s0);
  EXPECT_EQ(rt.synchronize_event(e), status::ok);
  EXPECT_EQ(rt.completed(s0), 1u);
  EXPECT_EQ(rt.synchronize_stream(s0), status::ok);
  EXPECT_EQ(rt.completed(s0), 2u);
  EXPECT_EQ(rt.event_syncs_on(s0), 1u);
  EXPECT_EQ(rt.stream_syncs_on(s0), 1u);
  (void)rt.destroy_event(e);
}

TEST(device_fake_runtime, a_stream_wait_orders_the_waiting_stream_after_the_event) {
  fake_runtime rt;
  char buffer[512] = {};
  rt.use(buffer, sizeof buffer, s0);
  event_handle e = nullptr;
  ASSERT_EQ(rt.create_event(&e), status::ok);
  ASSERT_EQ(rt.record_event(e, s0), status::ok);
  rt.set_fail_on_violation(false);
  rt.check_handout(buffer, sizeof buffer, s1);
  EXPECT_EQ(rt.violations().size(), 1u);  // s1 is not ordered after s0 yet
  ASSERT_EQ(rt.stream_wait_event(s1, e), status::ok);
  rt.check_handout(buffer, sizeof buffer, s1);
  EXPECT_EQ(rt.violations().size(), 1u);  // now it is
  // s1's wait cannot complete before s0's work: completing s1 completes s0 through the event.
  rt.complete(s1);
  EXPECT_EQ(rt.completed(s0), 1u);
  EXPECT_TRUE(rt.idle(buffer, sizeof buffer));
  (void)rt.destroy_event(e);
}

TEST(device_fake_runtime, waits_chain_transitively) {
  const auto s2 = fake_runtime::stream(2);
  fake_runtime rt;
  rt.set_fail_on_violation(false);
  char buffer[256] = {};
  rt.use(buffer, sizeof buffer, s2);
  event_handle on_s2 = nullptr;
  event_handle on_s1 = nullptr;
  ASSERT_EQ(rt.create_event(&on_s2), status::ok);
  ASSERT_EQ(rt.create_event(&on_s1), status::ok);
  ASSERT_EQ(rt.record_event(on_s1, s1), status::ok);  // before s1 waits: orders nothing about s2
  ASSERT_EQ(rt.stream_wait_event(s0, on_s1), status::ok);
  rt.check_handout(buffer, sizeof buffer, s0);
  EXPECT_EQ(rt.violations().size(), 1u);
  ASSERT_EQ(rt.record_event(on_s2, s2), status::ok);
  ASSERT_EQ(rt.stream_wait_event(s1, on_s2), status::ok);  // s1 after s2's use
  ASSERT_EQ(rt.record_event(on_s1, s1), status::ok);       // re-recorded after that wait
  ASSERT_EQ(rt.stream_wait_event(s0, on_s1), status::ok);  // s0 after s1, hence after s2
  rt.check_handout(buffer, sizeof buffer, s0);
  EXPECT_EQ(rt.violations().size(), 1u);
  (void)rt.destroy_event(on_s1);
  (void)rt.destroy_event(on_s2);
}

TEST(device_fake_runtime, failures_are_injected_once_n_times_or_always) {
  fake_runtime rt;
  event_handle e = nullptr;
  rt.fail(call_kind::create_event);
  EXPECT_EQ(rt.create_event(&e), status::error);
  EXPECT_EQ(rt.create_event(&e), status::ok);
  rt.fail(call_kind::query_event, 2);
  EXPECT_EQ(rt.query_event(e), status::error);
  EXPECT_EQ(rt.query_event(e), status::error);
  EXPECT_EQ(rt.query_event(e), status::ok);
  rt.fail(call_kind::synchronize_stream, fake_runtime::always);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(rt.synchronize_stream(s0), status::error);
  rt.clear_failures();
  EXPECT_EQ(rt.synchronize_stream(s0), status::ok);
  EXPECT_EQ(rt.calls(call_kind::create_event), 2u);
  EXPECT_EQ(rt.calls(call_kind::query_event), 3u);
  EXPECT_EQ(rt.calls(call_kind::synchronize_stream), 6u);
  (void)rt.destroy_event(e);
}

TEST(device_fake_runtime, memory_limit_and_driver_free_checks) {
  fake_runtime rt;
  rt.set_memory_limit(1024);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(rt.allocate(&a, 1000), status::ok);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 256, 0u);
  EXPECT_EQ(rt.allocate(&b, 256), status::error);
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  ASSERT_EQ(rt.memory_info(&free_bytes, &total), status::ok);
  EXPECT_EQ(total, 1024u);
  EXPECT_EQ(free_bytes, 0u);
  rt.use(a, 1000, s0);
  rt.set_fail_on_violation(false);
  EXPECT_EQ(rt.free(a), status::ok);
  EXPECT_TRUE(contains(rt.violations(), "driver free"));
  int local = 0;
  EXPECT_EQ(rt.free(&local), status::error);
  EXPECT_TRUE(contains(rt.violations(), "never handed out"));
}

TEST(device_fake_runtime, polling_or_synchronizing_during_capture_is_a_violation) {
  fake_runtime rt;
  rt.set_fail_on_violation(false);
  event_handle e = nullptr;
  ASSERT_EQ(rt.create_event(&e), status::ok);
  rt.set_capturing(s0, true);
  EXPECT_TRUE(rt.is_capturing(s0));
  EXPECT_FALSE(rt.is_capturing(s1));
  EXPECT_EQ(rt.record_event(e, s0), status::ok);  // legal during capture
  EXPECT_EQ(rt.query_event(e), status::error);
  EXPECT_EQ(rt.synchronize_event(e), status::error);
  EXPECT_EQ(rt.synchronize_stream(s0), status::error);
  EXPECT_EQ(rt.violations().size(), 3u);
  EXPECT_EQ(rt.queries_on(s0), 1u);
  (void)rt.destroy_event(e);
}

TEST(device_fake_runtime, idle_check_flags_a_release_while_work_is_pending) {
  fake_runtime rt;
  rt.set_fail_on_violation(false);
  char buffer[256] = {};
  const auto tick = rt.use(buffer, sizeof buffer, s0);
  rt.check_idle(buffer, sizeof buffer);
  EXPECT_EQ(rt.violations().size(), 1u);
  rt.complete_through(s0, tick);
  rt.check_idle(buffer, sizeof buffer);
  EXPECT_EQ(rt.violations().size(), 1u);
}

}  // namespace
