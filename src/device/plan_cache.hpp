#pragma once
// The structural plan cache: a bounded LRU map from a step's full structural key (lowered step,
// element type, plan options) to the contraction library's plan, over the contraction_library seam.
//
// Contracts:
//  - A key is compared in full; its hash only finds the bucket, so two steps whose keys hash alike
//    never share a plan.
//  - A plan is held by shared_ptr: a compiled program holding one keeps it alive after eviction, so
//    pinned plans survive without the cache growing past its bound.
//  - A build that throws (the library's failure or an injected one) counts a miss and a failed
//    build and changes nothing else.
//  - Dropped plans (eviction, a smaller capacity, clear) are not destroyed on the spot: destroying
//    a library plan can block, so they wait in a graveyard until destroy_evicted(), which the
//    engine calls once its stream is idle (engine::synchronize, engine::clear_caches). The graveyard
//    is bounded (graveyard_limit): past it, everything in it is destroyed at once (safe, only slower:
//    enqueued work does not need the plan object after launch).
// Not thread-safe: the owner serializes access (the CUDA backend serializes host enqueue).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/lru_cache.hpp"
#include "device/contraction_library.hpp"
#include "tnrt/options.hpp"

namespace tnrt::device {

class plan_cache {
 public:
  static constexpr std::size_t graveyard_limit = 256;
  /// Host metadata counted per cached plan in retained_bytes (an estimate; never workspace).
  static constexpr std::size_t plan_metadata_bytes = 4096;

  /// Plans from `library` (which must outlive the cache); at most `capacity` entries (0 means 1).
  plan_cache(contraction_library& library, std::size_t capacity);
  plan_cache(const plan_cache&) = delete;
  plan_cache& operator=(const plan_cache&) = delete;

  /// The cached plan for (s, t, o), built by the library on a miss.
  std::shared_ptr<library_plan> plan(const lowered_step& s, dtype t, const plan_options& o);

  /// Shrinking evicts least recently used entries into the graveyard.
  void set_capacity(std::size_t capacity);
  /// Every entry into the graveyard; counts one clear (no evictions).
  void clear();
  /// Destroys the graveyard (the plans nobody else holds). Call when no enqueued work is pending.
  void destroy_evicted() noexcept;
  /// Fault injection (tests): the next `n` builds fail with a device_error naming the injection.
  void inject_failures(int n) noexcept { injected_failures_ = n; }

  [[nodiscard]] plan_cache_stats stats() const noexcept;
  [[nodiscard]] std::uint64_t failed_builds() const noexcept { return failed_builds_; }
  /// Dropped plans waiting in the graveyard.
  [[nodiscard]] std::size_t evicted_pending() const noexcept { return graveyard_.size(); }
  /// Cached plans from most to least recently used.
  [[nodiscard]] std::vector<std::shared_ptr<library_plan>> plans() const { return cache_.values(); }

  /// The full key of (s, t, o) into `out` (cleared first): the lowered step's structural key, then
  /// the type, the jit/autotune flags, the algorithm and the alignment.
  static void key_into(const lowered_step& s, dtype t, const plan_options& o, std::vector<std::int64_t>& out);

 private:
  void on_evict(std::shared_ptr<library_plan>& p);

  contraction_library* library_;
  // Before cache_: cache_'s eviction callback fills it.
  std::vector<std::shared_ptr<library_plan>> graveyard_;
  lru_cache<library_plan> cache_;
  std::vector<std::int64_t> key_scratch_;  // reused: a hit allocates nothing
  int injected_failures_ = 0;
  std::uint64_t failed_builds_ = 0;
};

}  // namespace tnrt::device
