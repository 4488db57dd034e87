#pragma once
// A device_runtime for tests: host memory stands in for device memory, and GPU work is a per-stream
// tick counter that completes only when the test says so (or when a synchronize call forces it, as
// on the real device). Failures can be injected per call kind; every call is counted.
//
// The point of the fake is the safety check. A test marks that a kernel on stream S touches a byte
// range (`use`); that use is pending until S's work through that tick completes. The fake then
// reports a violation when
//  - a block is handed out (check_handout / allocate_checked) while a pending use on another
//    stream overlaps it and the new stream has not been made to wait (stream_wait_event) for it;
//  - a block is declared idle (check_idle, e.g. in a retirement release callback) while any
//    pending use overlaps it;
//  - device memory goes back to the driver (free) while a pending use overlaps it;
//  - an event is polled or a stream/event synchronized while the stream is being captured;
//  - an unknown pointer is freed or an unknown event used.
// Violations are recorded and, by default, also reported with ADD_FAILURE.
//
// Thread-safe: one mutex guards the whole state (the device layer is exercised under TSan).
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/runtime.hpp"

namespace tnrt::test {

enum class call_kind : std::uint8_t {
  allocate,
  free,
  memory_info,
  create_event,
  record_event,
  query_event,
  synchronize_event,
  destroy_event,
  synchronize_stream,
  stream_wait_event,
  is_capturing,
  count_,
};
const char* to_string(call_kind kind) noexcept;

class fake_runtime final : public device::device_runtime {
 public:
  static constexpr std::uint64_t always = UINT64_MAX;

  fake_runtime() = default;
  ~fake_runtime() override;  // frees whatever host memory is still outstanding

  /// Stream handles are small non-null integers; stream(0), stream(1), ... are distinct.
  static device::stream_handle stream(std::size_t index) noexcept;

  // --- the device_runtime seam -------------------------------------------------------------------
  device::status allocate(void** ptr, std::size_t bytes) override;
  device::status free(void* ptr) override;
  device::status memory_info(std::size_t* free_bytes, std::size_t* total_bytes) override;
  device::status create_event(device::event_handle* event) override;
  device::status record_event(device::event_handle event, device::stream_handle stream) override;
  device::status query_event(device::event_handle event) override;
  device::status synchronize_event(device::event_handle event) override;
  device::status destroy_event(device::event_handle event) override;
  device::status synchronize_stream(device::stream_handle stream) override;
  device::status stream_wait_event(device::stream_handle stream, device::event_handle event) override;
  bool is_capturing(device::stream_handle stream) override;

  // --- memory ------------------------------------------------------------------------------------
  /// Driver allocations fail once the outstanding bytes would exceed `bytes`.
  void set_memory_limit(std::size_t bytes);
  [[nodiscard]] std::size_t driver_bytes() const;        // outstanding driver allocations
  [[nodiscard]] std::size_t driver_allocations() const;  // outstanding count

  // --- work --------------------------------------------------------------------------------------
  /// Enqueues one unit of work on `stream`; returns its tick.
  std::uint64_t enqueue(device::stream_handle stream);
  /// Enqueues a kernel on `stream` that reads/writes [ptr, ptr + bytes) until it completes.
  std::uint64_t use(const void* ptr, std::size_t bytes, device::stream_handle stream);
  /// Completes the next `n` units of work on `stream` (and whatever they waited on).
  void advance(device::stream_handle stream, std::uint64_t n = 1);
  /// Completes `stream`'s work through `tick`.
  void complete_through(device::stream_handle stream, std::uint64_t tick);
  void complete(device::stream_handle stream);
  void complete_all();
  [[nodiscard]] std::uint64_t enqueued(device::stream_handle stream) const;
  [[nodiscard]] std::uint64_t completed(device::stream_handle stream) const;
  [[nodiscard]] bool idle(const void* ptr, std::size_t bytes) const;  // no pending use overlaps

