#pragma once
// Compile-time timing on one stream (compiled_program): two events around what a callable enqueues,
// waited for. Two ways (options::step_timing):
// - `enqueue`: the events go around the enqueue as it happens. The GPU reaches the first event at
//   once on an idle stream, so the time holds the host's enqueue as well as the GPU's work. Right
//   for a whole program's replay (one graph launch, which a caller pays too).
// - `device`: a spin kernel holds the stream first, for longer than the host takes to enqueue the
//   first event, the work and the second event, so the events see the GPU's work back to back, as a
//   CUDA graph replays it. A step of a few microseconds timed the other way measured mostly its
//   library's host cost (cuTENSOR's, cuBLAS's) and its noise. When the host took longer than the
//   spin (checked on the host's clock), the spin doubles, up to max_lead_ns, and the step is timed
//   again.
#include <chrono>

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/event_owner.hpp"

namespace tnrt::cuda {

/// Holds `stream` for `ns` nanoseconds of GPU time (one thread reading %globaltimer). Checks the launch.
void launch_spin(cudaStream_t stream, unsigned long long ns);

class step_timer {
 public:
  static constexpr long long first_lead_ns = 50'000;
  static constexpr long long max_lead_ns = 3'200'000;

  explicit step_timer(bool device_time) : device_(device_time) {
    cudaEvent_t raw = nullptr;
    TNRT_CUDA(cudaEventCreate(&raw));
    e0_.reset(raw);
    TNRT_CUDA(cudaEventCreate(&raw));
    e1_.reset(raw);
  }

  /// Milliseconds of what `enqueue` puts on `st`. `warm`: a warm-up run whose time is not used (no spin).
  template <class F>
  float ms(cudaStream_t st, F&& enqueue, bool warm = false) {
    if (!device_ || warm) {
      between_events(st, enqueue);
      return elapsed();
    }
    for (;;) {
      const auto h0 = std::chrono::steady_clock::now();
      launch_spin(st, static_cast<unsigned long long>(lead_ns_));
      between_events(st, enqueue);
      const auto host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - h0).count();
      const float t = elapsed();
      if (host_ns <= lead_ns_ || lead_ns_ >= max_lead_ns) return t;
      lead_ns_ *= 2;  // the host was still enqueuing when the spin ended: longer, and again
      ++doublings_;
    }
  }
  /// How long the spin is now, and how many times it doubled.
  [[nodiscard]] long long lead_ns() const noexcept { return lead_ns_; }
  [[nodiscard]] int doublings() const noexcept { return doublings_; }

 private:
  template <class F>
  void between_events(cudaStream_t st, F& enqueue) {
    TNRT_CUDA(cudaEventRecord(e0_.get(), st));
    enqueue();
    TNRT_CUDA(cudaEventRecord(e1_.get(), st));
  }
  /// Waits for the second event: the milliseconds between the two.
  float elapsed() {
    TNRT_CUDA(cudaEventSynchronize(e1_.get()));
    float t = 0;
    TNRT_CUDA(cudaEventElapsedTime(&t, e0_.get(), e1_.get()));
    return t;
  }

  bool device_;
  long long lead_ns_ = first_lead_ns;
  int doublings_ = 0;
  event_owner e0_, e1_;
};

}  // namespace tnrt::cuda
