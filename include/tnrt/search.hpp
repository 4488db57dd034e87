#pragma once
// A seeded, bounded hyper-optimizing path search in the spirit of cotengra's HyperOptimizer:
// random-greedy trials (Boltzmann-sampled pair choices, hyperparameters drawn per trial) and
// partitioning trials (recursive bisection of the network's hypergraph), followed by subtree
// reconfiguration of the best trees of each kind (each subtree of up to `reconf_leaves` sub-operands is
// re-ordered optimally by dynamic programming over subsets when that lowers the cost).
//
// Trees are scored by tnrt's cost model (the default) or by multiply-adds alone. The model is a
// roofline per step: a step costs the larger of its flops over the peak and its bytes over the
// bandwidth, plus a fixed launch overhead, so that a memory-bound step (an outer product, a large
// permutation, a big intermediate read once) is not free the way it is in a flop count; calibrated
// against measured steps, so that a skinny GEMM or a long sum into a small result is not priced at
// peak either (cost_model below).
#include <cstdint>
#include <optional>
#include <vector>

#include "tnrt/dtype.hpp"
#include "tnrt/network.hpp"

namespace tnrt {

/// tnrt's cost model of a contraction on the GPU: a roofline per step, calibrated against measured
/// step times. A binary step of U multiply-adds that reads A and B elements and writes D takes
///   (max(c, m) + overlap * min(c, m)) / p + step_overhead
///   c   = U * flops_per_multiply_add / peak / e_c, m = (A + B + D) * bytes / bandwidth / memory_efficiency
///         (overlap 0: a roofline; 1: compute and memory do not overlap at all)
///   e_c = 1 / (1 + gemm_tile / min(m, n)), m = U / B and n = U / A (the free sizes of each side: a
///         skinny GEMM wastes its tiles; a unary step has no such term)
///   p   = min(1, D / parallel_elements) ^ parallel_exponent for D > 1 (a small result over a long
///         sum leaves most of the GPU idle; a full reduction to a scalar is exempt)
/// and a tree takes the sum over its steps. The defaults are the H200's measured figures for f32:
/// 4250 GB/s copy bandwidth and a 50.7 TFLOP/s GEMM peak (docs/results.md), about 2 us a step (a
/// compiled step's launch and gaps), and the calibration terms fitted by least squares on the log
/// time of 982 profiled steps of tnrt compiled (bench/paths/calibrate.py --overlap; the figures and
/// the command in bench/results/2026-12-03-cpu-model-overlap): overlap 2.03 with gemm_tile 0 (median
/// |log error| 0.20 against 0.29 for the fit without the overlap term, tile_fit()). roofline()
/// turns the calibration terms off (gemm_tile 0, parallel_elements 0, memory_efficiency 1, overlap
/// 0). for_dtype scales the bytes and the flops of a multiply-add (8 real flops for a complex one);
/// the peak stays the f32 figure (no other was measured).
struct cost_model {
  double bytes_per_element = 4;
  double flops_per_multiply_add = 2;
  double peak_tflops = 50.7;
  double bandwidth_gbps = 4250;
  double step_overhead_us = 2.0;
  double gemm_tile = 0;
  double parallel_elements = 3.05e6;
  double parallel_exponent = 0.325;
  double memory_efficiency = 0.864;
  /// Fitted with the other terms (bench/paths/calibrate.py --overlap): 77 of 88 path pairs ordered
  /// as measured, against 75 for tile_fit(). Measured end to end on the H200 (2026-12-03,
  /// bench/results/2026-12-03-h200-pathab): the paths its search finds are 1.06x faster in geometric
  /// mean over 29 networks (qaoa-p4 9.07 -> 6.60 ms, lm-sliding-d2 2.07 -> 1.44 ms).
  double overlap = 2.03;