  // --- capture -----------------------------------------------------------------------------------
  void set_capturing(device::stream_handle stream, bool capturing);

  // --- failures ----------------------------------------------------------------------------------
  /// The next `times` calls of `kind` fail (status::error); `always` makes every call fail.
  void fail(call_kind kind, std::uint64_t times = 1);
  void clear_failures();

  // --- counters ----------------------------------------------------------------------------------
  [[nodiscard]] std::uint64_t calls(call_kind kind) const;
  /// query_event / synchronize_event calls on events recorded on `stream`.
  [[nodiscard]] std::uint64_t queries_on(device::stream_handle stream) const;
  [[nodiscard]] std::uint64_t event_syncs_on(device::stream_handle stream) const;
  [[nodiscard]] std::uint64_t stream_syncs_on(device::stream_handle stream) const;
  [[nodiscard]] std::size_t live_events() const;
  void reset_counters();

  // --- the safety checks -------------------------------------------------------------------------
  /// [ptr, ptr + bytes) is about to be used by work on `stream`: every overlapping pending use must
  /// be on `stream` itself or ordered before `stream`'s future work by a stream_wait_event.
  void check_handout(const void* ptr, std::size_t bytes, device::stream_handle stream, const char* what = "handout");
  /// [ptr, ptr + bytes) is declared free of pending work.
  void check_idle(const void* ptr, std::size_t bytes, const char* what = "release");
  [[nodiscard]] std::vector<std::string> violations() const;
  /// false: record violations without ADD_FAILURE (for tests that provoke one on purpose).
  void set_fail_on_violation(bool fail) noexcept;

 private:
  struct stream_state {
    std::uint64_t enqueued = 0;
    std::uint64_t completed = 0;
    bool capturing = false;
    // Work after `after_tick` waits for `other` to complete through `other_tick`.
    struct dependency {
      std::uint64_t after_tick;
      device::stream_handle other;
      std::uint64_t other_tick;
    };
    std::vector<dependency> dependencies;  // pruned once completed (their work is complete too)
    std::uint64_t queries = 0;
    std::uint64_t event_syncs = 0;
    std::uint64_t stream_syncs = 0;
  };
  struct event_state {
    bool recorded = false;
    device::stream_handle stream = nullptr;
    std::uint64_t tick = 0;
  };
  struct pending_use {
    std::uintptr_t begin;
    std::uintptr_t end;
    device::stream_handle stream;
    std::uint64_t tick;
  };

  bool take_failure(call_kind kind);                  // counts the call too
  stream_state& stream_locked(device::stream_handle stream);
  void complete_through_locked(device::stream_handle stream, std::uint64_t tick, int depth);
  bool use_pending_locked(const pending_use& use);
  // stream -> the tick through which `stream`'s future work is ordered after it (transitively).
  std::map<device::stream_handle, std::uint64_t> ordered_before_locked(device::stream_handle stream);
  void violation_locked(std::string message);

  mutable std::mutex mutex_;
  std::map<device::stream_handle, stream_state> streams_;
  std::map<std::uintptr_t, event_state> events_;
  std::uintptr_t next_event_ = 1;
  std::map<std::uintptr_t, std::size_t> allocations_;  // host pointer -> bytes
  std::size_t allocated_bytes_ = 0;
  std::size_t memory_limit_ = SIZE_MAX;
  std::vector<pending_use> uses_;
  std::array<std::uint64_t, static_cast<std::size_t>(call_kind::count_)> calls_{};
  std::array<std::uint64_t, static_cast<std::size_t>(call_kind::count_)> failures_{};
  std::vector<std::string> violations_;
  bool fail_on_violation_ = true;
};

/// pool.allocate followed by the fake's handout check on the whole usable block.
void* allocate_checked(device::caching_pool& pool, fake_runtime& runtime, std::size_t bytes,
                       device::stream_handle stream);

}  // namespace tnrt::test
