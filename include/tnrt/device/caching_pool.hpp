#pragma once
// A caching device memory pool over the seam. Freed blocks stay in the pool (cudaFree would
// synchronize the whole device); 256-byte alignment; best fit with splitting and coalescing of
// blocks carved from one driver allocation (see docs/device-layer.md for the policy: 256 B rounding,
// small requests (< 1 MiB) from shared 2 MiB segments, large ones from their own segment rounded to
// 2 MiB; cross-stream reuse of a stream-owned block goes through an event wait, never a host block).
//
// Two ways back into the pool:
//  - deallocate(p, stream): stream-ordered. The block may still be read or written by work already
//    enqueued on `stream`; it is reused at once only by allocations on the same stream, whose work
//    stream order places after that use. Another stream takes it only after waiting (GPU-side) on an
//    event recorded on `stream`.
//  - deallocate_unowned(p): the caller proves no pending work uses the block (the retirement queue
//    calls this once the block's event has completed); it is reusable on any stream.
// Nothing is handed back to the driver while work may still use it: stream-tagged blocks are
// returned only after their stream is synchronized.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tnrt/device/runtime.hpp"

namespace tnrt::device {

class retirement_queue;

struct pool_stats {
  std::size_t bytes_in_use = 0;      // handed out and not yet deallocated
  std::size_t bytes_cached = 0;      // held from the driver but free in the pool
  std::size_t high_water = 0;        // the largest bytes_in_use seen
  std::size_t reserved_high_water = 0;  // the largest bytes_in_use + bytes_cached seen
  std::uint64_t allocations = 0;     // allocate() calls that succeeded
  std::uint64_t reuses = 0;          // of those, served from cached blocks
  std::uint64_t driver_allocations = 0;
  std::uint64_t driver_frees = 0;
  std::uint64_t oom_recoveries = 0;  // driver allocation failed, pool drained/released and retried
};

class caching_pool {
 public:
  /// `queue` (optional) is drained (blocking) when the driver refuses an allocation, so that
  /// retiring blocks can be reused before giving up.
  explicit caching_pool(device_runtime& runtime, retirement_queue* queue = nullptr);
  ~caching_pool();  // releases every cached block; blocks still in use are reported, not freed
  caching_pool(const caching_pool&) = delete;
  caching_pool& operator=(const caching_pool&) = delete;

  void set_retirement_queue(retirement_queue* queue) noexcept;

  /// The rounding every request gets: at least 1 byte, up to a multiple of 256 (memory predictions
  /// count blocks with it). A block is that size unless it is the whole of a large segment whose
  /// rest was too small to split off (then size_of_block reports up to 1 MiB more).
  [[nodiscard]] static constexpr std::size_t block_bytes(std::size_t bytes) noexcept { return (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256; }

  /// At least `bytes` (rounded up to 256), 256-byte aligned, for use on `stream`. bytes == 0 gives a
  /// valid unique pointer too. On a driver failure: drain the retirement queue, release cached
  /// blocks, retry once, then throw out_of_memory naming the request, bytes in use and cached.
  [[nodiscard]] void* allocate(std::size_t bytes, stream_handle stream);
  /// Stream-ordered free (see above). Unknown pointers throw internal_error.
  void deallocate(void* ptr, stream_handle stream);
  /// Free for any stream: the caller guarantees no pending work uses it.
  void deallocate_unowned(void* ptr);
  /// The usable size of a live block.
  [[nodiscard]] std::size_t size_of_block(const void* ptr) const;

  /// Hands every free block whose whole driver allocation is free back to the driver
  /// (synchronizing the streams of stream-tagged blocks first). Returns bytes released.
  std::size_t release_cached();

  [[nodiscard]] pool_stats stats() const;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

/// One block of a pool, owned: deallocated (stream-ordered, on `stream()`) when the owner goes, so
/// a constructor that throws halfway gives back what it took. Move-only.
class pool_block {
 public:
  pool_block() = default;
  pool_block(caching_pool& pool, std::size_t bytes, stream_handle stream) : pool_(&pool), ptr_(pool.allocate(bytes, stream)), stream_(stream) {}
  ~pool_block() { reset(); }
  pool_block(pool_block&& o) noexcept : pool_(o.pool_), ptr_(o.ptr_), stream_(o.stream_) { o.ptr_ = nullptr; }
  pool_block& operator=(pool_block&& o) noexcept {
    if (this != &o) {
      reset();
      pool_ = o.pool_;
      ptr_ = o.ptr_;
      stream_ = o.stream_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  pool_block(const pool_block&) = delete;
  pool_block& operator=(const pool_block&) = delete;

  [[nodiscard]] void* get() const noexcept { return ptr_; }
  [[nodiscard]] stream_handle stream() const noexcept { return stream_; }
  /// Later work that uses the block runs on `stream` (its free is ordered there from now on).
  void set_stream(stream_handle stream) noexcept { stream_ = stream; }
  /// Back to the pool now (stream-ordered). Never throws: a block the pool refuses stays allocated
  /// (a leak, never a race).
  void reset() noexcept {
    if (ptr_ == nullptr) return;
    try {
      pool_->deallocate(ptr_, stream_);
    } catch (...) {
    }
    ptr_ = nullptr;
  }

 private:
  caching_pool* pool_ = nullptr;
  void* ptr_ = nullptr;
  stream_handle stream_ = nullptr;
};

}  // namespace tnrt::device
