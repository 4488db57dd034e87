#pragma once
// Lowering one contraction step to the form a strided tensor library (cuTENSOR) takes:
//   D[modes_d] = sum over modes not in D of  A[modes_a] * B[modes_b]     (contraction)
//   D[modes_d] = sum over modes not in D of  A[modes_a]                  (reduction, unary steps)
// with every mode appearing at most once per operand. Backend-independent and host-testable.
//
// The tricks, all by strides alone (no copies):
//  - a label repeated inside an operand (a diagonal) becomes one mode whose stride is the sum of
//    the repeated modes' strides;
//  - a label summed out of one operand only gets a stride-0 (broadcast) mode in the other operand,
//    which turns it into an ordinary contracted mode: sum_k A[k] B = B * sum_k A[k];
//  - rank-0 operands get a shared extent-1 mode, since zero-mode descriptors are not portable.
// Modes are renumbered 0..k-1 in first-appearance order (A, then B, then D), so structurally equal
// steps with different labels share one key, and so one cached plan.
#include <cstdint>
#include <vector>

#include "tnrt/dtype.hpp"
#include "tnrt/network.hpp"

namespace tnrt {

struct strided_operand {
  std::vector<std::int32_t> modes;
  std::vector<std::int64_t> extents;
  std::vector<std::int64_t> strides;  // in elements; 0 = broadcast
};

enum class lowered_kind : std::uint8_t { contraction, reduction };

struct lowered_step {
  lowered_kind kind = lowered_kind::contraction;
  strided_operand a, b, d;  // b unused for a reduction
  /// The structural key: kind, and each operand's modes, extents and strides, flattened.
  [[nodiscard]] std::vector<std::int64_t> key() const;
  /// The same into `out` (cleared first), so a caller on the hot path reuses its buffer.
  void key_into(std::vector<std::int64_t>& out) const;
};

/// Where an operand lives: its labels and strides (in elements; any layout).
struct labelled_layout {
  const std::vector<label_t>* labels = nullptr;
  std::vector<std::int64_t> strides;
};

/// Lowers `out(d) = sum lhs(a) * rhs(b)` (rhs null: unary). Extents from `extents` (by label id).
lowered_step lower_step(const labelled_layout& lhs, const labelled_layout* rhs, const labelled_layout& out,
                        const std::vector<std::int64_t>& extents);

/// Strides (in elements, by `out`'s labels) for a step's result under `policy` (`planned`, a
/// choice over the whole tree that plan_steps makes, is column-major for one step alone).
std::vector<std::int64_t> choose_result_strides(const std::vector<label_t>& out, const labelled_layout& lhs,
                                                const labelled_layout* rhs, const std::vector<std::int64_t>& extents,
                                                layout_policy policy);

/// Strides for a tensor with these extents: row-major (last mode contiguous) or column-major
/// (first mode contiguous).
std::vector<std::int64_t> dense_strides(const std::vector<std::int64_t>& extents, bool column_major);

/// Reference evaluation of a lowered step on host memory (for tests of the lowering itself):
/// D is written fully (every element of D's extents), with T's arithmetic.
template <class T>
void evaluate_lowered(const lowered_step& s, const T* a, const T* b, T* d);

}  // namespace tnrt
