#pragma once
// Full contractions: a step whose result is one element, D = sum over every mode of A[a(i)] * B[b(i)].
// The last step of a closed network is one (a circuit's amplitude, a graph's count, an overlap), and
// cuTENSOR runs it poorly: 27-41 us on the H200 for 0.1-8 MB of operands, whose floor is 1-2 us
// (bench/results/2026-12-04-h200-final-suite/roof: regular3-n130's last step read 8 MB in 41 us).
// tnrt's own kernel (src/cuda/full_dot.cu) reads both operands once with every SM, each block
// summing its share in a fixed order, and the last block to finish sums the blocks' partial sums,
// also in a fixed order: the result is the same on every run.
//
// Plan (describe_full_dot, host, no CUDA) and run (launch_full_dot) are separate; evaluate_full_dot
// is the kernel's order of summation on the host, for tests.
#include <cstddef>
#include <cstdint>

#include "core/step_lowering.hpp"

#if !defined(TNRT_HOST_DEVICE)
#if defined(__CUDACC__)
#define TNRT_HOST_DEVICE __host__ __device__
#else
#define TNRT_HOST_DEVICE
#endif
#endif

namespace tnrt {

inline constexpr int full_dot_threads = 256;     // threads per block
inline constexpr int full_dot_max_blocks = 1024;  // partial sums (the scratch holds this many)
inline constexpr int full_dot_max_modes = 48;
/// Each thread sums at least this many terms before a block is added.
inline constexpr int full_dot_terms_per_thread = 8;

/// Scratch a full dot needs beside its operands: full_dot_max_blocks partial sums of the element
/// type, then an unsigned counter (zero before the first launch; the kernel leaves it zero).
constexpr std::size_t full_dot_scratch_bytes(std::size_t element_bytes) {
  return full_dot_max_blocks * element_bytes + 256;
}

struct full_dot_record {
  std::int64_t count = 1;  // terms summed: the product of every extent
  /// Term i runs over the modes, A's largest stride first (the last mode fastest, so that
  /// consecutive threads read consecutive elements of A): a mixed radix.
  std::int32_t n = 0;
  /// Both operands dense, with the same strides: term i reads A[i] and B[i].
  std::int32_t contiguous = 0;
  /// Every extent a power of two: mode m's digit is (i >> shift[m]) & (extent[m] - 1).
  std::int32_t pow2 = 0;
  std::int32_t blocks = 1;  // grid size (at most full_dot_max_blocks)
  std::int64_t extent[full_dot_max_modes] = {}, a_stride[full_dot_max_modes] = {}, b_stride[full_dot_max_modes] = {};
  std::uint8_t shift[full_dot_max_modes] = {};
};

/// The offsets in A and B of term i (both evaluators).
TNRT_HOST_DEVICE inline void full_dot_offsets(const full_dot_record& r, std::int64_t i, std::int64_t& ao, std::int64_t& bo) {
  ao = bo = 0;
  if (r.pow2 != 0) {
    for (int m = 0; m < r.n; ++m) {
      const std::int64_t x = (i >> r.shift[m]) & (r.extent[m] - 1);
      ao += x * r.a_stride[m];
      bo += x * r.b_stride[m];
    }
    return;
  }
  for (int m = r.n - 1; m >= 0; --m) {
    const std::int64_t x = i % r.extent[m];
    i /= r.extent[m];
    ao += x * r.a_stride[m];
    bo += x * r.b_stride[m];
  }
}

/// True, with `out` filled, when `s` is a contraction whose result is one element (every mode of D
/// of extent 1) with at most full_dot_max_modes modes of extent > 1; false (out untouched) otherwise.
bool describe_full_dot(const lowered_step& s, full_dot_record& out);

/// The kernel's indexing on the host (terms summed in order i = 0, 1, ...): `d` gets the one result.
template <class T>
void evaluate_full_dot(const full_dot_record& r, const T* a, const T* b, T* d);

}  // namespace tnrt
