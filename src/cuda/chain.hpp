#pragma once
// The chain kernel: a run of large x small steps in one pass over memory (see src/core/chain.hpp).
#include <cuda_runtime_api.h>

#include "core/chain.hpp"
#include "tnrt/dtype.hpp"

namespace tnrt::cuda {

/// The operands of one launch: X_0, X_m and each step's small tensor (the record's order).
struct chain_pointers {
  const void* x0 = nullptr;
  void* xm = nullptr;
  const void* small[chain_max_steps] = {};
};

/// Enqueues X_m = X_0 (x) S_1 ... (x) S_m as `r` describes (the record is passed by value: graph
/// capture keeps a copy). Throws cuda_error when the launch fails, internal_error for a record
/// the kernel does not take (more summed combinations than it holds in registers).
void launch_chain(dtype t, const chain_record& r, const chain_pointers& p, cudaStream_t stream);

}  // namespace tnrt::cuda
