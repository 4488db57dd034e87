#pragma once
// The device-runtime seam: everything the device layer (pool, retirement queue, shared workspace)
// needs from CUDA, behind one narrow interface injected through constructors. One implementation
// runs over the CUDA runtime (src/cuda/cuda_runtime.cpp); a fake (tests/support/fake_runtime.hpp)
// lets the layer run on any machine with completion and failures under the test's control.
//
// Calls return a status instead of throwing, because the layer reacts to failures (fall back to a
// stream barrier, leak rather than race): a failure is an expected outcome here.
#include <cstddef>
#include <cstdint>

namespace tnrt::device {

/// Opaque handles: cudaStream_t / cudaEvent_t on the real runtime; small integers on the fake.
using stream_handle = void*;
using event_handle = void*;

enum class status : std::uint8_t {
  ok,         // done; for query_event: the event has completed
  not_ready,  // query_event only: work before the event is still pending
  error,      // the call failed
};

class device_runtime {
 public:
  virtual ~device_runtime() = default;
  device_runtime() = default;
  device_runtime(const device_runtime&) = delete;
  device_runtime& operator=(const device_runtime&) = delete;

  /// Device memory from the driver (cudaMalloc): 256-byte aligned. Synchronous; slow.
  virtual status allocate(void** ptr, std::size_t bytes) = 0;
  /// Back to the driver (cudaFree, which waits for the device).
  virtual status free(void* ptr) = 0;
  /// Free and total device memory in bytes.
  virtual status memory_info(std::size_t* free_bytes, std::size_t* total_bytes) = 0;

  /// An event with timing disabled.
  virtual status create_event(event_handle* event) = 0;
  /// Marks the point after everything enqueued on `stream` so far.
  virtual status record_event(event_handle event, stream_handle stream) = 0;
  /// ok when complete, not_ready while pending, error on failure. Never blocks.
  virtual status query_event(event_handle event) = 0;
  /// Blocks the host until the event completes.
  virtual status synchronize_event(event_handle event) = 0;
  virtual status destroy_event(event_handle event) = 0;

  /// Blocks the host until all work enqueued on `stream` has completed.
  virtual status synchronize_stream(stream_handle stream) = 0;
  /// Makes future work on `stream` wait for `event` (GPU-side; the host does not block).
  virtual status stream_wait_event(stream_handle stream, event_handle event) = 0;
  /// True while `stream` is being captured into a CUDA graph: no event may be polled then.
  virtual bool is_capturing(stream_handle stream) = 0;
};

}  // namespace tnrt::device
