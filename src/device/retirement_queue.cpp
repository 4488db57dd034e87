#include "tnrt/device/retirement_queue.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "tnrt/errors.hpp"

namespace tnrt::device {

// State machine of one retirement (docs/device-layer.md):
//   retire ──record ok──> queued ──query ok / event sync ok / stream sync ok──> released
//      │                    │  └──query not_ready / error / stream capturing──> queued (unchanged)
//      │                    └──event sync and stream sync both fail──> leaked
//      └──create/record fails──> stream sync ok ──> released (immediate)
//                                stream sync fails / capturing ──> leaked (immediate)
// Every transition out of `queued` destroys the entry's event. Counters change under the lock in
// the same step as the transition, so the identity released + leaked + in_flight ==
// deferred + immediate holds for every stats() snapshot; the `release` calls themselves are made
// afterwards, with the lock released, because they re-enter the pool.
class retirement_queue::impl {
 public:
  impl(device_runtime& runtime, release_fn release, std::size_t capacity, retire_mode mode)
      : runtime_(runtime), release_(std::move(release)), capacity_(checked_capacity(capacity)), mode_(mode) {}

  ~impl() {
    drain_all();
    std::lock_guard lock(mutex_);
    // Entries still queued belong to streams that are capturing right now: no completion can be
    // witnessed for them, so they are leaked (never released), and their events destroyed.
    for (auto& e : entries_) {
      (void)runtime_.destroy_event(e.event);
      ++stats_.leaked;
    }
    if (!entries_.empty()) {
      std::fprintf(stderr, "tnrt: retirement_queue destroyed with %zu entries on capturing streams (leaked)\n",
                   entries_.size());
    }
    entries_.clear();
    stats_.in_flight = 0;
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  void retire(void* block, stream_handle stream) noexcept {
    if (block == nullptr) return;
    std::vector<void*> to_release;
    {
      std::lock_guard lock(mutex_);
      const bool capturing = runtime_.is_capturing(stream);
      // A retire is a drain point, except during capture: polling there would invalidate it.
      if (!capturing) drain_locked(to_release);
      // Barrier mode synchronizes the stream, which is illegal during capture; such a retirement
      // takes the deferred path instead (it is the only safe one).
      if (mode_ == retire_mode::barrier && !capturing) {
        // Entries left from deferred mode or from a capture overflow still respect the bound.
        while (entries_.size() > capacity_) {
          if (!resolve_oldest_locked(to_release)) break;
        }
        ++stats_.immediate;
        ++stats_.stream_syncs;
        if (runtime_.synchronize_stream(stream) == status::ok) {
          ++stats_.released;
          to_release.push_back(block);
        } else {
          ++stats_.leaked;
        }
      } else {
        while (entries_.size() >= capacity_) {
          if (!resolve_oldest_locked(to_release)) {
            // Every queued entry is on a capturing stream: none can be waited on, so the bound
            // gives way until a capture ends (counted; see capture_overflows).
            ++stats_.capture_overflows;
            break;
          }
        }
        enqueue_locked(block, stream, capturing, to_release);
      }
    }
    release_all(to_release);
  }

  std::size_t drain() noexcept {
    std::vector<void*> to_release;
    {
      std::lock_guard lock(mutex_);
      drain_locked(to_release);
    }
    release_all(to_release);
    return to_release.size();
  }

  void drain_all() noexcept {
    std::vector<void*> to_release;
    {
      std::lock_guard lock(mutex_);
      // Per event, oldest first: work enqueued after an entry's event stays asynchronous. Entries on
      // capturing streams cannot be waited on and stay queued.
      for (auto it = entries_.begin(); it != entries_.end();) {
        if (runtime_.is_capturing(it->stream)) {
          ++it;
          continue;
        }
        resolve_blocking_locked(*it, to_release);
        it = entries_.erase(it);
        --stats_.in_flight;
      }
    }
    release_all(to_release);
  }

  void set_capacity(std::size_t capacity) {
    const std::size_t checked = checked_capacity(capacity);
    std::vector<void*> to_release;
    {
      std::lock_guard lock(mutex_);
      capacity_ = checked;
      while (entries_.size() > capacity_) {
        if (!resolve_oldest_locked(to_release)) break;
      }
    }
    release_all(to_release);
  }

  std::size_t capacity() const noexcept {
    std::lock_guard lock(mutex_);
    return capacity_;
  }
  void set_mode(retire_mode mode) noexcept {
    std::lock_guard lock(mutex_);
    mode_ = mode;
  }
  retire_mode mode() const noexcept {
    std::lock_guard lock(mutex_);
    return mode_;
  }
  retirement_stats stats() const noexcept {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  bool holds(const void* block) const noexcept {
    std::lock_guard lock(mutex_);
    return std::any_of(entries_.begin(), entries_.end(), [&](const entry& e) { return e.block == block; });
  }

 private:
  struct entry {
    void* block;
    event_handle event;
    stream_handle stream;
  };

  static std::size_t checked_capacity(std::size_t capacity) {
    if (capacity == 0) throw internal_error("retirement_queue: capacity must be at least 1");
    return capacity;
  }

  // Non-blocking: every entry is queried, not only the head, because entries on different streams
  // complete out of order and one slow stream must not hold back the others' blocks.
  void drain_locked(std::vector<void*>& to_release) noexcept {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (runtime_.is_capturing(it->stream)) {
        ++it;
        continue;
      }
      const status s = runtime_.query_event(it->event);
      if (s == status::ok) {
        (void)runtime_.destroy_event(it->event);
        ++stats_.released;
        --stats_.in_flight;
        to_release.push_back(it->block);
        it = entries_.erase(it);
      } else {
        if (s == status::error) ++stats_.query_errors;
        ++it;
      }
    }
  }

  // Event sync, then stream sync, then leak. Destroys the event; the caller removes the entry.
  void resolve_blocking_locked(const entry& e, std::vector<void*>& to_release) noexcept {
    ++stats_.event_syncs;
    bool witnessed = runtime_.synchronize_event(e.event) == status::ok;
    if (!witnessed) {
      ++stats_.stream_syncs;
      witnessed = runtime_.synchronize_stream(e.stream) == status::ok;
    }
    (void)runtime_.destroy_event(e.event);
    if (witnessed) {
      ++stats_.released;
      to_release.push_back(e.block);
    } else {
      ++stats_.leaked;
    }
  }

  // Waits on the oldest entry whose stream is not capturing. false when there is none.
  bool resolve_oldest_locked(std::vector<void*>& to_release) noexcept {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (runtime_.is_capturing(it->stream)) continue;
      ++stats_.barrier_fallbacks;
      ++stats_.capacity_waits;
      resolve_blocking_locked(*it, to_release);
      entries_.erase(it);
      --stats_.in_flight;
      return true;
    }
    return false;
  }

