#pragma once
// The chain kernel's index arithmetic (src/core/chain.hpp), one definition for the host evaluator
// and the CUDA kernel. Every list is a mixed radix, first entry fastest.
#include <cstdint>

#include "core/chain.hpp"
#include "core/host_device.hpp"

namespace tnrt::chain_index {

/// Entry e of a load or store list: its offset in global memory and its slot in the slab.
TNRT_HOST_DEVICE inline void decode(const std::int32_t* extent, const std::int32_t* global, const std::int32_t* slab, int n, std::int32_t e,
                                    std::int32_t& g, std::int32_t& slot) {
  g = 0;
  slot = 0;
  for (int i = 0; i < n; ++i) {
    const std::int32_t d = e % extent[i];
    e /= extent[i];
    g += d * global[i];
    slot += d * slab[i];
  }
}

/// The same with every extent a power of two: `shift` its log2.
TNRT_HOST_DEVICE inline void decode_pow2(const std::int32_t* shift, const std::int32_t* global, const std::int32_t* slab, int n, std::int32_t e,
                                         std::int32_t& g, std::int32_t& slot) {
  g = 0;
  slot = 0;
  for (int i = 0; i < n; ++i) {
    const std::int32_t d = e & ((1 << shift[i]) - 1);
    e >>= shift[i];
    g += d * global[i];
    slot += d * slab[i];
  }
}

/// Entry e of the load list (X_0's slab) and of the store list (X_m's slab).
TNRT_HOST_DEVICE inline void load_entry(const chain_record& r, std::int32_t e, std::int32_t& g, std::int32_t& slot) {
  if (r.pow2 != 0) {
    decode_pow2(r.load_shift, r.load_global, r.load_slab, r.n_load, e, g, slot);
  } else {
    decode(r.load_extent, r.load_global, r.load_slab, r.n_load, e, g, slot);
  }
}
TNRT_HOST_DEVICE inline void store_entry(const chain_record& r, std::int32_t e, std::int32_t& g, std::int32_t& slot) {
  if (r.pow2 != 0) {
    decode_pow2(r.store_shift, r.store_global, r.store_slab, r.n_store, e, g, slot);
  } else {
    decode(r.store_extent, r.store_global, r.store_slab, r.n_store, e, g, slot);
  }
}

/// Entry e of a list split in groups (lists_split): group j = e >> chain_thread_bits's offsets `hi_g`,
/// `hi_slot` plus those of the entry's place in its group, `lo_g` and `lo_slot`, which a thread decodes
/// once. false for an entry past the record's chain_max_hi groups, or a list not split.
TNRT_HOST_DEVICE inline bool group_entry(const chain_record& r, const std::int32_t* hi_g, const std::int32_t* hi_slot, std::int32_t e,
                                         std::int32_t lo_g, std::int32_t lo_slot, std::int32_t& g, std::int32_t& slot) {
  const std::int32_t j = e >> chain_thread_bits;
  if (r.lists_split == 0 || j >= chain_max_hi) return false;
  g = lo_g + hi_g[j];
  slot = lo_slot + hi_slot[j];
  return true;
}

/// Entry e of the load (or store) list as the kernel finds it: group_entry where it applies, else
/// load_entry (store_entry). `lo_g` and `lo_slot`: load_entry (store_entry) of e & (chain_threads - 1).
TNRT_HOST_DEVICE inline void load_entry_split(const chain_record& r, std::int32_t e, std::int32_t lo_g, std::int32_t lo_slot, std::int32_t& g,
                                              std::int32_t& slot) {
  if (!group_entry(r, r.load_hi_g, r.load_hi_slot, e, lo_g, lo_slot, g, slot)) load_entry(r, e, g, slot);
}
TNRT_HOST_DEVICE inline void store_entry_split(const chain_record& r, std::int32_t e, std::int32_t lo_g, std::int32_t lo_slot, std::int32_t& g,
                                               std::int32_t& slot) {
  if (!group_entry(r, r.store_hi_g, r.store_hi_slot, e, lo_g, lo_slot, g, slot)) store_entry(r, e, g, slot);
}

/// Tile t's first element in X_0 and in X_m.
TNRT_HOST_DEVICE inline void tile_bases(const chain_record& r, std::int32_t t, std::int32_t& in, std::int32_t& out) {
  in = 0;
  out = 0;
  for (int i = 0; i < r.n_outer; ++i) {
    std::int32_t d = 0;
    if (r.outer_pow2 != 0) {
      d = t & ((1 << r.outer_shift[i]) - 1);
      t >>= r.outer_shift[i];
    } else {
      d = t % r.outer_extent[i];
      t /= r.outer_extent[i];
    }
    in += d * r.outer_in[i];
    out += d * r.outer_out[i];
  }
}

/// Row `row` of a step: its offset in X_{i-1}'s slab, in X_i's slab, and its batch index.
TNRT_HOST_DEVICE inline void row_offsets(const chain_step_record& s, std::int32_t row, std::int32_t& in, std::int32_t& out, std::int32_t& b) {
  in = 0;
  out = 0;
  b = 0;
  if (s.r_pow2 != 0) {
    for (int i = 0; i < s.n_r; ++i) {
      const std::int32_t d = row & ((1 << s.r_shift[i]) - 1);
      row >>= s.r_shift[i];
      in += d * s.r_in[i];
      out += d * s.r_out[i];
      b += d * s.r_b[i];
    }
    return;
  }
  for (int i = 0; i < s.n_r; ++i) {
    const std::int32_t d = row % s.r_extent[i];
    row /= s.r_extent[i];
    in += d * s.r_in[i];
    out += d * s.r_out[i];
    b += d * s.r_b[i];
  }
}

/// Row `row` of a step as the kernel finds it: a split step adds the row's group offsets (hi_*) to
/// the offsets of its place in the group, which a thread decodes once (`lo_*`, row_offsets of
/// row & (chain_threads - 1)); other steps decode every row.
TNRT_HOST_DEVICE inline void row_offsets_split(const chain_step_record& s, std::int32_t row, std::int32_t lo_in, std::int32_t lo_out, std::int32_t lo_b,
                                               std::int32_t& in, std::int32_t& out, std::int32_t& b) {
  if (s.split != 0) {
    const std::int32_t j = row >> chain_thread_bits;
    in = lo_in + s.hi_in[j];
    out = lo_out + s.hi_out[j];
    b = lo_b + s.hi_b[j];
    return;
  }
  row_offsets(s, row, in, out, b);
}

/// Entry e of a step's coefficient table ([batch][k][n_pad], n fastest): S_i's element, or zero in
/// the padding.
template <class T>
TNRT_HOST_DEVICE inline T table_value(const chain_step_record& s, const T* small, std::int32_t e) {
  const std::int32_t n = e % s.n_pad;
  const std::int32_t k = (e / s.n_pad) % s.k_count;
  std::int32_t b = e / (s.n_pad * s.k_count);
  if (n >= s.n_count) return T{};
  std::int32_t off = s.k_small[k] + s.n_small[n];
  for (int i = 0; i < s.n_b; ++i) {
    off += (b % s.b_extent[i]) * s.b_small[i];
    b /= s.b_extent[i];
  }
  return small[off];
}

}  // namespace tnrt::chain_index
