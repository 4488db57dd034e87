#include "cuda/cuda_runtime.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  std::string c(call);
  if (auto p = c.find('('); p != std::string::npos) c.resize(p);
  const std::string msg = "CUDA " + c + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line);
  if (e == cudaErrorMemoryAllocation) throw out_of_memory(msg);
  throw device_error(msg);
}

namespace {
using device::status;
inline cudaStream_t as_stream(device::stream_handle s) noexcept { return static_cast<cudaStream_t>(s); }
inline cudaEvent_t as_event(device::event_handle e) noexcept { return static_cast<cudaEvent_t>(e); }
inline status to_status(cudaError_t e) noexcept {
  if (e == cudaSuccess) return status::ok;
  (void)cudaGetLastError();  // clear the sticky-free error so it does not leak into later checks
  return status::error;
}
}  // namespace

cuda_runtime::cuda_runtime(int device) : device_(device) {}

bool cuda_runtime::take_fault(fault kind) noexcept {
  auto& f = faults_[static_cast<int>(kind)];
  std::uint32_t n = f.load();
  while (n > 0) {
    if (f.compare_exchange_weak(n, n - 1)) return true;
  }
  return false;
}

status cuda_runtime::allocate(void** ptr, std::size_t bytes) {
  if (take_fault(fault::allocate)) return status::error;
  ++driver_allocs_;
  return to_status(cudaMalloc(ptr, bytes == 0 ? 256 : bytes));
}
status cuda_runtime::free(void* ptr) {
  ++driver_frees_;
  return to_status(cudaFree(ptr));
}
status cuda_runtime::memory_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  return to_status(cudaMemGetInfo(free_bytes, total_bytes));
}
status cuda_runtime::create_event(device::event_handle* event) {
  if (take_fault(fault::create_event)) return status::error;
  cudaEvent_t e = nullptr;
  const status s = to_status(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  *event = e;
  return s;
}
status cuda_runtime::record_event(device::event_handle event, device::stream_handle stream) {
  if (take_fault(fault::record_event)) return status::error;
  return to_status(cudaEventRecord(as_event(event), as_stream(stream)));
}
status cuda_runtime::query_event(device::event_handle event) {
  if (take_fault(fault::query_event)) return status::error;
  ++event_queries_;
  const cudaError_t e = cudaEventQuery(as_event(event));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return status::not_ready;
  }
  return to_status(e);
}
status cuda_runtime::synchronize_event(device::event_handle event) {
  if (take_fault(fault::synchronize_event)) return status::error;
  ++event_syncs_;
  return to_status(cudaEventSynchronize(as_event(event)));
}
status cuda_runtime::destroy_event(device::event_handle event) { return to_status(cudaEventDestroy(as_event(event))); }
status cuda_runtime::synchronize_stream(device::stream_handle stream) {
  if (take_fault(fault::synchronize_stream)) return status::error;
  ++stream_syncs_;
  return to_status(cudaStreamSynchronize(as_stream(stream)));
}
status cuda_runtime::stream_wait_event(device::stream_handle stream, device::event_handle event) {
  return to_status(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0));
}
bool cuda_runtime::is_capturing(device::stream_handle stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(as_stream(stream), &st) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return st != cudaStreamCaptureStatusNone;
}

cuda_runtime::sync_counts cuda_runtime::counts() const noexcept {
  return {stream_syncs_.load(), event_syncs_.load(), driver_allocs_.load(), driver_frees_.load(), event_queries_.load()};
}

}  // namespace tnrt::cuda
