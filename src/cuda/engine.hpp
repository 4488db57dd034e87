#pragma once
// The cuTENSOR engine: one CUDA stream, the cuTENSOR library (src/cuda/cutensor_library.hpp), the
// caching pool, the retirement queue, the shared workspace and the structural plan cache
// (src/device/plan_cache.hpp). Lowered steps go in; contractions are
// enqueued on the stream; nothing on this path waits for the GPU.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "core/step_lowering.hpp"
#include "cuda/cublas_api.hpp"
#include "cuda/cuda_runtime.hpp"
#include "cuda/cutensor_api.hpp"
#include "cuda/cutensor_library.hpp"
#include "device/plan_cache.hpp"
#include "tnrt/options.hpp"
#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"

namespace tnrt::cuda {

class engine {
 public:
  explicit engine(const options& opt);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// The cached plan for a lowered step (built on a miss), for operands `alignment`-byte aligned.
  /// The plan is a plan_entry (this engine's library builds nothing else).
  std::shared_ptr<device::library_plan> plan(const lowered_step& s, dtype t, std::uint32_t alignment = max_alignment);
  /// The same with the library's algorithm `algo` instead of the options', and its kernel of rank
  /// `kernel_rank` by the library's own model (0: the best; compiled timing tries the runners-up).
  std::shared_ptr<device::library_plan> plan_with_algo(const lowered_step& s, dtype t, int algo, int kernel_rank = 0,
                                                       std::uint32_t alignment = max_alignment);
  /// The step's plan with cuTENSOR's JIT kernel (default algorithm; compiled's options::jit_steps).
  std::shared_ptr<device::library_plan> plan_jit(const lowered_step& s, dtype t, std::uint32_t alignment = max_alignment);
  /// Enqueues `p` on `stream` with explicit workspace (compiled mode, graph capture).
  void enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace, std::uint64_t workspace_bytes,
               cudaStream_t stream);
  void enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace, std::uint64_t workspace_bytes) {
    enqueue(p, a, b, d, workspace, workspace_bytes, stream_);
  }
  /// Eager: plan lookup (by the operands' common alignment), workspace from the stream's shared
  /// scratch slot, enqueue on `stream`.
  void execute(const lowered_step& s, dtype t, const void* a, const void* b, void* d, cudaStream_t stream);
  void execute(const lowered_step& s, dtype t, const void* a, const void* b, void* d) { execute(s, t, a, b, d, stream_); }

  /// The largest alignment a descriptor promises: the pool's.
  static constexpr std::uint32_t max_alignment = 256;
  /// The largest power of two <= max_alignment dividing every non-null pointer.
  static std::uint32_t alignment_of(const void* a, const void* b, const void* d) noexcept;

  /// The shared-workspace slot of `stream`: one per stream seen (up to the workspace's slots, then
  /// shared round-robin; a shared slot moving between streams retires its buffer on the old one).
  std::size_t slot_of(cudaStream_t stream);

  /// Blocking: the retirement queue drained, the stream synchronized, deferred destroys done.
  void synchronize();
  void clear_caches();
  void set_plan_cache_entries(std::size_t n);
  /// The eager analysis memo's outcome for one call (counted in stats().api).
  void count_analysis(bool hit) noexcept { ++(hit ? analysis_hits_ : analysis_misses_); }
  /// Eager's layout learning (src/cuda/eager.cpp): a timed trial call, and a network decided on `l`.
  void count_layout_trial() noexcept { ++layout_trials_; }
  void count_layout_learned(layout_policy l) noexcept { ++layouts_learned_[static_cast<std::size_t>(l)]; }
  /// Eager's cuBLAS route: a timed trial call, and the steps a network kept on cuBLAS once decided.
  void count_route_trial() noexcept { ++route_trials_; }
  void count_route_steps(std::uint64_t n) noexcept { route_steps_ += n; }
  /// Of those, tiled steps that run on cuTENSOR instead of the tiled kernel.
  void count_route_tiled(std::uint64_t n) noexcept { route_tiled_ += n; }
  /// The step timing picked `n` steps saving `saving_ms` together; the whole-call check then timed
  /// the call without them at `library_ms` and with them at `route_ms`.
  void count_route_picked(std::uint64_t n, double saving_ms) noexcept {
    route_picked_ += n;
    route_saving_us_ += to_us(saving_ms);
  }
  void count_route_check(double library_ms, double route_ms) noexcept {
    route_check_library_us_ += to_us(library_ms);
    route_check_route_us_ += to_us(route_ms);
  }
  /// Fault injection (tests): the next `n` plan builds fail as a cuTENSOR plan failure would.
  void inject_plan_failures(int n) noexcept { plans_->inject_failures(n); }

  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  [[nodiscard]] device::stream_handle stream_handle() const noexcept { return stream_; }
  [[nodiscard]] device::caching_pool& pool() noexcept { return *pool_; }
  [[nodiscard]] device::retirement_queue& queue() noexcept { return *queue_; }
  [[nodiscard]] device::shared_workspace& workspace() noexcept { return *workspace_; }
  [[nodiscard]] cuda_runtime& runtime() noexcept { return *runtime_; }
  /// The device's whole memory in bytes (asked once, then kept); 0 when the device cannot say.
  [[nodiscard]] std::size_t device_total_bytes();
  [[nodiscard]] const options& opts() const noexcept { return opt_; }
  [[nodiscard]] counters stats() const;
  [[nodiscard]] const cutensor_api& api() const noexcept { return *api_; }
  [[nodiscard]] device::plan_cache& plans() noexcept { return *plans_; }
  /// The engine's cuBLAS handle, made on first use on the engine's device; null when cuBLAS cannot
  /// be opened or the handle cannot be made (blas_note() says why; nothing is retried).
  blas_handle* blas();
  [[nodiscard]] const std::string& blas_note() const noexcept { return blas_note_; }

 private:
  options opt_;
  const cutensor_api* api_;
  std::unique_ptr<cuda_runtime> runtime_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<device::caching_pool> pool_;
  std::unique_ptr<device::retirement_queue> queue_;
  std::unique_ptr<device::shared_workspace> workspace_;
  std::unique_ptr<cutensor_library> library_;
  std::unique_ptr<device::plan_cache> plans_;  // after library_: its plans go first
  std::unique_ptr<blas_handle> blas_;
  bool blas_tried_ = false;
  std::string blas_note_;
  std::vector<cudaStream_t> slot_streams_;
  std::size_t device_total_bytes_ = 0;  // 0: not asked yet (or the device cannot say)
  std::uint64_t analysis_hits_ = 0, analysis_misses_ = 0;
  std::uint64_t layout_trials_ = 0;
  std::uint64_t route_trials_ = 0, route_steps_ = 0, route_tiled_ = 0;
  std::uint64_t route_picked_ = 0, route_saving_us_ = 0, route_check_library_us_ = 0, route_check_route_us_ = 0;
  static std::uint64_t to_us(double ms) noexcept { return ms > 0 ? static_cast<std::uint64_t>(ms * 1000.0 + 0.5) : 0; }
  std::uint64_t layouts_learned_[layout_count] = {};  // by layout_policy
};

/// Throws device_error when no CUDA device is usable (with the reason).
void require_device(int device);
/// Throws out_of_memory, before any plan is built, when one tensor of p (an input, a step's result)
/// is larger than the whole device: cuTENSOR is never asked to plan it (paths whose intermediates
/// reach 2^50 elements and more crashed its plan creation). Slicing is the way out, and the message
/// says so. Nothing when the device cannot say its size.
void refuse_tensors_beyond_device(engine& eng, const problem& p);
/// "" or the reason no CUDA device is usable.
std::string device_unavailable_reason(int device);

}  // namespace tnrt::cuda
