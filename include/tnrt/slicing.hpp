#pragma once
// Slicing: contracting a network too large for the memory at hand as a sum of smaller ones.
//
// Fixing a label l to one value v turns the network into a "one slice" network (the same labels,
// operands and tree, with l's extent 1). For a set S of sliced labels, every combination of their
// values gives one slice, and the full result is assembled from the slices' results:
//   R[o...] = sum over the values of S \ output of  slice(values)[o...]
// where a sliced label that is also an output label selects the block of R the slice writes to.
// Each slice needs only the memory of the one-slice problem, at the price of repeating the work that
// does not depend on the sliced labels once per slice.
//
// Memory is counted as compiled execution counts it (include/tnrt/memory_plan.hpp): the arena of the
// static memory plan of the one-slice problem with the inputs in the arena (inputs, intermediates and
// the result, each rounded up to 256 bytes, placed so that buffers live at the same step never
// overlap).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tnrt/cpu.hpp"
#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {

struct slice_plan {
  /// The sliced labels, in the order they were chosen (greedy) or given.
  std::vector<label_t> labels;
  /// Number of slices: the product of the sliced labels' extents (1 when none are sliced).
  std::int64_t slices = 1;
  /// Multiply-adds (tree_cost::flops) of the whole problem, and of all slices together
  /// (slices * the flops of one slice); sliced >= unsliced up to rounding.
  double flops_unsliced = 0, flops_sliced = 0;
  /// slice_peak_bytes of the problem, and of one slice.
  std::size_t peak_bytes_unsliced = 0, peak_bytes_sliced = 0;
};

/// The bytes one contraction of p needs: the arena of plan_memory over tree_liveness(p, inputs in
/// the arena, alignment 256). Throws what tree_liveness and plan_memory throw.
std::size_t slice_peak_bytes(const problem& p);

/// The one-slice problem: p with the extents of `labels` set to 1; labels keep their ids, the tree
/// and dtype are p's, the source says which labels are sliced. Throws shape_error for a label id out
/// of range, a label given twice, or a label that occurs in no input (slicing it would count the
/// result once per value).
problem slice_problem(const problem& p, std::span<const label_t> labels);

/// Chooses the labels to slice so that one slice fits in `memory_limit_bytes`
/// (slice_peak_bytes(slice_problem(p, labels)) <= memory_limit_bytes).
///
/// With `given` non-empty those labels are the plan (validated as slice_problem does); out_of_memory
/// if one slice of them still does not fit. Otherwise greedy, starting from no labels: while one
/// slice does not fit, add the label (of extent > 1, occurring in an input) with the largest
///   ln(peak before / peak after) / (ln(total flops after / total flops before) + 0.01)
/// i.e. the most memory saved per relative flop overhead, the 0.01 keeping free cuts finite
/// (cotengra's SliceFinder weighs the same two quantities). The peak scored is the live-bytes lower
/// bound of the plan (what the arena is packed towards; cheap to evaluate for every candidate); when
/// no candidate lowers it (every buffer it touches is already within one 256-byte block), the exact
/// total bytes of all buffers, which every candidate lowers. Ties: fewer total flops, then the larger
/// saving, then the smaller label id. The choice never depends on the limit, so the labels chosen
/// under a limit are a prefix of those chosen under any smaller one: a smaller limit never gives
/// fewer slices. Throws out_of_memory naming the limit and the smallest peak reached when even
/// slicing every label does not fit, or when the slice count would exceed 2^63-1; path_error /
/// shape_error for an invalid problem (validate()).
slice_plan plan_slices(const problem& p, std::size_t memory_limit_bytes, std::span<const label_t> given = {});

/// The slicing driver is engine-agnostic (core, no engine linked): the engine comes in as a callable.
/// cpu::contract_sliced below binds the CPU reference engine.

/// Contracts one slice: the one-slice problem and its inputs (sliced copies of p's inputs), returning
/// its result (the shape of p's output with every sliced output label's extent 1).
using slice_contractor = std::function<host_tensor(const problem&, std::span<const host_tensor>)>;

/// Progress callback: (slices done, slices total).
using slice_progress_fn = std::function<void(std::int64_t, std::int64_t)>;

