#pragma once
// An owned CUDA event (compiled programs' lanes and switch, the step timer, the library API's programs).
#include <memory>
#include <type_traits>

#include <cuda_runtime_api.h>

namespace tnrt::cuda {

struct event_deleter {
  void operator()(cudaEvent_t e) const noexcept { (void)cudaEventDestroy(e); }
};
using event_owner = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, event_deleter>;

}  // namespace tnrt::cuda
