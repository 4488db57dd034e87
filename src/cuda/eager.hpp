#pragma once
// Eager execution: each step of a tree is lowered, planned (through the cache) and enqueued as it
// comes; intermediates come from the pool and go back to it, stream-ordered, as soon as they are
// consumed. No host synchronization.
#include <span>
#include <vector>

#include "cuda/engine.hpp"
#include "tnrt/network.hpp"

namespace tnrt::cuda {

/// A device operand: memory and its layout (strides in elements, by the operand's labels).
struct device_operand {
  void* ptr = nullptr;
  std::vector<std::int64_t> strides;
  bool owned = false;  // from the pool, to be released when consumed
};

/// Contracts the whole tree on the engine's stream. `inputs` are borrowed (row-major device
/// buffers). Returns the result (row-major, owned: release it with pool().deallocate).
device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs);

/// Strides of a step's result under the engine's layout policy (the last step is row-major).
std::vector<std::int64_t> result_strides(const engine& eng, const network& net, const step& s, const labelled_layout& lhs,
                                         const labelled_layout* rhs, bool last);

}  // namespace tnrt::cuda
