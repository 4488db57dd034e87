#pragma once
// The fused small steps' index arithmetic (src/core/fusion.hpp), one definition for the host
// evaluator and the CUDA kernel: the offsets in A, B and D of output element o, and in A and B of
// summed position k, as a mixed radix over the record's modes, the last mode fastest. With
// record.pow2 every extent is a power of two and each digit is a shift and a mask. Offsets are 32-bit:
// describe_small_step refuses a step any of whose offsets would not fit (the fused launch's steps are
// index arithmetic and a few loads, and 64-bit products cost twice the instructions).
#include <cstdint>

#include "core/fusion.hpp"
#include "core/host_device.hpp"

namespace tnrt::small_step_index {

/// Offsets of output element `o` in A, B and D.
TNRT_HOST_DEVICE inline void out_offsets(const small_step_record& r, std::int32_t o, std::int32_t& ao, std::int32_t& bo, std::int32_t& dof) {
  ao = bo = dof = 0;
  if (r.pow2 != 0) {
    for (int i = 0; i < r.n_out; ++i) {
      const std::int32_t x = (o >> r.out_shift[i]) & (r.out_extent[i] - 1);
      ao += x * r.out_a[i];
      bo += x * r.out_b[i];
      dof += x * r.out_d[i];
    }
    return;
  }
  std::int32_t rest = o;
  for (int i = r.n_out - 1; i >= 0; --i) {
    const std::int32_t x = rest % r.out_extent[i];
    rest /= r.out_extent[i];
    ao += x * r.out_a[i];
    bo += x * r.out_b[i];
    dof += x * r.out_d[i];
  }
}

/// Offsets of summed position `k` in A and B, relative to the output element's.
TNRT_HOST_DEVICE inline void sum_offsets(const small_step_record& r, std::int32_t k, std::int32_t& ak, std::int32_t& bk) {
  ak = bk = 0;
  if (r.pow2 != 0) {
    for (int i = 0; i < r.n_sum; ++i) {
      const std::int32_t x = (k >> r.sum_shift[i]) & (r.sum_extent[i] - 1);
      ak += x * r.sum_a[i];
      bk += x * r.sum_b[i];
    }
    return;
  }
  std::int32_t rest = k;
  for (int i = r.n_sum - 1; i >= 0; --i) {
    const std::int32_t x = rest % r.sum_extent[i];
    rest /= r.sum_extent[i];
    ak += x * r.sum_a[i];
    bk += x * r.sum_b[i];
  }
}

}  // namespace tnrt::small_step_index
