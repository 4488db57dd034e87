#pragma once
// A seeded, bounded hyper-optimizing path search in the spirit of cotengra's HyperOptimizer:
// random-greedy trials (Boltzmann-sampled pair choices, hyperparameters drawn per trial) followed by
// subtree reconfiguration of the best trees (each subtree of up to `reconf_leaves` sub-operands is
// re-ordered optimally by dynamic programming over subsets when that lowers the cost).
#include <cstdint>
#include <optional>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt {

struct search_options {
  /// seeds every random draw (a splitmix64 stream: the same on every platform).
  std::uint64_t seed = 0;
  /// greedy trials; trial 0 is the plain deterministic greedy of optimize_path(net, greedy), so the
  /// result is never worse than it (under the score below).
  int max_trials = 64;
  /// wall-clock bound on the whole search; 0 (or less) means unbounded. The trials stop at half of
  /// it and reconfiguration at all of it, so a time bound may cut work short: the result is only
  /// deterministic under `seed` with max_seconds = 0 (then bounded by max_trials and by
  /// reconfiguration running to a fixed point, at most `reconf_passes` passes).
  double max_seconds = 1.0;
  /// score = log2(total multiply-adds + size_weight * total elements written by the steps), like
  /// cotengra's "combo" objective; 0 scores multiply-adds alone.
  double size_weight = 0.0;
  /// cap on the element count of every tensor of the tree (inputs, intermediates, result): trees
  /// over it are rejected; none found (or an input or the output over it) throws out_of_memory.
  std::optional<double> memory_limit_elements;
  /// sub-operands of a reconfigured subtree (2 .. 12; 8 re-solves networks of up to 8 inputs exactly).
  int reconf_leaves = 8;
  /// passes of subtree reconfiguration over each reconfigured tree (each stops early at a fixed point).
  int reconf_passes = 8;
  /// how many of the best distinct trial trees get reconfigured.
  int reconf_trees = 3;
};

struct search_result {
  std::vector<std::vector<int>> path;  // opt_einsum-style linear path
  double log2_flops = 0;               // cost_of(...).log2_tc of the path's tree
  double log2_largest = 0;             // cost_of(...).log2_sc
  int trials = 0;                      // greedy trials run
  double seconds = 0;                  // wall-clock time of the search
};

/// Searches a contraction path for `net` (hyperedges, output labels, scalars, disconnected parts
/// all allowed). Throws usage_error for bad options, out_of_memory when the memory limit cannot be met.
search_result search_path(const network& net, const search_options& opt = {});

}  // namespace tnrt
