#include "tnrt/device/caching_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::device {

namespace {

// Policy (docs/device-layer.md): requests round up to 256 B. Requests below 1 MiB are "small" and
// carved from 2 MiB driver segments shared with other small blocks; larger requests get their own
// segment rounded up to 2 MiB. A block is split when the remainder is worth keeping: >= 256 B in a
// small segment, >= 1 MiB in a large one. Small and large blocks never mix, so a stream of tiny
// requests cannot pin a huge segment.
constexpr std::size_t alignment = 256;
constexpr std::size_t small_limit = std::size_t{1} << 20;
constexpr std::size_t segment_granularity = std::size_t{2} << 20;
constexpr std::size_t small_split_min = alignment;
constexpr std::size_t large_split_min = std::size_t{1} << 20;

bool round_up(std::size_t value, std::size_t multiple, std::size_t* out) noexcept {
  if (value > SIZE_MAX - (multiple - 1)) return false;
  *out = (value + multiple - 1) / multiple * multiple;
  return true;
}

}  // namespace

class caching_pool::impl {
 public:
  impl(device_runtime& runtime, retirement_queue* queue) : runtime_(runtime), queue_(queue) {}

  ~impl() {
    std::lock_guard lock(mutex_);
    release_cached_locked();
    if (!segments_.empty()) {
      // Freeing memory that live work may use would be a race; a leak is reported instead.
      std::fprintf(stderr, "tnrt: caching_pool destroyed with %zu bytes in use in %zu driver allocations (not freed)\n",
                   in_use_, segments_.size());
    }
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  void* allocate(std::size_t bytes, stream_handle stream) {
    std::size_t rounded = 0;
    if (!round_up(std::max(bytes, std::size_t{1}), alignment, &rounded)) throw_oom(bytes, stream);
    {
      std::lock_guard lock(mutex_);
      if (void* p = allocate_locked(rounded, stream)) return p;
    }
    // The driver refused. Blocks waiting in the retirement queue come back through
    // deallocate_unowned, which takes our lock: drain with the lock released.
    if (auto* queue = queue_.load(std::memory_order_acquire)) queue->drain_all();
    std::lock_guard lock(mutex_);
    if (block* b = find_reusable_locked(rounded, stream)) {
      ++stats_.oom_recoveries;
      return hand_out_locked(b, rounded, /*reused=*/true);
    }
    release_cached_locked();
    if (block* b = find_reusable_locked(rounded, stream)) {  // a sync may have untagged blocks
      ++stats_.oom_recoveries;
      return hand_out_locked(b, rounded, /*reused=*/true);
    }
    if (block* b = allocate_segment_locked(rounded)) {
      ++stats_.oom_recoveries;
      return hand_out_locked(b, rounded, /*reused=*/false);
    }
    throw_oom_locked(bytes, stream);
  }

  void deallocate(void* ptr, bool owned, stream_handle stream, const char* what) {
    std::lock_guard lock(mutex_);
    block* b = live_block_locked(ptr, what);
    in_use_ -= b->size;
    free_block_locked(b, owned, stream);
  }

  std::size_t size_of_block(const void* ptr) const {
    std::lock_guard lock(mutex_);
    const auto it = blocks_.find(static_cast<const char*>(ptr));
    if (it == blocks_.end() || it->second->free) throw internal_error("caching_pool::size_of_block: unknown pointer");
    return it->second->size;
  }

  std::size_t release_cached() {
    std::lock_guard lock(mutex_);
    return release_cached_locked();
  }

  pool_stats stats() const {
    std::lock_guard lock(mutex_);
    pool_stats s = stats_;
    s.bytes_in_use = in_use_;
    s.bytes_cached = reserved_ - in_use_;
    return s;
  }

  void set_queue(retirement_queue* queue) noexcept { queue_.store(queue, std::memory_order_release); }

 private:
  struct segment {
    char* base;
    std::size_t size;
    bool small;
  };
  struct block {
    char* ptr;
    std::size_t size;
    segment* seg;
    bool free = true;
    // A stream-ordered free leaves the block owned by its stream until that stream is known to be
    // past the last use. nullptr is a real stream (the default stream), hence the separate flag.
    bool owned = false;
    stream_handle owner = nullptr;
    block* prev = nullptr;        // neighbours inside the segment
    block* next = nullptr;
  };
  struct by_size {
    bool operator()(const block* a, const block* b) const noexcept {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  using free_set = std::set<block*, by_size>;

  free_set& free_set_for(bool small) noexcept { return small ? small_free_ : large_free_; }

  static bool usable_on(const block* b, stream_handle stream) noexcept { return !b->owned || b->owner == stream; }
  static bool mergeable(const block* a, const block* b) noexcept {
    return !a->owned || !b->owned || a->owner == b->owner;
  }
  // The merged block keeps an owner if either part had one (conservative).
  static void merge_owner(block* into, const block* from) noexcept {
    if (!into->owned && from->owned) {
      into->owned = true;
      into->owner = from->owner;
    }
  }

  void* allocate_locked(std::size_t rounded, stream_handle stream) {
    if (block* b = find_reusable_locked(rounded, stream)) return hand_out_locked(b, rounded, true);
    if (block* b = allocate_segment_locked(rounded)) return hand_out_locked(b, rounded, false);
    return nullptr;
  }

  // Best fit among blocks this stream may use at once (its own or untagged); failing that, the best
  // fitting block of another stream, taken after making `stream` wait on an event recorded on the
  // owner (the GPU orders the new work after the old; the host never blocks).
  block* find_reusable_locked(std::size_t rounded, stream_handle stream) {
    free_set& set = free_set_for(rounded < small_limit);
    block probe{nullptr, rounded, nullptr};
    const auto first = set.lower_bound(&probe);
    for (auto it = first; it != set.end(); ++it) {
      if (usable_on(*it, stream)) return *it;
    }
    if (runtime_.is_capturing(stream)) return nullptr;
    for (auto it = first; it != set.end(); ++it) {
      block* b = *it;
      // Recording on (or waiting from) a capturing stream would splice the capture; skip.
      if (runtime_.is_capturing(b->owner)) continue;
      // The split-off remainder keeps the owner: only `stream` has been ordered after it.
      if (order_after_locked(b->owner, stream)) return b;
      return nullptr;  // the event path failed; the driver is the safe way out
    }
    return nullptr;
  }

  bool order_after_locked(stream_handle owner, stream_handle stream) {
    event_handle event = nullptr;
    if (runtime_.create_event(&event) != status::ok) return false;
    const bool ok = runtime_.record_event(event, owner) == status::ok &&
                    runtime_.stream_wait_event(stream, event) == status::ok;
    // The wait is already enqueued; destroying the event does not cancel it.
    (void)runtime_.destroy_event(event);
    return ok;
  }

  block* allocate_segment_locked(std::size_t rounded) {
    const bool small = rounded < small_limit;
    std::size_t size = segment_granularity;
    if (!small && !round_up(rounded, segment_granularity, &size)) return nullptr;
    void* memory = nullptr;
    if (runtime_.allocate(&memory, size) != status::ok || memory == nullptr) return nullptr;
    ++stats_.driver_allocations;
    auto seg = std::make_unique<segment>(segment{static_cast<char*>(memory), size, small});
    auto b = std::make_unique<block>(block{seg->base, size, seg.get()});
    block* raw = b.get();
    blocks_.emplace(raw->ptr, std::move(b));
    segments_.emplace(seg->base, std::move(seg));
    reserved_ += size;
    free_set_for(small).insert(raw);
    stats_.reserved_high_water = std::max(stats_.reserved_high_water, reserved_);
    return raw;
  }

  // `b` is in its free set and usable on the requesting stream (directly or after an event wait).
  void* hand_out_locked(block* b, std::size_t rounded, bool reused) {
    free_set& set = free_set_for(b->seg->small);
    set.erase(b);
    const std::size_t remainder = b->size - rounded;
    if (remainder >= (b->seg->small ? small_split_min : large_split_min)) {
      auto rest = std::make_unique<block>(block{b->ptr + rounded, remainder, b->seg});
      rest->owned = b->owned;
      rest->owner = b->owner;
      rest->prev = b;
      rest->next = b->next;
      if (b->next != nullptr) b->next->prev = rest.get();
      b->next = rest.get();
      b->size = rounded;
      set.insert(rest.get());
      blocks_.emplace(rest->ptr, std::move(rest));
    }
    b->free = false;
    b->owned = false;
    in_use_ += b->size;
    ++stats_.allocations;
    if (reused) ++stats_.reuses;
    stats_.high_water = std::max(stats_.high_water, in_use_);
    stats_.reserved_high_water = std::max(stats_.reserved_high_water, reserved_);
    return b->ptr;
  }

  block* live_block_locked(void* ptr, const char* what) {
    const auto it = blocks_.find(static_cast<char*>(ptr));
    if (it == blocks_.end() || it->second->free) {
      std::ostringstream message;
      message << "caching_pool::" << what << ": " << ptr << " is not a live block of this pool";
      throw internal_error(message.str());
    }
    return it->second.get();
  }

  void free_block_locked(block* b, bool owned, stream_handle owner) {
    b->free = true;
    b->owned = owned;
    b->owner = owner;
    free_set& set = free_set_for(b->seg->small);
    if (b->next != nullptr && b->next->free && mergeable(b, b->next)) {
      block* n = b->next;
      set.erase(n);
      merge_owner(b, n);
      b->size += n->size;
      b->next = n->next;
      if (n->next != nullptr) n->next->prev = b;
      blocks_.erase(n->ptr);
    }
    if (b->prev != nullptr && b->prev->free && mergeable(b, b->prev)) {
      block* p = b->prev;
      set.erase(p);
      merge_owner(p, b);
      p->size += b->size;
      p->next = b->next;
      if (b->next != nullptr) b->next->prev = p;
      blocks_.erase(b->ptr);
      b = p;
    }
    set.insert(b);
  }

  // A free block's tag is a promise that only its stream may touch it yet; a successful
  // synchronize of that stream fulfils it for every block with that tag.
  void untag_locked(stream_handle stream) {
    for (auto& [ptr, b] : blocks_) {
      if (b->free && b->owned && b->owner == stream) b->owned = false;
    }
  }

  std::size_t release_cached_locked() {
    std::size_t released = 0;
    std::map<stream_handle, bool> synced;  // stream -> synchronize succeeded
    for (auto it = segments_.begin(); it != segments_.end();) {
      segment* seg = it->second.get();
      block* first = blocks_.at(seg->base).get();
      bool all_free = true;
      std::vector<stream_handle> tags;
      for (block* b = first; b != nullptr; b = b->next) {
        if (!b->free) {
          all_free = false;
          break;
        }
        if (b->owned) tags.push_back(b->owner);
      }
      bool safe = all_free;
      for (auto* tag : tags) {
        if (!safe) break;
        auto [entry, inserted] = synced.emplace(tag, false);
        if (inserted) {
          entry->second = !runtime_.is_capturing(tag) && runtime_.synchronize_stream(tag) == status::ok;
          if (entry->second) untag_locked(tag);
        }
        safe = entry->second;
      }
      if (!safe) {
        ++it;
        continue;
      }
      free_set& set = free_set_for(seg->small);
      for (block* b = first; b != nullptr;) {
        block* next = b->next;
        set.erase(b);
        blocks_.erase(b->ptr);
        b = next;
      }
      // A failed cudaFree leaves the memory in an unknown state; it is dropped from the pool either
      // way (never handed out again), and only a success counts as a driver free.
      if (runtime_.free(seg->base) == status::ok) ++stats_.driver_frees;
      reserved_ -= seg->size;
      released += seg->size;
      it = segments_.erase(it);
    }
    return released;
  }

  [[noreturn]] void throw_oom_locked(std::size_t bytes, stream_handle stream) const {
    std::ostringstream message;
    message << "device allocation of " << bytes << " bytes on stream " << stream << " failed after draining "
            << "retirements and releasing cached blocks; pool holds " << in_use_ << " bytes in use and "
            << (reserved_ - in_use_) << " bytes cached";
    throw out_of_memory(message.str());
  }

  [[noreturn]] void throw_oom(std::size_t bytes, stream_handle stream) const {
    std::lock_guard lock(mutex_);
    throw_oom_locked(bytes, stream);
  }

  device_runtime& runtime_;
  std::atomic<retirement_queue*> queue_;
  mutable std::mutex mutex_;
  std::map<const char*, std::unique_ptr<segment>> segments_;
  std::map<const char*, std::unique_ptr<block>> blocks_;  // every block, free or live, by address
  free_set small_free_;
  free_set large_free_;
  std::size_t in_use_ = 0;
  std::size_t reserved_ = 0;  // bytes held from the driver
  pool_stats stats_;
};

caching_pool::caching_pool(device_runtime& runtime, retirement_queue* queue)
    : impl_(std::make_unique<impl>(runtime, queue)) {}

caching_pool::~caching_pool() = default;

void caching_pool::set_retirement_queue(retirement_queue* queue) noexcept { impl_->set_queue(queue); }

void* caching_pool::allocate(std::size_t bytes, stream_handle stream) { return impl_->allocate(bytes, stream); }

void caching_pool::deallocate(void* ptr, stream_handle stream) { impl_->deallocate(ptr, true, stream, "deallocate"); }

void caching_pool::deallocate_unowned(void* ptr) { impl_->deallocate(ptr, false, nullptr, "deallocate_unowned"); }

std::size_t caching_pool::size_of_block(const void* ptr) const { return impl_->size_of_block(ptr); }

std::size_t caching_pool::release_cached() { return impl_->release_cached(); }

pool_stats caching_pool::stats() const { return impl_->stats(); }

}  // namespace tnrt::device
