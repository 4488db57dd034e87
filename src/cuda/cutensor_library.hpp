#pragma once
// The contraction-library seam over cuTENSOR 2.x: one cuTENSOR handle (owned), plans built from
// lowered steps, contractions and reductions enqueued on a CUDA stream.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/step_lowering.hpp"
#include "cuda/cutensor_api.hpp"
#include "device/contraction_library.hpp"

namespace tnrt::cuda {

//// One cuTENSOR operation, planned: descriptors, operation, plan and its exact workspace size.
/// Destroyed plan first, then the operation, then the descriptors.
class plan_entry final : public device::library_plan {
 public:
  /// `o.alignment`: the byte alignment every descriptor promises for A, B and D (a power of two
  /// <= 256 that divides their addresses).
  plan_entry(const cutensor_api& api, cutensorHandle_t handle, const lowered_step& s, dtype t,
             const device::plan_options& o);
  ~plan_entry() override;

  [[nodiscard]] lowered_kind kind() const noexcept { return kind_; }
  [[nodiscard]] std::uint64_t workspace_bytes() const noexcept override { return workspace_bytes_; }
  [[nodiscard]] cutensorPlan_t plan() const noexcept { return plan_; }
  [[nodiscard]] dtype type() const noexcept { return type_; }

 private:
  void release() noexcept;

  const cutensor_api* api_;
  lowered_kind kind_;
  dtype type_;
  cutensorTensorDescriptor_t desc_a_ = nullptr, desc_b_ = nullptr, desc_d_ = nullptr;
  cutensorOperationDescriptor_t op_ = nullptr;
  cutensorPlanPreference_t pref_ = nullptr;
  cutensorPlan_t plan_ = nullptr;
  std::uint64_t workspace_bytes_ = 0;
};

class cutensor_library final : public device::contraction_library {
 public:
  /// Creates the cuTENSOR handle (on the current device); throws device_error when it cannot.
  explicit cutensor_library(const cutensor_api& api);
  ~cutensor_library() override;  // plans built here may outlive it: destroying one needs no handle

  std::shared_ptr<device::library_plan> plan(const lowered_step& s, dtype t, const device::plan_options& o) override;
  /// `p` must be a plan_entry from this library.
  void enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace,
               std::uint64_t workspace_bytes, device::stream_handle stream) override;

  [[nodiscard]] const cutensor_api& api() const noexcept { return *api_; }

 private:
  const cutensor_api* api_;
  cutensorHandle_t handle_ = nullptr;
};

}  // namespace tnrt::cuda
