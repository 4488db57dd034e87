#pragma once
// Lowering a contraction step, by strides alone, to one (strided-batched) column-major GEMM:
//   C[b](m x n) = op(X[b])(m x k) * op(Y[b])(k x n)          for b in 0..batch-1
// the form cuBLAS's *gemmStridedBatched takes. Backend-independent and host-testable.
//
// The step's modes fall in four groups: batch (A, B and D), m (A and D), n (B and D), k (A and B).
// Each group must merge into one dimension in every operand holding it (its modes consecutive in
// memory, in the same order everywhere); C is D with its m group (or, the operands exchanged, its
// n group) contiguous. A mode summed in one operand only (a stride-0 mode in the other), a mode of
// D alone, or any other broadcast refuses the form: cuTENSOR keeps those steps.
#include <cstdint>
#include <optional>

#include "core/step_lowering.hpp"

namespace tnrt {

struct gemm_form {
  /// false: X is the step's A and Y its B; true: X is B, Y is A (C is D transposed per batch).
  bool swapped = false;
  /// op(X) = X^T (X stored k x m, column-major) when set; likewise Y stored n x k.
  bool trans_x = false, trans_y = false;
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
  std::int64_t ldx = 1, ldy = 1, ldc = 1;  // leading dimensions, in elements (>= the stored rows, >= 1)
  std::int64_t stride_x = 0, stride_y = 0, stride_c = 0;  // batch strides, in elements
};

/// The GEMM form of a contraction step, or nothing (reductions, broadcasts, layouts that do not
/// merge, extents past 32-bit int). k may be 1 (an outer product) and m, n or batch may be 1.
std::optional<gemm_form> lower_to_gemm(const lowered_step& s);

/// A contraction step as one GEMM after copying the operands that keep it from the form into dense
/// buffers of their own (transpose-transpose-GEMM-transpose): A and B are copied before the GEMM,
/// and D is written to its copy and copied into place after it. Of the sets of operands whose
/// copies give a form, the one of the fewest elements copied.
struct gemm_with_copies {
  gemm_form gemm;                          // over the operands as the GEMM sees them: copies where copied
  lowered_step step;                       // the step with each copied operand's strides replaced by its copy's
  bool copied[3] = {false, false, false};  // A, B, D
  std::int64_t elements[3] = {0, 0, 0};    // each operand's element count (a copy's size)
  /// The GEMM's multiply-adds, and the elements the copies move (each read once and written once).
  [[nodiscard]] double multiply_adds() const noexcept {
    return static_cast<double>(gemm.m) * static_cast<double>(gemm.n) * static_cast<double>(gemm.k) * static_cast<double>(gemm.batch);
  }
  [[nodiscard]] double copied_elements() const noexcept {
    double e = 0;
    for (int i = 0; i < 3; ++i)
      if (copied[i]) e += static_cast<double>(elements[i]);
    return e;
  }
};

/// The form with copies, or nothing when the step is one GEMM as it lies (lower_to_gemm) or when no
/// copy helps (reductions, a mode summed in one operand only or of D alone, a mode repeated in an
/// operand, extents past 32-bit int). A copy's layout: A as (m, k, batch), B as (k, n, batch), D as
/// (m, n, batch), first fastest, each group's modes in the order of an operand that is not copied.
std::optional<gemm_with_copies> lower_to_gemm_with_copies(const lowered_step& s);

/// The copy of operand `i` (0 A, 1 B, 2 D; c.copied[i] set) as a lowered reduction: A and B from
/// where they lie in `s` into their copies, D from its copy into place. What a backend plans and
/// runs around the GEMM of `c`.
lowered_step gemm_copy_step(const lowered_step& s, const gemm_with_copies& c, int i);

/// Reference evaluation of the GEMM form on host memory (tests): C = op(X) op(Y) per batch, with
/// x = the step's A (or B when swapped), written to d.
template <class T>
void evaluate_gemm(const gemm_form& g, const T* a, const T* b, T* d);

}  // namespace tnrt
