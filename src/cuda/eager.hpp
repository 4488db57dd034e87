#pragma once
// Eager execution: each step of a tree is lowered, planned (through the cache) and enqueued as it
// comes; intermediates come from the pool and go back to it, stream-ordered, as soon as they are
// consumed. No host synchronization.
#include <span>
#include <vector>

#include "core/fusion.hpp"
#include "core/tiled.hpp"
#include "cuda/engine.hpp"
#include "tnrt/network.hpp"

namespace tnrt::cuda {

/// A device operand. Its layout lives beside it, in the strides of its operand id (see below).
struct device_operand {
  void* ptr = nullptr;
  bool owned = false;  // from the pool, to be released when consumed
};

/// One eager call: borrowed device inputs with their strides (in elements; null = row-major), the
/// result's destination (null = a pool block, row-major) and the stream everything goes on.
struct eager_call {
  std::span<void* const> inputs;
  const std::vector<std::vector<std::int64_t>>* input_strides = nullptr;
  void* output = nullptr;
  const std::vector<std::int64_t>* output_strides = nullptr;  // with `output`; null = row-major
  cudaStream_t stream = nullptr;
};

/// Contracts the whole tree on `call.stream`. Returns the result: `call.output` (not owned) or a
/// row-major pool block (owned: release it with pool().deallocate on that stream). Enqueues only.
device_operand contract_eager(engine& eng, const problem& p, const eager_call& call);
/// Row-major inputs, a pool result, on the engine's own stream.
device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs);

// What eager and compiled execution share: layouts, lowering, the fusion plan, the kernel limits.

/// Strides of every operand id, sized inputs + steps: the inputs row-major (or `given`), the steps'
/// still empty.
std::vector<std::vector<std::int64_t>> input_strides(const problem& p, const std::vector<std::vector<std::int64_t>>* given = nullptr);
/// Lowers step k once its operands' strides are known, and records its result's strides (the
/// engine's layout policy; the last step row-major, or `final_strides` when given).
lowered_step lower_tree_step(const engine& eng, const problem& p, std::size_t k, std::vector<std::vector<std::int64_t>>& strides,
                             const std::vector<std::int64_t>* final_strides = nullptr);
/// The fusion plan under the engine's options; every step to the library when fusion is off, or
/// when some absorbed step does not fit a record. `lowered` must hold the absorbed steps' forms
/// (lower them first: plan_fusion(p) tells which).
fusion_plan checked_fusion(const fusion_plan& planned, std::size_t steps, const std::vector<lowered_step>& lowered);
fusion_plan fusion_of(const engine& eng, const problem& p);
/// The tiled kernel's limits under the engine's options.
tiled_limits tiled_limits_of(const engine& eng);
/// describe_tiled under the engine's limits, with the plan eager takes without timing: results in
/// runs where they apply, else contracted modes first when a result sums over many combinations,
/// else D's leading modes first when that gives runs sharing coefficients.
bool describe_tiled_for(const engine& eng, const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                        tiled_record& out);

}  // namespace tnrt::cuda
