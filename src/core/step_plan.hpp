#pragma once
// Which kernel each step of a tree gets, decided in one place and without a GPU. A step plan is a
// pure function of the problem, the options and the layouts of the inputs and of the result; eager
// and compiled execution (src/cuda) both build theirs with plan_steps and only carry it out: they
// bind pointers to the records and launch, one switch over step_kernel each.
//
// What the plan says about tnrt's tiled kernel under kernel_choice::automatic is "candidate": the
// step is one the kernel can take, with the plan eager takes without timing (tiled_rule below).
// Eager runs every candidate with the tiled kernel (it has no time to measure). Compiled times each
// candidate at compile time, the record and its tiled_alternatives against cuTENSOR, and keeps the
// fastest: that measuring is execution, so it stays in src/cuda/compiled.cpp. With `always` a
// candidate is the tiled kernel's in both; with `never` there are none.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/fusion.hpp"
#include "core/step_lowering.hpp"
#include "core/tiled.hpp"
#include "tnrt/network.hpp"
#include "tnrt/options.hpp"

namespace tnrt {

/// What runs a step.
///   fused:   absorbed into the one launch of small subtrees (fusion_plan)
///   tiled:   tnrt's tiled streaming kernel (a candidate under `automatic`: see above)
///   library: cuTENSOR
///   copy:    the step-less tree: its single input copied to the result
enum class step_kernel : std::uint8_t { fused, tiled, library, copy };

const char* name_of(step_kernel k) noexcept;

struct step_plan {
  /// Strides (in elements) of every operand id: the inputs', then each step's result.
  std::vector<std::vector<std::int64_t>> strides;
  /// Each step's lowered form, under those strides.
  std::vector<lowered_step> lowered;
  fusion_plan fusion;
  /// Each step's consumer (step_consumers; -1 for the last).
  std::vector<int> consumer;
  /// Each step's kernel; a step-less tree has exactly one entry, `copy`.
  std::vector<step_kernel> kernel;
  /// Per step: where kernel is `tiled`, its record, planned with null pointers (bind_tiled points
  /// it at a call's buffers); default elsewhere.
  std::vector<tiled_record> tiled;

  /// Steps (or the copy) of kernel `k`.
  [[nodiscard]] std::size_t count(step_kernel k) const noexcept;
};

/// The plan for `p` under `opt` (intermediate_layout, fuse_small_steps, fuse_max_elements,
/// tiled_kernel, tiled_min_elements). `input_strides`: each input's strides (null: row-major);
/// `final_strides`: the last step's result (null: row-major). Deterministic.
step_plan plan_steps(const problem& p, const options& opt, const std::vector<std::vector<std::int64_t>>* input_strides = nullptr,
                     const std::vector<std::int64_t>* final_strides = nullptr);

// The pieces plan_steps is made of (each a pure function too).

/// Strides of every operand id, sized inputs + steps: the inputs row-major (or `given`), the steps'
/// still empty.
std::vector<std::vector<std::int64_t>> input_strides(const problem& p, const std::vector<std::vector<std::int64_t>>* given = nullptr);
/// Lowers step k once its operands' strides are known. Its result takes the strides already in
/// `strides` (the planned layout: plan_steps fills every operand's from planned_strides,
/// core/mode_orders.hpp, before the first step), else the options' intermediate layout's (the last
/// step row-major, or `final_strides` when given), which it records there.
lowered_step lower_tree_step(const options& opt, const problem& p, std::size_t k, std::vector<std::vector<std::int64_t>>& strides,
                             const std::vector<std::int64_t>* final_strides = nullptr);
/// The fusion plan under the options (fuse_small_steps, fuse_max_elements): plan_fusion's subtrees
/// of steps whose lowered form (`lowered`, by step) fits a record; every step to the library when
/// fusion is off or no subtree is left.
fusion_plan fusion_of(const options& opt, const problem& p, const std::vector<lowered_step>& lowered);
/// The tiled kernel's limits under the options.
tiled_limits tiled_limits_of(const options& opt);
/// The tiled rule: describe_tiled under the options' limits, with the plan eager takes without
/// timing: results in runs where they apply, else contracted modes first when a result sums over
/// many combinations, else D's leading modes first when that gives runs sharing coefficients.
/// False (record untouched) when the kernel cannot take the step.
bool describe_tiled_for(const options& opt, const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                        tiled_record& out);

}  // namespace tnrt
