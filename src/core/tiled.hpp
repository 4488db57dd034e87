#pragma once
// Tiled streaming contractions: one operand large (Big), the other small enough for shared memory
// (Small). These are the steps that carry nearly all the bytes of a tensor-network tree, and they
// are memory-bound: the ideal is to read Big once and write the result D once, both in long
// contiguous runs. A GEMM-shaped library kernel handles them poorly when the small side's extents
// are tiny (2..16) and the contracted or batch modes sit in the middle of Big's memory order.
//
// Every mode of the step has a role:
//   free      in D and Big, not Small          (the big, "outer" space)
//   batch     in D, Big and Small
//   s_free    in D and Small, not Big
//   contracted not in D (in Big and/or Small; a one-sided sum has stride 0 on the other side)
// A block of the kernel takes one *tile*: a few free modes T (chosen so that Big's and D's fastest
// modes are inside the tile, making both the loads and the stores contiguous runs), times every
// batch and contracted mode of Big. It stages that slab of Big in shared memory with coalesced
// loads (the next tile's slab is loaded into registers while the current one is computed), then
// writes the tile of D in D's memory order:
//   D[o, t, y] = sum_k  Big[o, t, batch(y), k] * Small[batch(y), s_free(y), k]
// The remaining free modes ("outer") number the tiles; each block walks tiles in a grid-stride loop.
// Plan (describe_tiled, host, no CUDA) and run (launch_tiled, src/cuda/tiled.cu) are separate;
// evaluate_tiled is the kernel's arithmetic and indexing on the host, for tests.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/step_lowering.hpp"

