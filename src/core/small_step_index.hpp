#pragma once
// The fused small steps' index arithmetic (src/core/fusion.hpp), one definition for the host
// evaluator and the CUDA kernel: the offsets in A, B and D of output element o, and in A and B of
// summed position k, as a mixed radix over the record's modes, the last mode fastest. With
// record.pow2 every extent is a power of two and each digit is a shift and a mask.
#include <cstdint>

#include "core/fusion.hpp"
#include "core/host_device.hpp"

namespace tnrt::small_step_index {

/// Offsets of output element `o` in A, B and D.
TNRT_HOST_DEVICE inline void out_offsets(const small_step_record& r, std::int32_t o, std::int64_t& ao, std::int64_t& bo, std::int64_t& dof) {
  ao = bo = dof = 0;
  if (r.pow2 != 0) {
    for (int i = 0; i < r.n_out; ++i) {
      const std::int32_t x = (o >> r.out_shift[i]) & (r.out_extent[i] - 1);
      ao += static_cast<std::int64_t>(x) * r.out_a[i];
      bo += static_cast<std::int64_t>(x) * r.out_b[i];
      dof += static_cast<std::int64_t>(x) * r.out_d[i];
    }
    return;
  }
  std::int32_t rest = o;
  for (int i = r.n_out - 1; i >= 0; --i) {
    const std::int32_t x = rest % r.out_extent[i];
    rest /= r.out_extent[i];
    ao += static_cast<std::int64_t>(x) * r.out_a[i];
    bo += static_cast<std::int64_t>(x) * r.out_b[i];
    dof += static_cast<std::int64_t>(x) * r.out_d[i];
  }
}

/// Offsets of summed position `k` in A and B, relative to the output element's.
TNRT_HOST_DEVICE inline void sum_offsets(const small_step_record& r, std::int32_t k, std::int64_t& ak, std::int64_t& bk) {
  ak = bk = 0;
  if (r.pow2 != 0) {
    for (int i = 0; i < r.n_sum; ++i) {
      const std::int32_t x = (k >> r.sum_shift[i]) & (r.sum_extent[i] - 1);
      ak += static_cast<std::int64_t>(x) * r.sum_a[i];
      bk += static_cast<std::int64_t>(x) * r.sum_b[i];
    }
    return;
  }
  std::int32_t rest = k;
  for (int i = r.n_sum - 1; i >= 0; --i) {
    const std::int32_t x = rest % r.sum_extent[i];
    rest /= r.sum_extent[i];
    ak += static_cast<std::int64_t>(x) * r.sum_a[i];
    bk += static_cast<std::int64_t>(x) * r.sum_b[i];
  }
}

}  // namespace tnrt::small_step_index
