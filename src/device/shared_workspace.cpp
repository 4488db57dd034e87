#include "tnrt/device/shared_workspace.hpp"

#include <algorithm>
#include <bit>
#include <mutex>
#include <vector>

#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::device {

namespace {
constexpr std::size_t workspace_floor = std::size_t{1} << 20;
constexpr std::size_t largest_power_of_two = std::size_t{1} << (sizeof(std::size_t) * 8 - 1);
}  // namespace

std::optional<std::size_t> round_workspace_capacity(std::size_t request) noexcept {
  if (request == 0) return 0;
  if (request <= workspace_floor) return workspace_floor;
  if (request > largest_power_of_two) return std::nullopt;
  return std::bit_ceil(request);
}

workspace_decision plan_workspace(std::size_t request, std::size_t slot_capacity, std::size_t total_retained,
                                  std::size_t cap) noexcept {
  using kind = workspace_decision::kind;
  if (request <= slot_capacity) return {kind::reuse, 0};
  // The slot's own buffer is about to be replaced, so it does not count against the headroom.
  const std::size_t others = total_retained - std::min(slot_capacity, total_retained);
  const std::size_t headroom = cap > others ? cap - others : 0;
  if (const auto rounded = round_workspace_capacity(request); rounded && *rounded <= headroom) {
    return {kind::retain, *rounded};
  }
  if (request <= headroom) return {kind::retain, request};
  return {kind::temporary, request};
}

class shared_workspace::impl {
 public:
  impl(caching_pool& pool, retirement_queue& queue, std::size_t cap, std::size_t slots)
      : pool_(pool), queue_(queue), slots_(std::max<std::size_t>(slots, 1)) {
    stats_.cap = cap;
  }
  ~impl() { clear(); }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  lease acquire(std::size_t stream_slot, std::size_t bytes, stream_handle stream) {
    if (bytes == 0) return {};
    // The allocation-time drain point: retirements that completed since the last one go back to
    // the pool before we ask it for memory.
    (void)queue_.drain();
    std::vector<retired> to_retire;
    lease result;
    {
      std::lock_guard lock(mutex_);
      stats_.high_water_request = std::max(stats_.high_water_request, bytes);
      slot& s = slots_[stream_slot % slots_.size()];
      // A slot's buffer is ordered only on the stream it was last used on. Work on another stream
      // could overlap the old stream's pending use, so the buffer is not reused across streams: a
      // new one is planned as if the slot were empty, and the old one retires on its own stream.
      const bool same_stream = s.ptr == nullptr || s.stream == stream;
      const std::size_t own = same_stream ? s.bytes : 0;
      const std::size_t retained = same_stream ? stats_.retained_bytes : stats_.retained_bytes - s.bytes;
      const workspace_decision d = plan_workspace(bytes, own, retained, stats_.cap);
      switch (d.what) {
        case workspace_decision::kind::reuse:
          result = {s.ptr, s.bytes, false};
          break;
        case workspace_decision::kind::retain: {
          // Allocate first: if the pool throws, the slot keeps its old buffer.
          void* fresh = pool_.allocate(d.bytes, stream);
          if (s.ptr != nullptr) {
            to_retire.push_back({s.ptr, s.stream});
            if (d.bytes > s.bytes) ++stats_.grows;
            stats_.retained_bytes -= s.bytes;
          } else {
            ++stats_.slots;
          }
          s = slot{fresh, d.bytes, stream};
          stats_.retained_bytes += d.bytes;
          result = {fresh, d.bytes, false};
          break;
        }
        case workspace_decision::kind::temporary:
          result = {pool_.allocate(d.bytes, stream), d.bytes, true};
          ++stats_.temporary_uses;
          break;
      }
      if (!result.temporary) s.stream = stream;
    }
    retire_all(to_retire);
    return result;
  }

  void finish(const lease& l, stream_handle stream) noexcept {
    if (l.temporary && l.ptr != nullptr) queue_.retire(l.ptr, stream);
  }

  void set_cap(std::size_t cap) {
    std::vector<retired> to_retire;
    {
      std::lock_guard lock(mutex_);
      stats_.cap = cap;
      while (stats_.retained_bytes > cap) {
        auto largest = std::max_element(slots_.begin(), slots_.end(),
                                        [](const slot& a, const slot& b) { return a.bytes < b.bytes; });
        detach_locked(*largest, to_retire);
      }
    }
    retire_all(to_retire);
  }

  std::size_t cap() const noexcept {
    std::lock_guard lock(mutex_);
    return stats_.cap;
  }

  // Retires under our lock so that nothing here allocates (clear() must not throw). That is safe:
  // the lock order is workspace -> queue -> pool everywhere, and the queue's release callback
  // never comes back into the workspace. Cache clear and teardown are blocking drain points.
  void clear() noexcept {
    {
      std::lock_guard lock(mutex_);
      for (slot& s : slots_) {
        if (s.ptr == nullptr) continue;
        queue_.retire(s.ptr, s.stream);
        stats_.retained_bytes -= s.bytes;
        --stats_.slots;
        s = slot{};
      }
    }
    queue_.drain_all();
  }

  workspace_stats stats() const noexcept {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct slot {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    stream_handle stream = nullptr;  // the stream it was last used on
  };
  struct retired {
    void* ptr;
    stream_handle stream;
  };

  void detach_locked(slot& s, std::vector<retired>& to_retire) {
    to_retire.push_back({s.ptr, s.stream});
    stats_.retained_bytes -= s.bytes;
    --stats_.slots;
    s = slot{};
  }

  // Outside our lock: the queue may release blocks into the pool from inside retire().
  void retire_all(const std::vector<retired>& buffers) noexcept {
    for (const retired& r : buffers) queue_.retire(r.ptr, r.stream);
  }

  caching_pool& pool_;
  retirement_queue& queue_;
  mutable std::mutex mutex_;
  std::vector<slot> slots_;
  workspace_stats stats_;
};

shared_workspace::shared_workspace(caching_pool& pool, retirement_queue& queue, std::size_t cap, std::size_t slots)
    : impl_(std::make_unique<impl>(pool, queue, cap, slots)) {}

shared_workspace::~shared_workspace() = default;

shared_workspace::lease shared_workspace::acquire(std::size_t stream_slot, std::size_t bytes, stream_handle stream) {
  return impl_->acquire(stream_slot, bytes, stream);
}

void shared_workspace::finish(const lease& l, stream_handle stream) noexcept { impl_->finish(l, stream); }

void shared_workspace::set_cap(std::size_t cap) { impl_->set_cap(cap); }

std::size_t shared_workspace::cap() const noexcept { return impl_->cap(); }

void shared_workspace::clear() noexcept { impl_->clear(); }

workspace_stats shared_workspace::stats() const noexcept { return impl_->stats(); }

}  // namespace tnrt::device
