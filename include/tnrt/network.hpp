#pragma once
// The one model every input format becomes: a network (labelled operands, output labels, an extent
// per label) and a contraction tree of steps over it.
//
// Layout convention everywhere in tnrt: row-major (NumPy's C order). An operand with labels
// (a, b, c) and extents (2, 3, 4) has strides (12, 4, 1) in elements: the LAST label is contiguous.
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tnrt/dtype.hpp"

namespace tnrt {

/// Dense label id, 0 .. network::label_count()-1.
using label_t = std::int32_t;

struct network {
  /// labels of each input operand, outermost first. A label may repeat within one operand
  /// (a diagonal) and may appear in any number of operands (a hyperedge when in three or more).
  std::vector<std::vector<label_t>> inputs;
  /// labels of the result, outermost first, each at most once; empty for a scalar.
  std::vector<label_t> output;
  /// extent of each label, indexed by label id.
  std::vector<std::int64_t> extents;
  /// printable name of each label (the einsum letter, or the integer of a tree JSON), by id.
  std::vector<std::string> label_names;

  [[nodiscard]] std::size_t label_count() const noexcept { return extents.size(); }
  [[nodiscard]] std::vector<std::int64_t> shape_of(const std::vector<label_t>& labels) const;
  /// The product of the labels' extents, as a double (cost estimates: never overflows, unlike
  /// element_count on a union of labels). A repeated label (a diagonal) counts at each position, as
  /// the tensor stores it.
  [[nodiscard]] double elements_of(const std::vector<label_t>& labels) const;
  /// "ab,bc->ac"-like text with the label names (integers joined by spaces in brackets if needed).
  [[nodiscard]] std::string describe(const std::vector<label_t>& labels) const;
};

/// One step of a contraction tree:
///   out[o...] = sum over every label not in `out` of  lhs[l...] * rhs[r...]
/// (rhs < 0: a unary step, out = sum over labels not in `out` of lhs). Operand ids: 0 .. n_inputs-1
/// are the network's inputs; n_inputs + i is the result of step i. Labels may repeat inside an
/// operand (diagonal); a label of `out` must occur in lhs or rhs; `out` has no repeats.
struct step {
  int lhs = -1;
  int rhs = -1;
  std::vector<label_t> out;
};

struct contraction_tree {
  std::vector<step> steps;
  /// Operand id holding the final result: the last step's result, or input 0 when there are no
  /// steps (a one-operand network whose labels already equal the output).
  [[nodiscard]] int result_id(std::size_t n_inputs) const noexcept {
    return steps.empty() ? 0 : static_cast<int>(n_inputs + steps.size() - 1);
  }
};

/// A network with its tree and element type: what every loader returns and every backend runs.
struct problem {
  network net;
  contraction_tree tree;
  dtype type = dtype::f32;
  /// where it came from, for messages ("data/x.json", "expression").
  std::string source;
  /// Labels its file asks to slice (einsum JSON or tree JSON "slices"; the CLI's --slice): what a
  /// sliced contraction uses when it is given no labels of its own. Unsliced runs ignore it.
  std::vector<label_t> slices;
};

/// How a backend lays out a step's result in memory (inputs and the final result are always
/// row-major; see src/core/step_lowering.hpp).
enum class layout_policy : std::uint8_t {
  row_major,     // the step's out labels, last contiguous
  column_major,  // the step's out labels, first contiguous (the TensorNetworkBenchmarks trees' Julia layout)
  follow,        // follow the larger operand: the smaller operand's free modes fastest, then the larger
                 // operand's kept modes in its own memory order, so a bandwidth-bound step streams
                 // the large operand and the result in the same order
  planned,       // each intermediate in a mode order of its own, chosen over the whole tree, heaviest
                 // step first, so that its heavy steps are GEMMs as their operands lie
                 // (src/core/mode_orders.hpp, planned_strides)
};

/// Every layout, in the order compiled times them and eager learns them (after the options' own).
inline constexpr layout_policy all_layouts[] = {layout_policy::column_major, layout_policy::row_major, layout_policy::follow,
                                                layout_policy::planned};
inline constexpr std::size_t layout_count = std::size(all_layouts);

/// A layout's name: "row", "column", "follow" or "planned" (the CLI's --layout, Python's "layout" option).
std::string_view name_of(layout_policy l) noexcept;
/// The layout of that name; nothing for any other name.
std::optional<layout_policy> layout_named(std::string_view name) noexcept;

/// Labels of every operand id (inputs, then each step's result) in order.
std::vector<std::vector<label_t>> operand_labels(const network& net, const contraction_tree& tree);

/// For each step, the step that consumes its result (-1 for the final result).
std::vector<int> step_consumers(const network& net, const contraction_tree& tree);

/// Checks the invariants above: every operand id consumed exactly once (the result never), ids in
/// range and defined before use, step outputs drawn from their operands without repeats, the result
/// labels equal to net.output in order, extents positive. Throws path_error / shape_error naming the
/// step and the problem.
void validate(const network& net, const contraction_tree& tree);

}  // namespace tnrt
