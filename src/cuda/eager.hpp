#pragma once
// Eager execution: each step of a tree is lowered, planned (through the cache) and enqueued as it
// comes; intermediates come from the pool and go back to it, stream-ordered, as soon as they are
// consumed. No host synchronization.
#include <span>
#include <vector>

#include "core/fusion.hpp"
#include "core/skinny.hpp"
#include "core/tiled.hpp"
#include "cuda/engine.hpp"
#include "tnrt/network.hpp"

namespace tnrt::cuda {

/// A device operand. Its layout lives beside it, in the strides of its operand id (see below).
struct device_operand {
  void* ptr = nullptr;
  bool owned = false;  // from the pool, to be released when consumed
};

/// Contracts the whole tree on the engine's stream. `inputs` are borrowed (row-major device
/// buffers). Returns the result (row-major, owned: release it with pool().deallocate).
device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs);

// What eager and compiled execution share: layouts, lowering, the fusion plan, the kernel limits.

/// Strides of every operand id, sized inputs + steps: the inputs row-major, the steps' still empty.
std::vector<std::vector<std::int64_t>> input_strides(const problem& p);
/// Lowers step k once its operands' strides are known, and records its result's strides (the
/// engine's layout policy; the last step row-major).
lowered_step lower_tree_step(const engine& eng, const problem& p, std::size_t k, std::vector<std::vector<std::int64_t>>& strides);
/// The fusion plan under the engine's options; every step to the library when fusion is off, or
/// when some absorbed step does not fit a record. `lowered` must hold the absorbed steps' forms
/// (lower them first: plan_fusion(p) tells which).
fusion_plan checked_fusion(const fusion_plan& planned, std::size_t steps, const std::vector<lowered_step>& lowered);
fusion_plan fusion_of(const engine& eng, const problem& p);
/// The skinny kernel's limits under the engine's options.
skinny_limits skinny_limits_of(const engine& eng);
/// The tiled kernel's limits under the engine's options.
tiled_limits tiled_limits_of(const engine& eng);
/// describe_tiled under the engine's limits, with the plan eager takes without timing: results in
/// runs where they apply, else contracted modes first when a result sums over many combinations,
/// else D's leading modes first when that gives runs sharing coefficients.
bool describe_tiled_for(const engine& eng, const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                        tiled_record& out);

}  // namespace tnrt::cuda
