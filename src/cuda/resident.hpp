#pragma once
// How many blocks of a kernel the current device holds at once: the grid size of the kernels that
// loop over their tiles (tiled.cu, chain.cu) and of the cooperative small-steps kernel.
#include <cstddef>

namespace tnrt::cuda {

/// Multiprocessors of the current device.
int multiprocessors();

/// Blocks of `kernel` (a __global__ function) one multiprocessor of the current device holds with
/// `threads` threads and `shared_bytes` of dynamic shared memory. The occupancy query costs host
/// time on every eager launch, so answers are kept by kernel, block shape and device.
int blocks_per_multiprocessor(const void* kernel, int threads, std::size_t shared_bytes);

/// The same for the whole device: at least one block.
long long resident_blocks(const void* kernel, int threads, std::size_t shared_bytes);

}  // namespace tnrt::cuda
