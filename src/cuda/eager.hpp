#pragma once
// Eager execution: each step of a tree is lowered, planned (through the cache) and enqueued as it
// comes; intermediates come from the pool and go back to it, stream-ordered, as soon as they are
// consumed. No host synchronization.
#include <span>
#include <vector>

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

// The step plan (which kernel each step gets, the layouts, the lowered steps) is core's:
// src/core/step_plan.hpp. Eager keeps the last few per thread and carries them out.

}  // namespace tnrt::cuda