  [[nodiscard]] static cost_model for_dtype(dtype type);
  /// This model with the calibration terms off: the plain roofline of its peak, bandwidth and overhead.
  [[nodiscard]] cost_model roofline() const noexcept;
  /// This model with the calibration fitted without the overlap term (bench/paths/calibrate.py on
  /// the same 982 steps; auto's model until 2026-12-03): gemm_tile 33.3 (a skinny GEMM's wasted
  /// tiles), parallel_elements 5.16e6, parallel_exponent 0.32, memory_efficiency 0.64, overlap 0.
  [[nodiscard]] cost_model tile_fit() const noexcept;
  /// Seconds of one step of `multiply_adds` that reads `lhs` and `rhs` elements (rhs 0: a unary
  /// step) and writes `out`: the calibrated model above.
  [[nodiscard]] double step_seconds(double multiply_adds, double lhs, double rhs, double out) const noexcept;
};

/// The model's time of a whole tree (sum over its steps; a tree of no steps takes 0 s). Throws what
/// operand_labels throws for an invalid tree.
double predicted_seconds(const network& net, const contraction_tree& tree, const cost_model& model);

/// What the search minimises: the cost model's time (the default), or total multiply-adds (what
/// opt_einsum's and cotengra's "flops" objective counts). Either way `size_weight` adds the size term.
enum class search_objective { model, flops };

struct search_options {
  /// seeds every random draw (a splitmix64 stream: the same on every platform).
  std::uint64_t seed = 0;
  /// greedy trials; trial 0 is the plain deterministic greedy of optimize_path(net, greedy), so the
  /// result is never worse than it (under the score below).
  int max_trials = 64;
  /// wall-clock bound on the whole search; 0 (or less) means unbounded. The greedy trials stop at
  /// half of it (at 0.3 of it when partitioning trials follow, which stop at half) and
  /// reconfiguration at all of it, so a time bound may cut work short: the result is only
  /// deterministic under `seed` with max_seconds = 0 (then bounded by max_trials and by
  /// reconfiguration running to a fixed point, at most `reconf_passes` passes).
  double max_seconds = 1.0;
  /// what a tree is scored by (see search_objective) and the model's figures.
  search_objective objective = search_objective::model;
  cost_model model;
  /// under the model: reconfigure by multiply-adds first, then by the model (false: the model's
  /// pass alone; kept for the comparison in bench/results/2026-12-02-search-model).
  bool flops_first = true;
  /// after the greedy trials, (max_trials + 1) / 2 partitioning trials (recursive bisection of the
  /// network's hypergraph by a partitioner of tnrt's own, cutoff and imbalance drawn per trial) on
  /// networks of more than 8 inputs, under the same time bound.
  bool partition_trials = true;
  /// score = the objective (seconds under the model, or multiply-adds) + size_weight * total elements
  /// written by the steps, in the objective's unit per element (flops: like cotengra's "combo"; model:
  /// seconds per element, so 1e-12 is about an extra write at 4 TB/s); 0 leaves the objective alone.
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
  /// also search under the plain roofline (cost_model's calibration terms off, subtrees of at most 8
  /// leaves) and keep that path when `model` scores it lower: two landscapes, two chances (on
  /// hyper-n100 the calibrated search alone found a path 2x slower than the roofline's, which the
  /// calibrated model itself scores better; bench/results/2026-12-03-h200-calibration). The searches
  /// beside run at once with the main one, on threads of their own, each under the time bound.
  bool roofline_search = false;
  /// also search under model.tile_fit() (the calibration without the overlap term, reconf_leaves as
  /// set) and keep that path when `model` scores it lower, as roofline_search does. On in auto: of
  /// 29 suite networks measured both ways on the H200, the tile fit's path was the faster on
  /// rqc-5x5-c16 (2.33 against 2.52 ms) and mpo-heis-L32, and the default model scores it lower
  /// there too (bench/results/2026-12-03-h200-pathab).
  bool tile_search = false;
};

struct search_result {
  std::vector<std::vector<int>> path;  // opt_einsum-style linear path
  double log2_flops = 0;               // cost_of(...).log2_tc of the path's tree
  double log2_largest = 0;             // cost_of(...).log2_sc
  double predicted_seconds = 0;        // the cost model's time of the path's tree (options' model)
  int trials = 0;                      // greedy trials run
  int partition_trials = 0;            // partitioning trials run
  double seconds = 0;                  // wall-clock time of the search (the searches beside run at once)
};

/// The options of path_optimizer::automatic (the CLI's and Python's "auto"): the cost model of
/// `type`, seed 0, 16 greedy and 8 partitioning trials, reconfiguration of subtrees of up to 10 leaves
/// to a fixed point, the roofline's and the tile fit's searches beside (roofline_search,
/// tile_search), and a 10 s cap per search that only a network of many thousands of tensors reaches
/// (the result is deterministic below it). The reference network (550 tensors) takes about 10 s on the
/// dev machine, its three searches together (bench/results/2026-12-03-cpu-search-time); 10 leaves
/// instead of 8 found paths of 0.67x and 0.55x the model time there and on the QAOA p=4 network
/// (bench/paths/reconf_ablation.cpp, bench/results/2026-12-03-h200-calibration/search.md).
search_options automatic_search_options(dtype type);

/// Searches a contraction path for `net` (hyperedges, output labels, scalars, disconnected parts
/// all allowed). Throws usage_error for bad options, out_of_memory when the memory limit cannot be met.
search_result search_path(const network& net, const search_options& opt = {});

}  // namespace tnrt