/// The result of p assembled from its slices over `labels` (an empty list: one slice, p itself),
/// each contracted by `contract_one`: for every combination of the labels' values (the last label
/// fastest), each input's sub-tensor at those values is copied into a tensor of the one-slice shape,
/// the slice is contracted, and its result is added into R (when no sliced label is an output
/// label) or into R's block at the sliced output labels' values. R has p's output shape and dtype;
/// it equals contracting p whole up to the reordering of the sums. Inputs that hold no sliced label
/// are copied once and shared by every slice.
/// Throws shape_error / dtype_error on inputs that do not match p (as cpu::contract does), what
/// slice_problem throws for bad labels, and what contract_one throws; shape_error if contract_one
/// returns a tensor of the wrong shape or dtype.
/// Slices first, first + stride, ... (`count` of them; -1: every one up to the last) alone give
/// their partial sum: stride 1 is the range [first, first + count), stride = ranks from first = rank
/// a round-robin share (tnrt/distributed.hpp). shape_error for slices outside the range,
/// usage_error for a stride below 1.
host_tensor contract_sliced(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                            const slice_contractor& contract_one, const slice_progress_fn& progress = {}, std::int64_t first = 0,
                            std::int64_t count = -1, std::int64_t stride = 1);

/// One strided move of a sliced run, the unit the device kernels execute (and apply_slice_move on
/// the host): `count` elements over `extents` (row-major order, the last mode fastest) read at
/// src + sum(idx * src_strides) and written (or added) at dst + sum(idx * dst_strides), in elements,
/// where one side's base moves with the slice: + sum over the sliced labels of value * label_strides.
/// Modes of extent 1 are dropped and adjacent modes merged where both sides allow.
struct slice_move {
  std::vector<std::int64_t> extents, src_strides, dst_strides;
  /// Per sliced label (the plan's order): its stride on the sliced side (summed over repeats of the
  /// label in one operand, as on a diagonal), 0 where the operand does not hold it.
  std::vector<std::int64_t> label_strides;
  bool slices_src = true;  // the side whose base moves: the caller's input (true) or the result (false)
  std::int64_t count = 0;
};

/// How every slice of p over `labels` reads the caller's tensors and writes the result. The inputs
/// come in any strides (empty: row-major) and go to dense row-major one-slice buffers; the one-slice
/// result (dense) is added into the caller's result (any strides that do not overlap).
struct slice_layout {
  std::vector<label_t> labels;
  std::vector<std::int64_t> extents, radix;  // per label; radix: the slice index weight (the last label fastest)
  std::int64_t slices = 1;
  /// Inputs whose sub-tensor changes from slice to slice (they hold a sliced label), and the rest.
  std::vector<std::size_t> sliced_inputs, fixed_inputs;
  std::vector<slice_move> input_moves;  // one per input, by input index
  slice_move output_move;               // the one-slice result into its block of the result
  slice_move output_zero;               // the whole result, for zeroing it (dst side only)
};

/// The layout of p's slices over `labels` for inputs of those strides (`input_strides` empty, or one
/// list per input, each empty for row-major) and a result of `output_strides` (empty: row-major).
/// Throws what slice_problem throws, and shape_error for a stride list of the wrong length.
slice_layout layout_slices(const problem& p, std::span<const label_t> labels,
                           std::span<const std::vector<std::int64_t>> input_strides = {},
                           std::span<const std::int64_t> output_strides = {});

/// The value of each sliced label in slice `s` (0 <= s < slices).
std::vector<std::int64_t> slice_values(const slice_layout& l, std::int64_t s);

/// The host reference of one move at slice `s` (elements of `type`): copies, or adds when `add`;
/// a null `src` writes zeros.
void apply_slice_move(const slice_layout& l, const slice_move& m, std::int64_t s, const void* src, void* dst, dtype type, bool add);

namespace cpu {

/// contract_sliced with every slice contracted by cpu::contract.
inline host_tensor contract_sliced(const problem& p, std::span<const host_tensor> inputs,
                                   std::span<const label_t> labels, const slice_progress_fn& progress = {}, std::int64_t first = 0,
                                   std::int64_t count = -1, std::int64_t stride = 1) {
  return tnrt::contract_sliced(
      p, inputs, labels, [](const problem& q, std::span<const host_tensor> in) { return cpu::contract(q, in); },
      progress, first, count, stride);
}

}  // namespace cpu
}  // namespace tnrt
