#pragma once
// Chains of large x small steps in one pass over memory. In a circuit, a lattice's boundary or a
// graph, a large intermediate often meets one small tensor after another:
//   X_1 = X_0 (x) S_1,  X_2 = X_1 (x) S_2,  ...,  X_m = X_{m-1} (x) S_m
// and step by step each X_i goes to memory and comes back (lattice-10x10-d4: 52 of its 99 steps,
// 84% of its bytes). The steps touch only the *active* labels (those of the S_i, and the labels of
// X_{i-1} a step sums); the others (*passive*) pass through every step unchanged. So for each
// combination of the passive labels the whole chain can run on a slab of X_0 in shared memory:
// load the slab once, apply S_1 .. S_m there, store the slab of X_m once. This is the gate fusion of
// state-vector simulators, for any chain of a tree whose active labels fit a slab.
//
// A block takes one tile (a combination of the outer passive labels) at a time:
//   load   X_0's slab (the active labels and a few passive ones, T, that put X_0's and X_m's fastest
//          labels inside it) in X_0's memory order, so the loads are contiguous runs;
//   step i for every row r (a combination of X_{i-1}'s slab labels that step i keeps):
//          X_i[r, n] = sum_k X_{i-1}[r, k] * S_i[b(r), k, n]   (k: labels step i sums, n: labels
//          S_i brings, b: batch labels in X_{i-1}, S_i and X_i), S_i staged in shared memory as a
//          dense [b][k][n] table so a thread reads 16 bytes of coefficients at a time;
//   store  X_m's slab in X_m's memory order.
// Plan (plan_chains, host, no CUDA) and run (launch_chain, src/cuda/chain.cu) are separate;
// evaluate_chain is the kernel's indexing and arithmetic on the host, for tests.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/host_device.hpp"
#include "tnrt/network.hpp"

namespace tnrt {

inline constexpr int chain_thread_bits = 8;  // log2(chain_threads): rows and lists split there (chain_step_record::split)
inline constexpr int chain_threads = 1 << chain_thread_bits;  // threads per block
inline constexpr int chain_max_steps = 8;   // steps of one chain
inline constexpr int chain_max_modes = 16;  // entries of one mode list, after merging
inline constexpr int chain_max_k = 64;      // combinations a step sums
inline constexpr int chain_max_n = 64;      // combinations of the labels a step's small tensor brings
inline constexpr int chain_max_hi = 16;      // row groups of chain_threads a split step holds
inline constexpr int chain_prefetch_bytes = 16 * 1024;  // a slab the kernel's registers hold a tile ahead

/// One step inside the slab: X_i[r, n] = sum_k X_{i-1}[r, k] * S_i[b(r), k, n].
struct chain_step_record {
  std::int32_t rows = 1;     // combinations of the kept labels (X_{i-1}'s slab / k_count)
  std::int32_t k_count = 1;  // summed combinations
  std::int32_t n_count = 1;  // combinations of the labels S_i brings
  std::int32_t n_pad = 1;    // n_count rounded up to the kernel's vector (elements of 16 bytes)
  std::int32_t batch = 1;    // combinations of the batch labels
  std::int32_t sd_offset = 0;  // this step's [batch][k][n_pad] table in shared memory (elements)
  // Rows: extent, weight in X_{i-1}'s slab, in X_i's slab, and in the batch index (first fastest);
  // r_shift: log2 of each extent when every one is a power of two (r_pow2), so a row decodes with
  // shifts and masks instead of divisions.
  std::int32_t n_r = 0, r_pow2 = 0;
  std::int32_t r_shift[chain_max_modes] = {};
  std::int32_t r_extent[chain_max_modes] = {}, r_in[chain_max_modes] = {}, r_out[chain_max_modes] = {}, r_b[chain_max_modes] = {};
  // split: every extent a power of two, no mode straddling bit chain_thread_bits, and at most
  // chain_max_hi groups of chain_threads rows. Then row = lo + (j << chain_thread_bits) decodes as
  // row_offsets(lo) plus the group's offsets hi_*[j], so a thread decodes its rows once a step.
  std::int32_t split = 0;
  std::int32_t hi_in[chain_max_hi] = {}, hi_out[chain_max_hi] = {}, hi_b[chain_max_hi] = {};
  // Batch index -> offset in S_i (first fastest).
  std::int32_t n_b = 0;
  std::int32_t b_extent[chain_max_modes] = {}, b_small[chain_max_modes] = {};
  // Every summed combination: offset in X_{i-1}'s slab (0 for a label X_{i-1} lacks) and in S_i (0
  // for a label S_i lacks); every brought combination: offset in X_i's slab and in S_i.
  std::int32_t k_in[chain_max_k] = {}, k_small[chain_max_k] = {};
  std::int32_t n_out[chain_max_n] = {}, n_small[chain_max_n] = {};
};

struct chain_record {
  std::int32_t steps = 0;
  std::int32_t slab_max = 1;  // elements of the largest slab (each of the two buffers holds this many)
  std::int32_t sd_elems = 0;  // elements of every step's coefficient table together
  std::int32_t vec = 1;       // elements per 16 bytes (the tables' row alignment)
  // X_0's slab in X_0's memory order: extent, stride in X_0, weight in the slab (first fastest);
  // load_shift/store_shift as r_shift (pow2: every extent of both lists a power of two).
  std::int32_t pow2 = 0;
  std::int32_t load_shift[chain_max_modes] = {}, store_shift[chain_max_modes] = {};
  // Every offset is 32-bit: plan_chains takes no X_i of 2^31 elements or more.
  std::int32_t load_count = 1, n_load = 0;
  std::int32_t load_extent[chain_max_modes] = {}, load_slab[chain_max_modes] = {}, load_global[chain_max_modes] = {};
  // X_m's slab in X_m's memory order.
  std::int32_t store_count = 1, n_store = 0;
  std::int32_t store_extent[chain_max_modes] = {}, store_slab[chain_max_modes] = {}, store_global[chain_max_modes] = {};
  // lists_split: both lists decoded with shifts (pow2) and split at bit chain_thread_bits, so entry
  // e = lo + (j << chain_thread_bits), j < chain_max_hi, is the entry lo's offsets plus group j's.
  std::int32_t lists_split = 0;
  std::int32_t load_hi_g[chain_max_hi] = {}, load_hi_slot[chain_max_hi] = {};
  std::int32_t store_hi_g[chain_max_hi] = {}, store_hi_slot[chain_max_hi] = {};
  // Tiles: the passive labels outside the slab (first fastest): extent, stride in X_0 and in X_m;
  // outer_shift as r_shift (outer_pow2).
  std::int32_t tile_count = 1;
  std::int32_t n_outer = 0, outer_pow2 = 0;
  std::int32_t outer_extent[chain_max_modes] = {}, outer_shift[chain_max_modes] = {};
  std::int32_t outer_in[chain_max_modes] = {}, outer_out[chain_max_modes] = {};
  chain_step_record step[chain_max_steps];

