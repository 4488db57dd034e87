#pragma once
// A naive index-loop einsum: the reference every fast path (CPU and GPU) is checked against. It
// walks every combination of every label and accumulates in complex<double>, so its only rounding
// is the final conversion; slow by design (cost = product of all extents of a step).
#include <span>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::test {

/// Same contract as cpu::contract_step: out[o...] = sum over labels not in out of lhs * rhs (rhs may
/// be null). The result has lhs's dtype; the sum is formed in double precision.
host_tensor naive_contract_step(const host_tensor& lhs, const std::vector<label_t>& lhs_labels, const host_tensor* rhs,
                                const std::vector<label_t>& rhs_labels, const std::vector<label_t>& out_labels,
                                const std::vector<std::int64_t>& extents);

/// The whole tree, every intermediate kept in double precision. The result is f64 (real problems)
/// or c128 (complex problems), whatever p.type is.
host_tensor naive_contract(const problem& p, std::span<const host_tensor> inputs);

/// A copy converted to `type` (real parts only when narrowing complex to real).
host_tensor convert(const host_tensor& t, dtype type);

/// ||got - want||_2 / max(||want||_2, tiny), computed in double whatever the dtypes (shapes must match).
double relative_error(const host_tensor& got, const host_tensor& want);

/// Largest |element|.
double max_abs(const host_tensor& t);

}  // namespace tnrt::test
