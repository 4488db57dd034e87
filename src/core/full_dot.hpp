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
// is the kernel's indexing on the host (not its order of summation), for tests.
#include <cstddef>
#include <cstdint>

#include "core/host_device.hpp"
#include "core/step_lowering.hpp"

namespace tnrt {

inline constexpr int full_dot_threads = 256;     // threads per block
inline constexpr int full_dot_max_blocks = 1024;  // partial sums (the scratch holds this many)
inline constexpr int full_dot_max_modes = 48;
/// Term by term: each thread sums at least this many terms before a block is added.
inline constexpr int full_dot_terms_per_thread = 2;
/// Tiled: a tile holds at most this many terms (each operand's share in shared memory), and its
/// modes cover at least full_dot_run elements of each operand's fastest modes.
inline constexpr int full_dot_tile_max = 1024;
inline constexpr int full_dot_run = 32;
/// Tiled: at most this many blocks (two per SM of an H100 or H200), so that each block's tables
/// (the tile's offsets) serve several tiles.
inline constexpr int full_dot_tile_blocks = 264;
/// Tiled: a block takes its tiles a group at a time, every load of the group in flight at once (each
/// thread holds its A values in registers, B's go through shared memory into A's order); a group's
/// share of B is at most this many bytes.
inline constexpr int full_dot_group_bytes = 16384;
/// The most tiles in a group (a tile covers full_dot_run elements of each operand at least).
inline constexpr int full_dot_max_group = full_dot_group_bytes / 4 / full_dot_run;
/// Groups are taken only where one tile a round would take at least this many rounds on
/// full_dot_tile_blocks blocks: on an H100 a group's loop lost to the one-tile loop at 1-2 rounds
/// (bench/results/2026-12-07g-h100-full-dot).
inline constexpr int full_dot_group_rounds = 4;

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
  /// Tiled (operands in different orders; tile_n 0: term by term). Read term by term, the operand
  /// in the other order is gathered a sector per element. Instead the terms go in tiles over the
  /// modes that hold A's and B's fastest (full_dot_run elements of each at least): a block loads a
  /// tile of A and a tile of B, each in runs, into shared memory, B's elements at their places in
  /// A's order, then sums the products. tile_a: the tile's modes in record (A's) order; tile_b:
  /// the same modes, B's largest stride first; tile_weight[m]: mode m's weight in the tile's A
  /// order; outer: the other modes in record order, numbering the tiles. Offsets inside a tile
  /// fit 31 bits.
  std::int32_t tile_n = 0, tile_count = 1, outer_n = 0;
  std::int64_t outer_count = 1;
  std::int8_t tile_a[full_dot_max_modes] = {}, tile_b[full_dot_max_modes] = {}, outer[full_dot_max_modes] = {};
  std::int32_t tile_weight[full_dot_max_modes] = {};
  /// With pow2: the digits' shifts in the tile's A order, its B order and the outer order.
  std::uint8_t tile_a_shift[full_dot_max_modes] = {}, tile_b_shift[full_dot_max_modes] = {}, outer_shift[full_dot_max_modes] = {};
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

/// Tiled: position p of a tile in A's order, its offset in A from the tile's base (31 bits).
TNRT_HOST_DEVICE inline std::int32_t full_dot_tile_a(const full_dot_record& r, std::int32_t p) {
  std::int32_t off = 0;
  for (int j = r.tile_n - 1; j >= 0; --j) {
    const int m = r.tile_a[j];
    const auto e = static_cast<std::int32_t>(r.extent[m]);
    const std::int32_t x = r.pow2 != 0 ? (p >> r.tile_a_shift[j]) & (e - 1) : p % e;
    if (r.pow2 == 0) p /= e;
    off += x * static_cast<std::int32_t>(r.a_stride[m]);
  }
  return off;
}

/// Tiled: position q of a tile in B's order, its offset in B from the tile's base and its slot (its
/// position in A's order).
TNRT_HOST_DEVICE inline void full_dot_tile_b(const full_dot_record& r, std::int32_t q, std::int32_t& off, std::int32_t& slot) {
  off = 0;
  slot = 0;
  for (int j = r.tile_n - 1; j >= 0; --j) {
    const int m = r.tile_b[j];
    const auto e = static_cast<std::int32_t>(r.extent[m]);
    const std::int32_t x = r.pow2 != 0 ? (q >> r.tile_b_shift[j]) & (e - 1) : q % e;
    if (r.pow2 == 0) q /= e;
    off += x * static_cast<std::int32_t>(r.b_stride[m]);
    slot += x * r.tile_weight[m];
  }
}

/// Tiled: the bases in A and B of tile u.
TNRT_HOST_DEVICE inline void full_dot_tile_base(const full_dot_record& r, std::int64_t u, std::int64_t& ba, std::int64_t& bb) {
  ba = bb = 0;
  for (int j = r.outer_n - 1; j >= 0; --j) {
    const int m = r.outer[j];
    const std::int64_t x = r.pow2 != 0 ? (u >> r.outer_shift[j]) & (r.extent[m] - 1) : u % r.extent[m];
    if (r.pow2 == 0) u /= r.extent[m];
    ba += x * r.a_stride[m];
    bb += x * r.b_stride[m];
  }
}

/// Tiled: where a group's slot (a position in A's order) sits in shared memory. B's elements arrive
/// in B's order, often a power-of-two number of slots apart, which would put a warp's stores in one
/// bank; XOR-ing a slot's row (128 bytes of slots) into its place in the row spreads them, and a warp
/// reading consecutive slots still reads one row. A permutation of each row of slots.
TNRT_HOST_DEVICE constexpr int full_dot_swizzle(int slot, int element_bytes) {
  const int row = 128 / element_bytes;
  return slot ^ ((slot / row) & (row - 1));
}

/// A launch's grid for a record, in a type of `element_bytes`: `blocks` blocks of full_dot_threads.
/// Tiled records whose tiles would take full_dot_group_rounds rounds or more one at a time: tiles in
/// groups of `group` (the grouped kernel), as many as give each of at most full_dot_tile_blocks
/// blocks one group, while a group's share of B fits full_dot_group_bytes (a block takes its groups
/// one after another). Otherwise group 1 and the record's blocks.
struct full_dot_grid {
  std::int32_t group = 1, blocks = 1;
};
full_dot_grid full_dot_grid_of(const full_dot_record& r, std::size_t element_bytes);

/// True, with `out` filled, when `s` is a contraction whose result is one element (every mode of D
/// of extent 1) with at most full_dot_max_modes modes of extent > 1; false (out untouched) otherwise.
bool describe_full_dot(const lowered_step& s, full_dot_record& out);

/// The kernel's indexing on the host (term by term in order i = 0, 1, ..., or tile by tile, each in
/// A's order, as the record says): `d` gets the one result.
template <class T>
void evaluate_full_dot(const full_dot_record& r, const T* a, const T* b, T* d);

}  // namespace tnrt