  /// Dynamic shared memory of the kernel: two slabs and the coefficient tables.
  [[nodiscard]] std::size_t shared_bytes(std::size_t element_bytes) const noexcept {
    return (2U * static_cast<std::size_t>(slab_max) + static_cast<std::size_t>(sd_elems)) * element_bytes;
  }
};

/// A chain of a tree: its steps in order, the operand ids the kernel reads, and its record.
struct chain_plan {
  std::vector<int> steps;      // tree steps, in order; the last one's result is X_m
  int big_id = -1;             // X_0's operand id
  std::vector<int> small_ids;  // S_i's operand id, per step
  std::vector<std::uint8_t> small_is_lhs;  // S_i is the step's lhs (else its rhs), per step
  chain_record rec;
  double bytes_saved = 0;  // bytes the steps one by one move beyond the chain's (X_1..X_{m-1} written and read)
};

struct chain_limits {
  std::int64_t slab_bytes = 16 * 1024;   // one slab (the kernel holds two)
  std::int64_t table_bytes = 16 * 1024;  // the coefficient tables together
  std::int64_t min_big = 1 << 16;        // X_i at least this many elements
  std::int64_t max_small = 4096;         // S_i at most this many elements
  std::int64_t min_run = 32;             // aim: X_0's and X_m's slabs cover runs of this many elements
  int min_steps = 2;
};

/// The chains of a tree whose operands lie at `strides` (by operand id: inputs, then each step's
/// result; dense, as plan_steps lays them out). `eligible[k]`: step k may join a chain (a library
/// or tiled step, not absorbed into the fused launch). Each chain is a maximal run of eligible
/// large x small steps, each consuming the previous one's result, cut where a slab or the tables
/// would outgrow `limits`; chains of fewer than limits.min_steps steps are left out.
std::vector<chain_plan> plan_chains(const problem& p, const std::vector<std::vector<std::int64_t>>& strides,
                                    const std::vector<std::uint8_t>& eligible, std::size_t element_bytes,
                                    const chain_limits& limits = {});

/// The kernel's arithmetic and indexing on the host (for tests): writes every element of X_m.
/// `smalls[i]`: S_i's elements at its strides.
template <class T>
void evaluate_chain(const chain_record& r, const T* x0, const T* const* smalls, T* xm);

}  // namespace tnrt
