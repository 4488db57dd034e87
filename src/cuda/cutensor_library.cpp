#include "cuda/cutensor_library.hpp"

#include <cstring>

#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

cudaDataType_t data_type(dtype t) noexcept {
  switch (t) {
    case dtype::f32:
      return CUDA_R_32F;
    case dtype::f64:
      return CUDA_R_64F;
    case dtype::c64:
      return CUDA_C_32F;
    case dtype::c128:
      break;
  }
  return CUDA_C_64F;
}

// cuTENSOR reads alpha/beta in the operation's scalar type; a complex 1 starts with a real 1, so
// one 16-byte buffer serves every type.
struct scalar_one {
  alignas(16) unsigned char bytes[16] = {};
  explicit scalar_one(dtype t) noexcept {
    if (is_double(t)) {
      const double one = 1.0;
      std::memcpy(bytes, &one, sizeof one);
    } else {
      const float one = 1.0F;
      std::memcpy(bytes, &one, sizeof one);
    }
  }
};

cutensorTensorDescriptor_t make_descriptor(const cutensor_api& api, cutensorHandle_t h, const strided_operand& o,
                                           dtype t, std::uint32_t alignment) {
  cutensorTensorDescriptor_t d = nullptr;
  TNRT_CUTENSOR(api.cutensorCreateTensorDescriptor(h, &d, static_cast<std::uint32_t>(o.modes.size()), o.extents.data(),
                                                   o.strides.data(), data_type(t), alignment));
  return d;
}

}  // namespace

plan_entry::plan_entry(const cutensor_api& api, cutensorHandle_t handle, const lowered_step& s, dtype t,
                       const device::plan_options& o)
    : api_(&api), kind_(s.kind), type_(t) {
  try {
    const cutensorComputeDescriptor_t compute = is_double(t) ? api.compute_64f : api.compute_32f;
    // Reduced precision (opt-in) for single-precision contractions only.
    const cutensorComputeDescriptor_t contract_compute = is_double(t) || o.precision == 0 ? compute
                                                         : o.precision == 1                ? api.compute_tf32
                                                                                           : api.compute_3xtf32;
    desc_a_ = make_descriptor(api, handle, s.a, t, o.alignment);
    desc_d_ = make_descriptor(api, handle, s.d, t, o.alignment);
    if (s.kind == lowered_kind::contraction) {
      desc_b_ = make_descriptor(api, handle, s.b, t, o.alignment);
      // C and D are the same buffer with beta = 0, so C is never read.
      TNRT_CUTENSOR(api.cutensorCreateContraction(
          handle, &op_, desc_a_, s.a.modes.data(), CUTENSOR_OP_IDENTITY, desc_b_, s.b.modes.data(),
          CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(), contract_compute));
    } else {
      TNRT_CUTENSOR(api.cutensorCreateReduction(handle, &op_, desc_a_, s.a.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_,
                                                s.d.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(),
                                                CUTENSOR_OP_ADD, compute));
    }
    TNRT_CUTENSOR(api.cutensorCreatePlanPreference(handle, &pref_, static_cast<cutensorAlgo_t>(o.algo),
                                                   o.jit ? CUTENSOR_JIT_MODE_DEFAULT : CUTENSOR_JIT_MODE_NONE));
    if (o.kernel_rank > 0) {
      const std::int32_t rank = o.kernel_rank;
      TNRT_CUTENSOR(api.cutensorPlanPreferenceSetAttribute(handle, pref_, CUTENSOR_PLAN_PREFERENCE_KERNEL_RANK, &rank,
                                                           sizeof rank));
    }
    if (o.autotune) {
      const cutensorAutotuneMode_t mode = CUTENSOR_AUTOTUNE_MODE_INCREMENTAL;
      TNRT_CUTENSOR(api.cutensorPlanPreferenceSetAttribute(handle, pref_, CUTENSOR_PLAN_PREFERENCE_AUTOTUNE_MODE, &mode,
                                                           sizeof mode));
      const std::int32_t count = 4;
      TNRT_CUTENSOR(api.cutensorPlanPreferenceSetAttribute(handle, pref_, CUTENSOR_PLAN_PREFERENCE_INCREMENTAL_COUNT,
                                                           &count, sizeof count));
    }
    std::uint64_t estimate = 0;
    TNRT_CUTENSOR(api.cutensorEstimateWorkspaceSize(handle, op_, pref_, CUTENSOR_WORKSPACE_DEFAULT, &estimate));
    TNRT_CUTENSOR(api.cutensorCreatePlan(handle, &plan_, op_, pref_, estimate));
    // The plan's exact need, never the estimate (which can be far larger).
    TNRT_CUTENSOR(api.cutensorPlanGetAttribute(handle, plan_, CUTENSOR_PLAN_REQUIRED_WORKSPACE, &workspace_bytes_,
                                               sizeof workspace_bytes_));
  } catch (...) {
    release();
    throw;
  }
}

plan_entry::~plan_entry() { release(); }

void plan_entry::release() noexcept {
  if (plan_ != nullptr) (void)api_->cutensorDestroyPlan(plan_);
  if (pref_ != nullptr) (void)api_->cutensorDestroyPlanPreference(pref_);
  if (op_ != nullptr) (void)api_->cutensorDestroyOperationDescriptor(op_);
  for (auto* d : {desc_a_, desc_b_, desc_d_})
    if (d != nullptr) (void)api_->cutensorDestroyTensorDescriptor(d);
  plan_ = nullptr;
  pref_ = nullptr;
  op_ = nullptr;
  desc_a_ = desc_b_ = desc_d_ = nullptr;
}

cutensor_library::cutensor_library(const cutensor_api& api) : api_(&api) {
  TNRT_CUTENSOR(api_->cutensorCreate(&handle_));
}

cutensor_library::~cutensor_library() {
  if (handle_ != nullptr) (void)api_->cutensorDestroy(handle_);
}

std::shared_ptr<device::library_plan> cutensor_library::plan(const lowered_step& s, dtype t,
                                                             const device::plan_options& o) {
  return std::make_shared<plan_entry>(*api_, handle_, s, t, o);
}

void cutensor_library::enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace,
                               std::uint64_t workspace_bytes, device::stream_handle stream) {
  // Every plan reaching here came from plan() above (the engine's cache holds nothing else).
  const auto& e = static_cast<const plan_entry&>(p);
  const auto s = static_cast<cudaStream_t>(stream);
  const scalar_one one(e.type());
  alignas(16) static constexpr unsigned char zero[16] = {};
  if (e.kind() == lowered_kind::contraction) {
    TNRT_CUTENSOR(
        api_->cutensorContract(handle_, e.plan(), one.bytes, a, b, zero, d, d, workspace, workspace_bytes, s));
  } else {
    TNRT_CUTENSOR(api_->cutensorReduce(handle_, e.plan(), one.bytes, a, zero, d, d, workspace, workspace_bytes, s));
  }
}

}  // namespace tnrt::cuda
