#pragma once
// Intermediate mode orders of their own, step by step: the `planned` layout (layout_policy::planned;
// plan_steps lowers every step on these strides, compiled times it beside the other layouts and eager
// learns it). Under a whole-network layout (column, row, follow) no compute-heavy step
// of most suite networks is one GEMM as it lies; with each intermediate's order chosen for the
// heaviest step that touches it, the heaviest step of every suite network is (bench/results/
// 2026-12-03-cpu-mode-orders). Host-only and deterministic.
#include <cstdint>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt {

/// What the pass orders by (and what bench/paths/mode_orders.cpp reports): each operand's labels,
/// each step's consumer and multiply-adds, and each label's group at a step. Holds a pointer to `p`.
struct tree_roles {
  const problem* p;
  std::size_t inputs;                             // operand ids below this are the network's inputs
  std::vector<std::vector<label_t>> labels;       // by operand id (operand_labels)
  std::vector<int> consumer;                      // by step: the step reading its result (step_consumers)
  std::vector<double> multiply_adds;              // by step (step_multiply_adds)

  explicit tree_roles(const problem& pr);
  /// The step that writes operand `id` (-1: a network input).
  [[nodiscard]] int producer(std::size_t id) const noexcept { return id < inputs ? -1 : static_cast<int>(id - inputs); }
  /// Label x's group at step k: 0 batch (in A, B and D), 1 m (A and D), 2 n (B and D), 3 k (A and
  /// B), 4 anything else (every label of a unary step).
  [[nodiscard]] int group_at(std::size_t k, label_t x) const;
};

/// Strides (in elements, by each operand's labels) of every operand id of `p`'s tree: the inputs,
/// then each step's result. The inputs and the final result are row-major (as callers hand them
/// and take them). Every other intermediate gets an order from a greedy pass over the binary
/// steps, heaviest (multiply-adds) first: an operand whose order is still free gets one in which
/// the step's groups (batch: in A, B and D; m: A and D; n: B and D; k: A and B) are each
/// contiguous, in the inner order of an operand already fixed that holds the same group. GEMM's
/// fastest group leads (A: m or k, B: k or n, D: m or n, never batch), and the operand's other modes
/// come last. Of the arrangements of the three groups and the orders inside them, the pass keeps the
/// one under which the most of the operand's other step's groups (its producer's or its consumer's)
/// are contiguous too. An intermediate no binary step decided is column-major. Each intermediate's
/// strides are a dense permutation of its extents.
///
/// `input_strides` (null: row-major) and `final_strides` (null: row-major) give the inputs' and the
/// final result's strides where a caller hands other ones (eager views of any layout): their orders
/// (labels by increasing stride) then seed the groups' inner orders, and they are returned as given.
std::vector<std::vector<std::int64_t>> planned_strides(const problem& p, const std::vector<std::vector<std::int64_t>>* input_strides = nullptr,
                                                       const std::vector<std::int64_t>* final_strides = nullptr);

}  // namespace tnrt
