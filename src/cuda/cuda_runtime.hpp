#pragma once
// The device-runtime seam over the CUDA runtime, with counters of every host synchronization it
// makes and optional injected failures (for the fault-injection tests on a real GPU).
#include <atomic>
#include <cstdint>

#include "tnrt/device/runtime.hpp"

namespace tnrt::cuda {

enum class fault : std::uint8_t { create_event, record_event, query_event, synchronize_event, synchronize_stream, allocate, count_ };

class cuda_runtime final : public device::device_runtime {
 public:
  explicit cuda_runtime(int device);
  ~cuda_runtime() override = default;

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

  /// The next `n` calls of that kind fail (without calling CUDA).
  void inject(fault kind, std::uint32_t n) noexcept { faults_[static_cast<int>(kind)].store(n); }

  struct sync_counts {
    std::uint64_t stream_syncs = 0, event_syncs = 0, driver_allocs = 0, driver_frees = 0, event_queries = 0;
  };
  [[nodiscard]] sync_counts counts() const noexcept;
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  bool take_fault(fault kind) noexcept;
  int device_;
  std::atomic<std::uint32_t> faults_[static_cast<int>(fault::count_)] = {};
  std::atomic<std::uint64_t> stream_syncs_{0}, event_syncs_{0}, driver_allocs_{0}, driver_frees_{0}, event_queries_{0};
};

}  // namespace tnrt::cuda
