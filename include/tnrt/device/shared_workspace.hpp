#pragma once
// One scratch buffer per stream slot, shared by every plan that runs on that slot, grown on demand
// and bounded by its own retention cap (outside any plan-cache byte accounting). Old scratch leaves
// only through the retirement queue.
//
// Growth: round the request up to a power of two (1 MiB floor) unless that breaks the cap, then the
// exact size, and if even that breaks the cap, a temporary buffer retired right after its use. The
// new buffer is allocated before the old one is retired, so a failed allocation keeps the old one.
// A slot's own current capacity does not count against its headroom. cap == 0 retains nothing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "tnrt/device/runtime.hpp"

namespace tnrt::device {

class caching_pool;
class retirement_queue;

/// 1 MiB floor, next power of two; nullopt on overflow. 0 -> 0.
std::optional<std::size_t> round_workspace_capacity(std::size_t request) noexcept;

struct workspace_decision {
  enum class kind : std::uint8_t { reuse, retain, temporary } what = kind::reuse;
  std::size_t bytes = 0;  // size to allocate for retain/temporary
  friend bool operator==(const workspace_decision&, const workspace_decision&) = default;
};
/// The pure policy: `slot_capacity` is the slot's current buffer, `total_retained` all slots' bytes.
workspace_decision plan_workspace(std::size_t request, std::size_t slot_capacity, std::size_t total_retained,
                                  std::size_t cap) noexcept;

struct workspace_stats {
  std::size_t slots = 0;           // slots holding a buffer
  std::size_t retained_bytes = 0;  // sum of the slots' buffers
  std::uint64_t grows = 0;         // times a slot's buffer was replaced by a larger one
  std::uint64_t temporary_uses = 0;
  std::size_t cap = 0;
  std::size_t high_water_request = 0;  // largest request seen
};

class shared_workspace {
 public:
  static constexpr std::size_t default_cap = std::size_t{1} << 30;  // 1 GiB
  static constexpr std::size_t default_slots = 16;

  shared_workspace(caching_pool& pool, retirement_queue& queue, std::size_t cap = default_cap,
                   std::size_t slots = default_slots);
  ~shared_workspace();  // clear(): retires every slot's buffer and drains the queue
  shared_workspace(const shared_workspace&) = delete;
  shared_workspace& operator=(const shared_workspace&) = delete;

  struct lease {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool temporary = false;
  };
  /// Scratch of at least `bytes` for work enqueued next on `stream` (slot = stream_slot % slots).
  /// Drains the retirement queue (non-blocking) before allocating. bytes == 0 -> {nullptr, 0}.
  /// A slot's buffer is reused only on the stream it was last used on: asked for from another
  /// stream, the slot gets a new buffer (planned as if empty) and the old one retires on its stream.
  /// The lease stays valid until the next acquire on the same slot, clear() or set_cap(): the caller
  /// enqueues the work that uses it before any of those (the backend's enqueue mutex orders them).
  /// The workspace itself is thread-safe; that ordering is the caller's.
  lease acquire(std::size_t stream_slot, std::size_t bytes, stream_handle stream);
  /// After the work using `l` is enqueued on `stream`: retires a temporary buffer; no-op otherwise.
  void finish(const lease& l, stream_handle stream) noexcept;

  /// Lowering the cap retires slot buffers (largest first) until the retained bytes fit.
  void set_cap(std::size_t cap);
  [[nodiscard]] std::size_t cap() const noexcept;
  /// Retires every slot's buffer on the stream it was last used on, then drains the retirement
  /// queue (blocking, per event): cache clear and teardown are blocking drain points.
  void clear() noexcept;
  [[nodiscard]] workspace_stats stats() const noexcept;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace tnrt::device
