#pragma once
// Skinny contractions: one operand small (it fits in shared memory), the other large. These are the
// bandwidth-bound steps that carry nearly all the bytes of tensor-network trees (a large intermediate
// times a small tensor), and a general GEMM-shaped kernel handles them poorly when the small side's
// free and contracted extents are tiny (M and K of 2..16): measured at 15-30% of the H200's copy
// bandwidth through cuTENSOR. A dedicated kernel streams the large operand once:
//   D[outer, m] = sum_k  Big[outer, k] * Small[outer_batch, m, k]
// with every mode of the step classified as outer (in D and Big, and Small when it is a batch
// mode), m (Small's free modes) or k (contracted). Outer modes contiguous in all three operands are
// merged, so a thread's index splits over a handful of groups.
#include <cstdint>

#include "core/step_lowering.hpp"

namespace tnrt {

inline constexpr int skinny_max_outer = 12;
inline constexpr int skinny_max_m = 16;
inline constexpr int skinny_max_k = 64;

struct skinny_record {
  const void* big = nullptr;
  const void* small = nullptr;
  void* d = nullptr;
  std::int64_t outer_count = 1;
  std::int64_t small_span = 1;  // elements of Small the kernel stages (max offset + 1)
  std::int32_t n_outer = 0, m_count = 1, k_count = 1;
  /// One thread per output element with m fastest (m is the result's innermost mode), rather than
  /// one thread per outer index holding every m.
  bool m_fast = false;
  std::int64_t outer_extent[skinny_max_outer] = {}, outer_big[skinny_max_outer] = {}, outer_small[skinny_max_outer] = {},
               outer_d[skinny_max_outer] = {};
  std::int32_t m_small[skinny_max_m] = {}, m_d[skinny_max_m] = {};
  std::int32_t k_small[skinny_max_k] = {};
  std::int64_t k_big[skinny_max_k] = {};
};

struct skinny_limits {
  std::int64_t max_small_bytes = 48 * 1024;  // staged in shared memory
  std::int64_t min_outer = 1 << 16;          // below this the library's launch is as good
};

/// Builds the record for a contraction step when it is skinny enough; false otherwise (record
/// untouched). `a`, `b`, `d` are the step's operand pointers (lhs, rhs, result).
bool describe_skinny(const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                     skinny_record& out, const skinny_limits& limits = {});

/// The kernel's arithmetic on the host (for tests).
template <class T>
void evaluate_skinny(const skinny_record& r);

}  // namespace tnrt
