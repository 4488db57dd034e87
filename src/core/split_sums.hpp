#pragma once
// Split-K by labels: a step that sums a long contraction into a small result, say
//   out[b m n] = sum over k1..k21 of lhs[b m k] * rhs[b n k]     (out 2^12 elements, sum 2^21 long)
// leaves most of the GPU idle in cuTENSOR (one tile or a few per result element block, no split of
// the sum): 78.6 ms for a step whose roofline is 0.76 ms (bench/results/2026-12-03-h200-calibration,
// probe). Kept apart, some of the summed labels make the step a batched one with a result P times
// larger, and a reduction of that small result finishes the sum:
//   tmp[b m n kk] = sum over the other k of lhs * rhs;   out[b m n] = sum over kk of tmp
// 1.73 ms and a few microseconds (P = 2^8). The rewrite is on the tree alone (two steps for one), so
// any backend could run it; today only the compiled GPU program does: it times the split tree against
// the tree as it is and keeps the faster (options::split_sums).
#include <cstdint>
#include <optional>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt {

struct split_sum_rules {
  double min_multiply_adds = 16777216;  // 2^24: smaller steps cost microseconds either way
  double min_result = 2;                // a full reduction to a scalar runs well in the library
  double max_result = 65536;            // 2^16: larger results fill the GPU by themselves
  double min_sum = 16384;               // 2^14: the sum's length (product of the summed labels)
  double target_result = 1048576;       // 2^20: the kept labels grow the result to about this
  double min_sum_left = 1024;           // 2^10: what each kept slice still sums
  double min_factor = 4;                // fewer kept elements than this: not worth a step
};

struct split_sums_result {
  contraction_tree tree;
  /// per step of `tree`: the step of the original tree it comes from (a split step's two steps both
  /// name it).
  std::vector<int> origin;
  int split = 0;  // steps split
};

/// The tree with every step the rules pick split in two; nullopt when none qualifies. Kept labels
/// are summed labels of both operands (never a one-sided sum or a diagonal), taken from the middle
/// of the lhs's order outward (the first and last, likely contiguous in some layout, last of all).
/// Throws what operand_labels throws for an invalid tree.
std::optional<split_sums_result> split_long_sums(const network& net, const contraction_tree& tree, const split_sum_rules& rules = {});

}  // namespace tnrt
