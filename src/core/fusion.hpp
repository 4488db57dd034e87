#pragma once
// Absorbing small steps. Of the reference network's 549 steps, 515 have operands and results of at
// most 1024 elements; launched one by one, each costs a kernel launch and a few microseconds of an
// idle GPU, more than its arithmetic. They form a few dozen subtrees whose leaves are all inputs, so
// every one of them can run first, in ONE launch: a thread block per subtree walks its steps level
// by level (the steps of one level depend on none of each other, so they run together between two
// barriers), with intermediates in a small scratch buffer. Only the subtrees' roots reach the arena.
//
// plan_fusion picks the maximal subtrees whose every step fits the limits; describe_small_step turns
// one lowered step into the fixed-size record the kernel reads; group_small_steps marks which
// records run together; plan_fusion_scratch places the intermediates; evaluate_small_step is the
// same arithmetic on the host, so the records are tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/step_lowering.hpp"
#include "tnrt/network.hpp"

namespace tnrt {

struct fusion_limits {
  std::int64_t max_elements = 1024;  // of each operand and result of an absorbed step
  int min_subtree_steps = 2;         // a lone small step is cheaper through the library
  /// Per step, nonzero when it fits a record (describe_small_step of its lowered form); null: every
  /// step does. A step that does not is not absorbed, nor anything above it. Until 2026-12-07 one
  /// such step dropped the whole fusion plan (plan_steps checked the records afterwards): at
  /// fuse_max_elements 16384 a bond-2 step of 2^13 elements and 13 modes, past small_step_max_modes,
  /// left five networks of the fuse-max sweep without a fused launch
  /// (bench/results/2026-12-07b-h100-diag, cpu-2026-12-07-fusion-counts).
  const std::vector<char>* step_fits = nullptr;
};

struct fusion_plan {
  /// Absorbed steps, subtree by subtree, each subtree level by level (by step id within a level),
  /// its root last.
  std::vector<int> absorbed;
  /// Per entry of `absorbed`: its level in its subtree, 0 for a step whose operands are all inputs,
  /// else 1 + the largest level of its operand steps. Steps of one level never read each other.
  std::vector<int> level;
  /// subtree s covers absorbed[subtree_begin[s] .. subtree_begin[s+1]).
  std::vector<int> subtree_begin;
  /// Per step: true when absorbed (roots included).
  std::vector<char> is_absorbed;
  /// Steps left to the library, in tree order.
  std::vector<int> library_steps;
  [[nodiscard]] std::size_t subtrees() const noexcept { return subtree_begin.empty() ? 0 : subtree_begin.size() - 1; }
  [[nodiscard]] bool is_root(int step) const;
};

fusion_plan plan_fusion(const problem& p, const fusion_limits& limits = {});
/// Every step left to the library.
fusion_plan no_fusion(std::size_t steps);

/// At most this many records run together between two barriers of the fused launch (one group), and
/// at most small_step_group_outputs result elements among them.
inline constexpr int small_step_group_max = 8;
inline constexpr std::int32_t small_step_group_outputs = 2048;

/// At most this many modes per category (output, summed) in a record.
inline constexpr int small_step_max_modes = 12;
/// An operand whose elements span at most this many (the default fusion limit) is copied into
/// shared memory before its step runs (small_step_record::a_span): one round of loads, all in
/// flight together, instead of a round trip to memory for each summed term.
inline constexpr std::int32_t small_step_stage_elements = 1024;

/// One absorbed step as the fused kernel reads it: D[o] = sum_k A[a(o,k)] * B[b(o,k)] (B null: a
/// reduction), o over D's modes, k over the summed modes, offsets in elements.
struct small_step_record {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  std::int32_t n_out = 0, n_sum = 0;
  std::int32_t out_count = 1, sum_count = 1;
  std::int32_t out_extent[small_step_max_modes] = {}, out_a[small_step_max_modes] = {}, out_b[small_step_max_modes] = {},
               out_d[small_step_max_modes] = {};
  std::int32_t sum_extent[small_step_max_modes] = {}, sum_a[small_step_max_modes] = {}, sum_b[small_step_max_modes] = {};
  /// Nonzero when every extent is a power of two: then a mode's index is (i >> shift) & (extent - 1),
  /// i the output (or summed) position and shift the bits of the modes after it, and neither
  /// evaluator divides (an integer division is about 20 instructions on the GPU, and these steps are
  /// nearly all index arithmetic). small_step_index.hpp holds the decode for both evaluators.
  std::int32_t pow2 = 0;
  std::uint8_t out_shift[small_step_max_modes] = {}, sum_shift[small_step_max_modes] = {};
  /// 1 + the largest offset the step reads in A and in B (0 for no B), when both are at most
  /// small_step_stage_elements: the kernel stages a[0, a_span) and b[0, b_span) in shared memory.
  /// 0 and 0 otherwise (read in place).
  std::int32_t a_span = 0, b_span = 0;
  /// Records from this one to the end of its group, itself included (group_small_steps): the kernel
  /// runs records [i, i + group_left) together, between two barriers. 1: alone.
  std::int32_t group_left = 1;
};

/// False (record untouched) when the step does not fit a record (too many modes, a stride or count
/// beyond 32 bits): it then goes to the library. `stage` false (options::fuse_stage): no operand is
/// staged in shared memory (a_span and b_span 0).
bool describe_small_step(const lowered_step& s, const void* a, const void* b, void* d, small_step_record& out, bool stage = true);

/// Marks the groups of `records` (one per entry of f.absorbed, in that order): consecutive records of
/// one subtree and one level, at most small_step_group_max of them and small_step_group_outputs
/// result elements; a staged record (a_span > 0) stays alone. `together` false
/// (options::fuse_levels): every record alone, one barrier per step.
void group_small_steps(const fusion_plan& f, std::vector<small_step_record>& records, bool together = true);

/// Where the absorbed intermediates live in one scratch block: per subtree, a memory plan whose time
/// is the level, so that no two steps of one level (which may run together) share bytes, nor a step's
/// result with what any step of its level reads. Roots are not placed (they go to the caller's
/// arena). `consumer` as step_consumers; bytes_of(step) the result's bytes.
struct fusion_scratch {
  /// Per step of the tree: its offset in the scratch block (0 for steps not placed).
  std::vector<std::size_t> offset;
  std::size_t bytes = 0;
};
fusion_scratch plan_fusion_scratch(const fusion_plan& f, const std::vector<int>& consumer,
                                   const std::function<std::size_t(int)>& bytes_of, std::size_t alignment);

template <class T>
void evaluate_small_step(const small_step_record& r);

/// Grid runs (compiled programs; options::grid_steps). A step of a few thousand elements costs a
/// kernel launch and a GPU that waits for it, several microseconds, more than its bytes (qaoa-zz:
/// 190 library launches at 5.2 us each beyond its byte floor on the H200). Consecutive such steps
/// of the program (described as small_step_records, unstaged) run instead in one cooperative launch,
/// in order, each over the whole grid, with a grid-wide barrier between two steps
/// (src/cuda/small_steps.cu, launch_grid_steps). Being in order, a run keeps the program's memory
/// plan as it is.
struct grid_step_limits {
  std::int64_t max_outputs = 1 << 20;  // result elements of one step
  std::int64_t max_madds = 1 << 24;    // its multiply-adds, out_count x sum_count
  /// Summed terms of one result element: each is one thread's, one after another (a step that sums
  /// much into few elements, such as a full contraction, would leave the grid idle).
  std::int64_t max_sum = 512;
  int min_run = 2;                     // a lone step is cheaper through its own launch
};
/// The step's record fits a grid run: no operand staged, and within `limits`.
bool grid_step_fits(const small_step_record& r, const grid_step_limits& limits);
/// The runs [begin, end) of consecutive entries of `fits` that are nonzero, each at least `min_run`
/// long, in order.
std::vector<std::pair<int, int>> plan_grid_runs(const std::vector<char>& fits, int min_run);

}  // namespace tnrt
