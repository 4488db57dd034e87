#pragma once
// The fused launch of absorbed small steps (see src/core/fusion.hpp): one thread block per
// subtree, walking its steps in order.
#include <cuda_runtime_api.h>

#include "core/fusion.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

/// `records` and `subtree_begin` (subtrees + 1 entries) in device memory. Checks the launch.
void launch_small_steps(dtype t, const small_step_record* records, const int* subtree_begin, int subtrees, cudaStream_t stream);

/// The same from host memory, without staging buffers: the records travel as kernel parameters,
/// in launches of up to `small_steps_per_launch` records. A subtree split across two launches stays
/// correct because launches on one stream run in order. For eager execution, where a device table
/// would need a host buffer that outlives the call.
inline constexpr int small_steps_per_launch = 72;
void launch_small_steps_from_host(dtype t, const small_step_record* records, const int* subtree_begin, int subtrees,
                                  cudaStream_t stream);

/// A grid run (src/core/fusion.hpp, plan_grid_runs): `count` records in device memory, run in order
/// by one cooperative launch of `blocks` blocks, each step's result elements dealt out over the
/// whole grid, a grid-wide barrier between two steps (instead of a kernel launch). Checks the
/// launch. `blocks` at most grid_steps_blocks().
void launch_grid_steps(dtype t, const small_step_record* records, int count, int blocks, cudaStream_t stream);

/// Threads per block of a grid run.
inline constexpr int grid_steps_threads = 512;

/// The blocks of a grid run on the current device: one per multiprocessor (0 when the kernel cannot
/// have one resident on each). `resident` (when given): the most blocks that can be resident at
/// once, the largest cooperative launch.
int grid_steps_blocks(int* resident = nullptr);

}  // namespace tnrt::cuda