namespace tnrt {

inline constexpr int tiled_threads = 256;   // threads per block
inline constexpr int tiled_max_modes = 24;  // per list (tile of Big, tile of D, contracted)
inline constexpr int tiled_max_outer = 32;  // outer groups after merging (one per lane of a warp)
inline constexpr int tiled_reg_bytes = 64;  // bytes of Big each thread copies per tile (at most)
inline constexpr int tiled_outputs_per_thread = 16;  // results of one tile per thread (at most)
inline constexpr int tiled_max_k = 64;               // contracted combinations (a table in the record)
inline constexpr int tiled_stages = 3;               // slabs in shared memory: 2 tiles copied ahead
inline constexpr int tiled_max_group = 16;           // tiles per pipeline stage (at most)

/// Most elements of Big one tile may hold for an element size (every thread copies at most
/// tiled_reg_bytes of each tile).
constexpr std::int64_t tiled_max_tile_big(std::size_t element_bytes) {
  return tiled_threads * (tiled_reg_bytes / static_cast<std::int64_t>(element_bytes));
}

/// The kernel's contracted-loop length for `k_count` combinations: the next power of two (it is a
/// template parameter; the extra iterations are skipped).
constexpr int tiled_k_max(std::int64_t k_count) {
  int k = 1;
  while (k < k_count) k *= 2;
  return k;
}

/// Most contracted combinations for an element size: each thread keeps its results' Small
/// coefficients in registers (at most 256 bytes per result).
constexpr std::int64_t tiled_max_k_for(std::size_t element_bytes) {
  const auto k = static_cast<std::int64_t>(256 / element_bytes);
  return k < tiled_max_k ? k : tiled_max_k;
}

/// Results per thread per tile: each thread holds k_max coefficients for each of its results in
/// registers, 128 bytes of them in all (at least one result, at most tiled_outputs_per_thread).
constexpr int tiled_outputs(std::size_t element_bytes, int k_max) {
  const auto n = static_cast<int>(128 / (static_cast<std::size_t>(k_max) * element_bytes));
  return n < 1 ? 1 : (n > tiled_outputs_per_thread ? tiled_outputs_per_thread : n);
}

/// How a thread lays out its results of one tile (tiled_record::vec_kind). `scalar`: result e of
/// the tile belongs to thread e % tiled_threads. The run layouts give each thread runs of
/// tiled_vec_d adjacent results of D (one 16-byte store), where D's tile starts with a dense run:
///   run_values: result u of a run reads its slab values at the run's first slot + vec_slot[u]
///               (the same offsets in every run; all 0 when the run's modes are s_free, absent from
///               Big: then the values are loaded once per run), with its own coefficients;
///   run_coefs:  the run's modes are free modes leading the slab too, so its results share their
///               coefficients and read their values as one 16-byte shared-memory load per
///               contracted combination (and a thread holds tiled_vec_d times as many results).
///   run_table:  run_values' layout, but the coefficients come from a table in shared memory
///               (Small's values for every combination of D's modes that Small has, times the
///               contracted combinations, K_MAX a row), not from registers: a thread then holds up
///               to tiled_outputs_per_thread results however many combinations a result sums, and
///               each of a run's results loads its value once per run and its coefficients as
///               16-byte rows (regular4-n70's step 39: 32 combinations, one result a thread in the
///               scalar layout, 32 shared loads a result; bench/results/2026-12-06l-h100-suite).
///               Planned for f32 with at least 8 combinations a result only (the kernel's
///               instantiations for the rest would grow every binary that links it).
enum tiled_vec_kind : std::int32_t { tiled_scalar = 0, tiled_run_values = 1, tiled_run_coefs = 2, tiled_run_table = 3 };

/// Results per vector: 16 bytes' worth (1 for 16-byte elements, which store whole anyway).
constexpr int tiled_vec_d(std::size_t element_bytes) {
  return element_bytes < 16 && 16 % element_bytes == 0 ? static_cast<int>(16 / element_bytes) : 1;
}

inline constexpr int tiled_max_outputs_vec = 32;  // results per thread per tile, run_coefs (at most)

/// Most elements of run_table's coefficient table (rows of the kernel's K_MAX).
inline constexpr std::int64_t tiled_max_table = 4096;

/// Results per thread per tile for a layout. run_coefs holds one coefficient set per vector, so
/// tiled_vec_d times as many results in the same registers; run_table holds none.
constexpr int tiled_outputs_for(std::size_t element_bytes, int k_max, std::int32_t vec_kind) {
  if (vec_kind == tiled_run_table) return tiled_outputs_per_thread;
  const int n = tiled_outputs(element_bytes, k_max);
  if (vec_kind != tiled_run_coefs) return n;
  const int v = n * tiled_vec_d(element_bytes);
  return v > tiled_max_outputs_vec ? tiled_max_outputs_vec : v;
}

/// Dynamic shared memory of the kernel for slabs of `tile_big` elements, `group` tiles per stage,
/// Small's `small_span` elements and run_table's `table` elements (after 16 bytes of room to align
/// it): tiled_stages stages, rounded up to 16 bytes.
constexpr std::size_t tiled_shared_bytes(std::int64_t tile_big, std::int64_t group, std::int64_t small_span, std::size_t element_bytes,
                                         std::int64_t table = 0) {
  auto values = static_cast<std::size_t>(tiled_stages * group * tile_big + small_span) * element_bytes;
  if (table > 0) values += 16U + static_cast<std::size_t>(table) * element_bytes;
  return (values + 15U) / 16U * 16U;
}

struct tiled_limits {
  std::int64_t max_small_bytes = 48 * 1024;  // Small is staged whole in shared memory
  std::int64_t min_d_elements = 1 << 16;     // smaller steps stay with the library
  std::int64_t min_contig_bytes = 256;       // aim: loads and stores in runs of at least this
  std::int64_t min_tile_d = 4096;            // grow the tile until it has this many results
  std::int64_t max_tile_d = tiled_threads * tiled_max_outputs_vec;  // (and threads x tiled_outputs_for)
  std::int64_t max_shared_bytes = 96 * 1024;  // the kernel's dynamic shared memory
  std::int64_t stage_bytes = 16 * 1024;       // Big copied per pipeline stage (tiles are grouped)
  /// Stage the contracted modes first in shared memory (a result's values then load as vectors),
  /// rather than in Big's order (which keeps the 16-byte copies). Which is faster depends on the
  /// step; compiled `automatic` times both.
  bool contracted_first = false;
  /// Give threads runs of adjacent results (tiled_vec_kind) where D's tile allows it; false keeps
  /// the scalar layout (compiled `automatic` times both).
  bool vector_results = true;
  /// Stage D's leading free modes first in shared memory (then Big's order): lets D's runs share
  /// coefficients (tiled_run_coefs) where Big leads with a batch or contracted mode, at the cost of
  /// the 16-byte copies there. Ignored with contracted_first. Compiled `automatic` times it.
  bool d_first = false;
  /// Plan run_table (coefficients from a shared-memory table) where D's tile allows runs; false
  /// keeps the register layouts. Compiled `automatic` times it among the alternatives.
  bool table_results = false;
};

struct tiled_record {
  const void* big = nullptr;
  const void* small = nullptr;
  void* d = nullptr;
  std::int64_t tile_count = 1;  // tiles (outer space)
  std::int32_t tile_big = 1;    // elements of Big per tile (staged)
  std::int32_t tile_d = 1;      // elements of D per tile
  std::int32_t k_count = 1;     // contracted combinations
  std::int32_t small_span = 1;  // elements of Small staged (max offset + 1)
  /// Elements of Big per asynchronous copy (16 bytes' worth when the slab's leading modes are a
  /// dense run of that many elements and every other offset keeps that alignment; else 1).
  std::int32_t vec = 1;
  std::int32_t vec_planned = 1;  // what the strides allow; `vec` also needs Big's base 16-byte aligned
  std::int32_t small_is_a = 0;   // Small is the step's lhs (a), Big its rhs (b)
  /// Tiles per pipeline stage: a block copies `group` consecutive tiles' slabs at once, so that a
  /// stage holds about tiled_limits::stage_bytes however small one tile is.
  std::int32_t group = 1;
  /// 1 when a result's slab values are the k_count adjacent slots from its own (every contracted
  /// mode staged, fastest, and k_count a power of two): the kernel loads them as vectors.
  std::int32_t k_dense = 0;
  /// 1 when planned with tiled_limits::contracted_first (d_first: with tiled_limits::d_first).
  std::int32_t contracted_first = 0;
  std::int32_t d_first = 0;
  /// 1 when a thread's consecutive results can share slab values (s_free modes come right after
  /// the first tiled_threads results of the tile): the kernel then keeps them across results.
  std::int32_t reuse = 0;
  /// tiled_vec_kind; vec_d results per vector (1 when scalar). vec_store: 1 when every vector's
  /// address is 16-byte aligned (bind_tiled checks D's base), else the kernel stores each result.
  std::int32_t vec_kind = tiled_scalar;
  std::int32_t vec_d = 1;
  std::int32_t vec_slot[4] = {};  // run_values: slot offset of each result of a run from its first
  std::int32_t vec_store = 0;
  std::int32_t n_big = 0, n_d = 0, n_k = 0, n_outer = 0;
  // The staged slab, first mode fastest (Big's memory order): extent and stride in Big. Slot of an
  // element in shared memory = its mixed-radix index in this order.
  std::int32_t big_extent[tiled_max_modes] = {}, big_stride[tiled_max_modes] = {};
  // The tile of D, first mode fastest (D's memory order): extent, stride in D, weight in the slab's
  // slot (0 for s_free modes), stride in Small (0 for free modes).
  std::int32_t d_extent[tiled_max_modes] = {}, d_stride[tiled_max_modes] = {}, d_slot[tiled_max_modes] = {},
               d_small[tiled_max_modes] = {};
  /// run_table: each D mode's weight in the table's row (0 for modes Small lacks); the table has
  /// table_rows rows of tiled_k_max(k_count) elements (row r, combination k: Small at the offset of
  /// row r's modes plus combination k's, 0 for k >= k_count).
  std::int32_t d_row[tiled_max_modes] = {};
  std::int32_t table_rows = 0;
  // Contracted modes: extent, weight in the slab's slot (0 when Big lacks it), stride in Small.
  std::int32_t k_extent[tiled_max_modes] = {}, k_slot[tiled_max_modes] = {}, k_small[tiled_max_modes] = {};
  // Every contracted combination's slab slot (low 16 bits) and offset in Small (high 16 bits): the
  // k loop reads these from the kernel's parameters (uniform across the block).
  std::uint32_t k_pack[tiled_max_k] = {};
  // Outer groups, first fastest: extent, divisor (product of the extents before it), strides.
  std::int64_t outer_extent[tiled_max_outer] = {}, outer_div[tiled_max_outer] = {}, outer_big[tiled_max_outer] = {},
               outer_d[tiled_max_outer] = {};