  void enqueue_locked(void* block, stream_handle stream, bool capturing, std::vector<void*>& to_release) noexcept {
    event_handle event = nullptr;
    bool recorded = false;
    if (runtime_.create_event(&event) == status::ok) {
      recorded = runtime_.record_event(event, stream) == status::ok;
      if (!recorded) (void)runtime_.destroy_event(event);
    }
    if (recorded) {
      try {
        entries_.push_back(entry{block, event, stream});
      } catch (...) {
        // No room to remember the event: nothing can witness it later, so wait now.
        (void)runtime_.destroy_event(event);
        fall_back_locked(block, stream, capturing, to_release);
        return;
      }
      ++stats_.deferred;
      ++stats_.in_flight;
      stats_.max_in_flight = std::max(stats_.max_in_flight, stats_.in_flight);
      return;
    }
    fall_back_locked(block, stream, capturing, to_release);
  }

  // No event: the old cure, a stream barrier; if even that cannot be had, leak rather than race.
  void fall_back_locked(void* block, stream_handle stream, bool capturing, std::vector<void*>& to_release) noexcept {
    ++stats_.immediate;
    ++stats_.barrier_fallbacks;
    bool synced = false;
    if (!capturing) {
      ++stats_.stream_syncs;
      synced = runtime_.synchronize_stream(stream) == status::ok;
    }
    if (synced) {
      ++stats_.released;
      to_release.push_back(block);
    } else {
      ++stats_.leaked;
    }
  }

  void release_all(const std::vector<void*>& blocks) noexcept {
    for (void* block : blocks) {
      try {
        release_(block);
      } catch (...) {
        // The block is already counted as released; a throwing release loses it, which is safe.
        std::fprintf(stderr, "tnrt: retirement_queue release callback threw; block %p dropped\n", block);
      }
    }
  }

  device_runtime& runtime_;
  release_fn release_;
  mutable std::mutex mutex_;
  std::deque<entry> entries_;
  std::size_t capacity_;
  retire_mode mode_;
  retirement_stats stats_;
};

retirement_queue::retirement_queue(device_runtime& runtime, release_fn release, std::size_t capacity,
                                   retire_mode mode)
    : impl_(std::make_unique<impl>(runtime, std::move(release), capacity, mode)) {}

retirement_queue::~retirement_queue() = default;

void retirement_queue::retire(void* block, stream_handle stream) noexcept { impl_->retire(block, stream); }

std::size_t retirement_queue::drain() noexcept { return impl_->drain(); }

void retirement_queue::drain_all() noexcept { impl_->drain_all(); }

void retirement_queue::set_capacity(std::size_t capacity) { impl_->set_capacity(capacity); }

std::size_t retirement_queue::capacity() const noexcept { return impl_->capacity(); }

void retirement_queue::set_mode(retire_mode mode) noexcept { impl_->set_mode(mode); }

retire_mode retirement_queue::mode() const noexcept { return impl_->mode(); }

retirement_stats retirement_queue::stats() const noexcept { return impl_->stats(); }

bool retirement_queue::holds(const void* block) const noexcept { return impl_->holds(block); }

}  // namespace tnrt::device
