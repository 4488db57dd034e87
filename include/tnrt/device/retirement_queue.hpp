#pragma once
// Workspace retirement without a stream barrier.
//
// A block whose last use was enqueued on a stream is retired here instead of after a stream
// synchronize: an event is recorded on that stream after the last use, and the block goes back
// (through `release`) only once that event is seen complete. cudaEventRecord completes only after all
// work enqueued before it, so no pending work can touch a released block.
//
// Bounded FIFO (capacity 16 by default). Non-blocking drain: query every entry, release the completed
// ones (right before each workspace allocation, and inside every retire). Blocking drain: per event,
// oldest first (synchronize(), cache clear, teardown). At capacity: wait on the oldest entry's event.
// An event that cannot be created or recorded: synchronize the stream, then release; if that fails
// too, leak the block (never release it) and count it. A failed query leaves the entry queued. No
// event is polled while its stream is being captured.
//
// Thread-safe. `release` is called without the queue's lock held.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "tnrt/device/runtime.hpp"

namespace tnrt::device {

enum class retire_mode : std::uint8_t {
  deferred,  // event + queue (the default)
  barrier,   // synchronize the stream on every retire, then release (the old cure, for comparison)
};

struct retirement_stats {
  std::uint64_t deferred = 0;           // entries queued behind an event
  std::uint64_t immediate = 0;          // retirements resolved at once by a stream barrier (barrier mode, or event create/record failure)
  std::uint64_t released = 0;           // blocks handed back through `release`
  std::uint64_t barrier_fallbacks = 0;  // capacity waits on the oldest entry + stream barriers after a failed create/record
  std::uint64_t capacity_waits = 0;     // of barrier_fallbacks: waits because the queue was full
  std::uint64_t query_errors = 0;       // event queries that failed (entry kept)
  std::uint64_t leaked = 0;             // blocks never released because no completion could be witnessed
  std::uint64_t stream_syncs = 0;       // synchronize_stream calls made by the queue
  std::uint64_t event_syncs = 0;        // synchronize_event calls made by the queue
  std::uint64_t in_flight = 0;          // entries queued now
  std::uint64_t max_in_flight = 0;
  std::uint64_t capture_overflows = 0;  // retires queued beyond capacity because every queued entry's stream was capturing
  // Identity: released + leaked + in_flight == deferred + immediate.
};

class retirement_queue {
 public:
  using release_fn = std::function<void(void* block)>;
  static constexpr std::size_t default_capacity = 16;

  retirement_queue(device_runtime& runtime, release_fn release, std::size_t capacity = default_capacity,
                   retire_mode mode = retire_mode::deferred);
  ~retirement_queue();  // blocking drain
  retirement_queue(const retirement_queue&) = delete;
  retirement_queue& operator=(const retirement_queue&) = delete;

  /// `block`'s last use has been enqueued on `stream`. Never throws; never releases the block before
  /// its use is witnessed complete. A null block is ignored. During capture of `stream` the event is
  /// recorded but nothing is drained or synchronized (polling would invalidate the capture).
  void retire(void* block, stream_handle stream) noexcept;
  /// Non-blocking drain. Returns the number of blocks released.
  std::size_t drain() noexcept;
  /// Blocking drain of every entry, oldest first. Entries whose stream is capturing stay queued.
  void drain_all() noexcept;

  void set_capacity(std::size_t capacity);  // >= 1; shrinking waits on the oldest entries
  [[nodiscard]] std::size_t capacity() const noexcept;
  void set_mode(retire_mode mode) noexcept;
  [[nodiscard]] retire_mode mode() const noexcept;
  [[nodiscard]] retirement_stats stats() const noexcept;
  /// True while `block` is queued (for tests and assertions).
  [[nodiscard]] bool holds(const void* block) const noexcept;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tnrt::device
