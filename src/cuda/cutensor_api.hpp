#pragma once
// cuTENSOR, opened at run time with dlopen: the same tnrt binary runs where there is no cuTENSOR
// (and says so when asked for --device cuda). Types and signatures come from the installed wheel's
// header (never committed); only the entry points tnrt uses are resolved.
#include <cutensor.h>

#include <string>

namespace tnrt::cuda {

struct cutensor_api {
#define TNRT_CUTENSOR_FN(name) decltype(&::name) name = nullptr;
  TNRT_CUTENSOR_FN(cutensorCreate)
  TNRT_CUTENSOR_FN(cutensorDestroy)
  TNRT_CUTENSOR_FN(cutensorCreateTensorDescriptor)
  TNRT_CUTENSOR_FN(cutensorDestroyTensorDescriptor)
  TNRT_CUTENSOR_FN(cutensorCreateContraction)
  TNRT_CUTENSOR_FN(cutensorCreateReduction)
  TNRT_CUTENSOR_FN(cutensorCreatePermutation)
  TNRT_CUTENSOR_FN(cutensorDestroyOperationDescriptor)
  TNRT_CUTENSOR_FN(cutensorCreatePlanPreference)
  TNRT_CUTENSOR_FN(cutensorDestroyPlanPreference)
  TNRT_CUTENSOR_FN(cutensorPlanPreferenceSetAttribute)
  TNRT_CUTENSOR_FN(cutensorEstimateWorkspaceSize)
  TNRT_CUTENSOR_FN(cutensorCreatePlan)
  TNRT_CUTENSOR_FN(cutensorDestroyPlan)
  TNRT_CUTENSOR_FN(cutensorPlanGetAttribute)
  TNRT_CUTENSOR_FN(cutensorContract)
  TNRT_CUTENSOR_FN(cutensorReduce)
  TNRT_CUTENSOR_FN(cutensorPermute)
  TNRT_CUTENSOR_FN(cutensorGetErrorString)
  TNRT_CUTENSOR_FN(cutensorGetVersion)
#undef TNRT_CUTENSOR_FN
  cutensorComputeDescriptor_t compute_32f = nullptr;
  cutensorComputeDescriptor_t compute_64f = nullptr;
  cutensorComputeDescriptor_t compute_tf32 = nullptr;  // reduced precision, opt-in (options::compute_precision)
  cutensorComputeDescriptor_t compute_3xtf32 = nullptr;
  std::string path;     // the file that was opened
  std::size_t version = 0;
};

/// The process-wide table, opened on first use from $TNRT_CUTENSOR_PATH, the default search path
/// (LD_LIBRARY_PATH), /opt/tnrt-deps/lib and the wheel found at build time. Throws device_error
/// naming what was tried when it cannot be opened.
const cutensor_api& cutensor();
/// "" when cuTENSOR can be opened, else the reason (no throw).
std::string cutensor_unavailable_reason();

/// Throws device_error "cuTENSOR <call> failed: <status string> (<file>:<line>)" on failure.
void check_cutensor(cutensorStatus_t status, const char* call, const char* file, int line);

}  // namespace tnrt::cuda

#define TNRT_CUTENSOR(call) ::tnrt::cuda::check_cutensor((call), #call, __FILE__, __LINE__)
