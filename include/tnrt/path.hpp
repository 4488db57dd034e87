#pragma once
// Contraction paths (when none is given) and the cost model behind `tnrt inspect`.
#include <cstdint>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt {

enum class path_optimizer { greedy, exhaustive, automatic, hyper };

/// Returns an opt_einsum-style linear path for the network's inputs. greedy: repeatedly contract
/// the pair with the smallest (size(out) - size(a) - size(b)), preferring pairs that share labels;
/// exhaustive: best total multiply-adds over all orders (at most 8 inputs, else throws usage_error);
/// hyper: search_path (tnrt/search.hpp) with its default options (seed 0, 64 random-greedy trials and
/// subtree reconfiguration, at most 1 s); automatic: search_path scored by tnrt's cost model too,
/// bounded by trials so that it is deterministic (automatic_search_options). Both score with the
/// cost model of `type` (its bytes per element).
std::vector<std::vector<int>> optimize_path(const network& net, path_optimizer how = path_optimizer::automatic,
                                            dtype type = dtype::f32);

struct tree_cost {
  std::size_t steps = 0;
  double log2_tc = 0;   // log2 of multiply-adds: sum over steps of the product of all labels' extents in the step
  double log2_sc = 0;   // log2 of the largest tensor's element count (inputs, intermediates, result)
  double log2_rwc = 0;  // log2 of elements read and written: sum over steps of |lhs| + |rhs| + |out|
  double flops = 0, max_elements = 0, rw_elements = 0;  // the same, not in log2
  /// bytes read and written for a dtype: rw_elements * size_of(type)
  [[nodiscard]] double rw_bytes(dtype type) const noexcept { return rw_elements * static_cast<double>(size_of(type)); }
};
tree_cost cost_of(const network& net, const contraction_tree& tree);
/// Each step's multiply-adds (the product of the extents of every label it touches): the terms of
/// cost_of's flops, in step order.
std::vector<double> step_multiply_adds(const network& net, const contraction_tree& tree);

}  // namespace tnrt
