#pragma once
// The skinny-contraction kernel (see src/core/skinny.hpp).
#include <cuda_runtime_api.h>

#include "core/skinny.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

/// Enqueues D = Big x Small as described by `r` (passed by value: graph capture keeps a copy).
void launch_skinny(dtype t, const skinny_record& r, cudaStream_t stream);

}  // namespace tnrt::cuda
