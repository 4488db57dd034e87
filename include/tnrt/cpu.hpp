#pragma once
// The CPU reference engine: every einsum, every dtype, transpose-transpose-GEMM-transpose over
// OpenBLAS with direct kernels for small and elementwise steps.
#include <functional>
#include <span>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cpu {

/// Progress callback: (steps done, steps total).
using progress_fn = std::function<void(std::size_t, std::size_t)>;

/// One step. `lhs_labels`/`rhs_labels` label the operands (row-major), `out_labels` the result;
/// extents come from `extents` (by label id). rhs may be null for a unary step.
host_tensor contract_step(const host_tensor& lhs, const std::vector<label_t>& lhs_labels,
                          const host_tensor* rhs, const std::vector<label_t>& rhs_labels,
                          const std::vector<label_t>& out_labels, const std::vector<std::int64_t>& extents);

/// The whole tree. Inputs must match net.inputs' shapes and `type`; intermediates are freed as soon
/// as they are consumed. Throws shape_error / dtype_error on mismatched inputs.
host_tensor contract(const problem& p, std::span<const host_tensor> inputs, const progress_fn& progress = {});

/// Number of threads the BLAS and the direct kernels use (default: all cores).
void set_threads(int n);

}  // namespace tnrt::cpu