  /// Dynamic shared memory the kernel needs for this record with elements of `element_bytes`.
  [[nodiscard]] std::size_t shared_bytes(std::size_t element_bytes) const noexcept;
};

/// Builds the record for a contraction step when the tiled kernel can run it; false otherwise
/// (record untouched). `a`, `b`, `d` are the step's operand pointers (lhs, rhs, result); they are
/// only stored, so null is fine for a dry run.
bool describe_tiled(const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                    tiled_record& out, const tiled_limits& limits = {});

/// Whether two records of one step plan the same kernel work (slab, D's tile, results' layout),
/// whatever the pointers: a candidate identical to another need not be timed again.
bool same_tiled_plan(const tiled_record& x, const tiled_record& y) noexcept;

/// The other plans of a step worth timing against `chosen` (under `base` limits): the slab in Big's
/// order, contracted modes first, or D's leading modes first (only with results in runs: it exists
/// to make them share coefficients), each with results in runs and scalar, and (base.table_results)
/// the first two with run_table; every one distinct from `chosen` and from each other
/// (same_tiled_plan). Pointers unbound (bind_tiled).
std::vector<tiled_record> tiled_alternatives(const lowered_step& s, std::size_t element_bytes, const tiled_limits& base, const tiled_record& chosen);

/// Points a planned record at a step's operands (lhs `a`, rhs `b`, result `d`) without planning
/// again: what a repeated contraction of the same step needs. describe_tiled ends with it.
void bind_tiled(tiled_record& r, const void* a, const void* b, void* d) noexcept;

/// The kernel's arithmetic and indexing on the host (for tests): writes every element of D.
template <class T>
void evaluate_tiled(const tiled_record& r);

}  // namespace tnrt
