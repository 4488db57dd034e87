#pragma once
// The tiled kernel's index tables (src/core/tiled.hpp), one definition for the host evaluator and
// the CUDA kernel. Each entry is a mixed-radix decomposition over one of the record's lists, first
// mode fastest.
#include <cstdint>

#include "core/host_device.hpp"
#include "core/tiled.hpp"

namespace tnrt::tiled_index {

/// sum_i digit_i(j) * weight[i], j's digits in the mixed radix `extent` (first fastest), n digits.
TNRT_HOST_DEVICE inline std::int32_t mixed_radix(const std::int32_t* extent, const std::int32_t* weight, int n, std::int32_t j) {
  std::int32_t off = 0;
  for (int i = 0; i < n; ++i) {
    off += (j % extent[i]) * weight[i];
    j /= extent[i];
  }
  return off;
}

/// Offset in Big (relative to the tile's base) of slab slot `j`.
TNRT_HOST_DEVICE inline std::int32_t big_offset(const tiled_record& r, std::int32_t j) { return mixed_radix(r.big_extent, r.big_stride, r.n_big, j); }

/// Entry `e` of D's tile: its offset in D (relative to the tile's base), and packed into one word
/// its slab slot (low 16 bits) and its offset in Small (high 16 bits).
TNRT_HOST_DEVICE inline void d_entry(const tiled_record& r, std::int32_t e, std::int32_t& d_off, std::uint32_t& packed) {
  std::int32_t off = 0, slot = 0, small = 0;
  for (int i = 0; i < r.n_d; ++i) {
    const std::int32_t x = e % r.d_extent[i];
    e /= r.d_extent[i];
    off += x * r.d_stride[i];
    slot += x * r.d_slot[i];
    small += x * r.d_small[i];
  }
  d_off = off;
  packed = static_cast<std::uint32_t>(slot) | (static_cast<std::uint32_t>(small) << 16U);
}

/// run_table: the table row of D's tile entry `e` (its digits of the modes Small has).
TNRT_HOST_DEVICE inline std::int32_t table_row(const tiled_record& r, std::int32_t e) { return mixed_radix(r.d_extent, r.d_row, r.n_d, e); }

/// run_table: the offset in Small of table element `i` (row i / k_max, combination i % k_max), or
/// -1 for a combination past k_count (the table holds 0 there).
TNRT_HOST_DEVICE inline std::int32_t table_entry(const tiled_record& r, std::int32_t i, std::int32_t k_max) {
  const std::int32_t k = i % k_max;
  if (k >= r.k_count) return -1;
  std::int32_t rest = i / k_max, off = static_cast<std::int32_t>(r.k_pack[k] >> 16U);
  for (int j = 0; j < r.n_d; ++j) {
    if (r.d_row[j] == 0) continue;
    off += (rest % r.d_extent[j]) * r.d_small[j];
    rest /= r.d_extent[j];
  }
  return off;
}

/// Contracted combination `k`: slab slot (low 16 bits) and offset in Small (high 16 bits).
TNRT_HOST_DEVICE inline std::uint32_t k_entry(const tiled_record& r, std::int32_t k) {
  std::int32_t slot = 0, small = 0;
  for (int i = 0; i < r.n_k; ++i) {
    const std::int32_t x = k % r.k_extent[i];
    k /= r.k_extent[i];
    slot += x * r.k_slot[i];
    small += x * r.k_small[i];
  }
  return static_cast<std::uint32_t>(slot) | (static_cast<std::uint32_t>(small) << 16U);
}

/// Base offsets in Big and D of tile `t`.
TNRT_HOST_DEVICE inline void outer_offsets(const tiled_record& r, std::int64_t t, std::int64_t& big, std::int64_t& d) {
  big = 0;
  d = 0;
  for (int i = 0; i < r.n_outer; ++i) {
    const std::int64_t x = (t / r.outer_div[i]) % r.outer_extent[i];
    big += x * r.outer_big[i];
    d += x * r.outer_d[i];
  }
}

}  // namespace tnrt::tiled_index
