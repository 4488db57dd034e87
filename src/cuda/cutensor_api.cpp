#include "cuda/cutensor_api.hpp"

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/dynamic_library.hpp"
#include "tnrt/errors.hpp"

#ifndef TNRT_CUTENSOR_BUILD_LIBDIR
#define TNRT_CUTENSOR_BUILD_LIBDIR ""
#endif

namespace tnrt::cuda {
namespace {

struct loaded {
  cutensor_api api;
  std::string error;  // empty when loaded
};

loaded open_cutensor() {
  loaded out;
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("TNRT_CUTENSOR_PATH"); p != nullptr && *p != '\0') candidates.emplace_back(p);
  candidates.emplace_back("libcutensor.so.2");
  candidates.emplace_back("/opt/tnrt-deps/lib/libcutensor.so.2");
  if (std::string(TNRT_CUTENSOR_BUILD_LIBDIR).size() > 0) candidates.emplace_back(std::string(TNRT_CUTENSOR_BUILD_LIBDIR) + "/libcutensor.so.2");
  const opened_library opened = open_first(candidates);
  void* lib = opened.handle;
  const std::string& tried = opened.tried;
  out.api.path = opened.path;
  if (lib == nullptr) {
    out.error = "cuTENSOR not found: tried " + tried + "; install it with 'python3 -m pip install cutensor-cu13' or set TNRT_CUTENSOR_PATH";
    return out;
  }
  std::string missing;
  auto& a = out.api;
#define TNRT_RESOLVE(name) resolve_function(lib, #name, a.name, missing);
  TNRT_RESOLVE(cutensorCreate)
  TNRT_RESOLVE(cutensorDestroy)
  TNRT_RESOLVE(cutensorCreateTensorDescriptor)
  TNRT_RESOLVE(cutensorDestroyTensorDescriptor)
  TNRT_RESOLVE(cutensorCreateContraction)
  TNRT_RESOLVE(cutensorCreateReduction)
  TNRT_RESOLVE(cutensorCreatePermutation)
  TNRT_RESOLVE(cutensorDestroyOperationDescriptor)
  TNRT_RESOLVE(cutensorCreatePlanPreference)
  TNRT_RESOLVE(cutensorDestroyPlanPreference)
  TNRT_RESOLVE(cutensorPlanPreferenceSetAttribute)
  TNRT_RESOLVE(cutensorEstimateWorkspaceSize)
  TNRT_RESOLVE(cutensorCreatePlan)
  TNRT_RESOLVE(cutensorDestroyPlan)
  TNRT_RESOLVE(cutensorPlanGetAttribute)
  TNRT_RESOLVE(cutensorContract)
  TNRT_RESOLVE(cutensorReduce)
  TNRT_RESOLVE(cutensorPermute)
  TNRT_RESOLVE(cutensorGetErrorString)
  TNRT_RESOLVE(cutensorGetVersion)
#undef TNRT_RESOLVE
  // The compute descriptors are exported objects: dlsym gives their addresses.
  auto* d32 = static_cast<const cutensorComputeDescriptor_t*>(find_symbol(lib, "CUTENSOR_COMPUTE_DESC_32F", missing));
  auto* d64 = static_cast<const cutensorComputeDescriptor_t*>(find_symbol(lib, "CUTENSOR_COMPUTE_DESC_64F", missing));
  auto* dtf32 = static_cast<const cutensorComputeDescriptor_t*>(find_symbol(lib, "CUTENSOR_COMPUTE_DESC_TF32", missing));
  auto* d3xtf32 = static_cast<const cutensorComputeDescriptor_t*>(find_symbol(lib, "CUTENSOR_COMPUTE_DESC_3XTF32", missing));
  if (!missing.empty()) {
    out.error = "cuTENSOR at " + a.path + " lacks " + missing + " (tnrt needs cuTENSOR 2.x)";
    return out;
  }
  a.compute_32f = *d32;
  a.compute_64f = *d64;
  a.compute_tf32 = *dtf32;
  a.compute_3xtf32 = *d3xtf32;
  a.version = a.cutensorGetVersion();
  if (a.version < 20000) out.error = "cuTENSOR at " + a.path + " is version " + std::to_string(a.version) + "; tnrt needs 2.x";
  return out;
}

const loaded& instance() {
  static const loaded l = open_cutensor();
  return l;
}

}  // namespace

const cutensor_api& cutensor() {
  const loaded& l = instance();
  if (!l.error.empty()) throw device_error(l.error);
  return l.api;
}

std::string cutensor_unavailable_reason() { return instance().error; }

void check_cutensor(cutensorStatus_t status, const char* call, const char* file, int line) {
  if (status == CUTENSOR_STATUS_SUCCESS) return;
  const char* text = instance().api.cutensorGetErrorString != nullptr ? instance().api.cutensorGetErrorString(status) : "?";
  std::string c(call);
  if (auto p = c.find('('); p != std::string::npos) c.resize(p);
  if (auto p = c.rfind('.'); p != std::string::npos) c = c.substr(p + 1);
  if (status == CUTENSOR_STATUS_INSUFFICIENT_WORKSPACE || status == CUTENSOR_STATUS_ALLOC_FAILED)
    throw out_of_memory("cuTENSOR " + c + " failed: " + text + " (" + file + ":" + std::to_string(line) + ")");
  if (status == CUTENSOR_STATUS_NOT_SUPPORTED)
    throw not_supported("cuTENSOR " + c + " failed: " + text + " (" + file + ":" + std::to_string(line) + ")");
  throw device_error("cuTENSOR " + c + " failed: " + text + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace tnrt::cuda
