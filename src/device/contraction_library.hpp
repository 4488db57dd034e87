#pragma once
// The contraction-library seam: what the plan cache needs from a strided tensor library (cuTENSOR),
// CUTLASS-style: plan a step once ("how much workspace?"), then enqueue the plan as often as needed
// ("run"). One implementation runs over cuTENSOR (src/cuda/cutensor_library.hpp); a fake
// (tests/support/fake_library.hpp) lets the plan cache run on any machine with builds, destroys and
// failures under the test's control.
//
// Here, not in include/tnrt/device/, because a plan is built from a lowered_step
// (src/core/step_lowering.hpp), which is not part of the public API.
#include <cstdint>
#include <memory>

#include "core/step_lowering.hpp"
#include "tnrt/device/runtime.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::device {

/// What a plan depends on besides the step and the element type; all of it is part of the plan
/// cache's key.
struct plan_options {
  bool jit = false;               // library JIT kernels
  bool autotune = false;          // library incremental autotuning
  int algo = -1;                  // library algorithm id (-1: its default heuristic)
  std::uint32_t alignment = 256;  // byte alignment promised for A, B and D (a power of two <= 256)
  /// Single-precision contractions' compute type: 0 full (32F), 1 TF32, 2 3xTF32 (opt-in only;
  /// double precision and reductions always compute in full).
  std::uint8_t precision = 0;
  /// 0: the library's best kernel of `algo` by its own model; k > 0: its (k+1)-th best (cuTENSOR's
  /// CUTENSOR_PLAN_PREFERENCE_KERNEL_RANK), for compiled programs that time the runners-up.
  int kernel_rank = 0;
};

/// One planned operation. Destroying it releases the library's objects; that may block, so the plan
/// cache defers destroying what it evicts (see plan_cache).
class library_plan {
 public:
  virtual ~library_plan() = default;
  library_plan() = default;
  library_plan(const library_plan&) = delete;
  library_plan& operator=(const library_plan&) = delete;

  /// The exact workspace the plan needs at enqueue (never an estimate).
  [[nodiscard]] virtual std::uint64_t workspace_bytes() const noexcept = 0;
};

class contraction_library {
 public:
  virtual ~contraction_library() = default;
  contraction_library() = default;
  contraction_library(const contraction_library&) = delete;
  contraction_library& operator=(const contraction_library&) = delete;

  /// A new plan for `s` in type `t`. Throws (device_error, not_supported) when the library cannot
  /// plan it; nothing is left behind then.
  virtual std::shared_ptr<library_plan> plan(const lowered_step& s, dtype t, const plan_options& o) = 0;
  /// Enqueues `p` (built by this library) on `stream`: D = A B (contraction) or D = sum A
  /// (reduction), with `workspace_bytes` >= p.workspace_bytes() of scratch. Does not wait.
  virtual void enqueue(const library_plan& p, const void* a, const void* b, void* d, void* workspace,
                       std::uint64_t workspace_bytes, stream_handle stream) = 0;
};

}  // namespace tnrt::device
