#pragma once
// The tiled streaming kernel for large x small contraction steps (see src/core/tiled.hpp).
#include <cuda_runtime_api.h>

#include "core/tiled.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

/// Enqueues D = Big x Small as described by `r` (passed by value: graph capture keeps a copy).
/// Throws cuda_error when the launch fails.
void launch_tiled(dtype t, const tiled_record& r, cudaStream_t stream);

}  // namespace tnrt::cuda
