#pragma once
// The three input formats, each becoming a tnrt::problem.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/path.hpp"

namespace tnrt {

struct tree_json_options {
  std::int64_t bond_dim = 2;                          // extent of every label ...
  std::map<std::string, std::int64_t> label_sizes;     // ... unless named here (label text -> extent)
  dtype type = dtype::f32;
};

/// TensorNetworkBenchmarks tree JSON: {"inputs": [[label...]...], "output": [...], "tree": {"isleaf",
/// "tensorindex" (1-based), "eins": {"ixs", "iy"}, "args"}}. Integer (or string) labels.
/// Each internal node becomes one step (the node's iy is its output); nodes with more than two
/// args are folded left to right. Throws parse_error (with JSON position), shape_error, path_error.
problem load_tree_json(std::string_view json_text, const tree_json_options& opt, std::string source = {});
problem load_tree_json_file(const std::string& path, const tree_json_options& opt);

struct einsum_json_options {
  /// which path of `paths` to take when the file has several ("opt_size" | "opt_flops");
  /// empty: `path` if present, else opt_size, else opt_flops, else the built-in optimizer.
  std::string path_name;
  std::optional<dtype> type;  // overrides the file's "dtype"
  /// the optimizer for a file without a path; a caller that replaces the tree anyway takes greedy
  /// (milliseconds) instead of the search
  path_optimizer missing_path = path_optimizer::automatic;
};

/// Einsum JSON: {"format_string": "ab,bc->ac", "shapes": [[2,3],[3,4]], "dtype": "float32",
///  "path": [[0,1], ...]} or "paths": {"opt_size": {"path": [...]}, "opt_flops": {"path": [...]}}.
/// The format string follows parse_expression (indices, '...'). Paths are opt_einsum's linear form:
/// each pair names positions in the current operand list; those two are removed and their result
/// appended.
problem load_einsum_json(std::string_view json_text, const einsum_json_options& opt, std::string source = {});
problem load_einsum_json_file(const std::string& path, const einsum_json_options& opt);

/// Parses an einsum expression ("ab,bc->ac", implicit "ab,bc", "->" for a scalar output) in UTF-8
/// with one shape per operand into a network (no tree). An index is an ASCII letter or any
/// non-ASCII code point: every symbol opt_einsum's get_symbol emits ('×', CJK, emoji, ...). ASCII
/// digits and punctuation are refused (NumPy refuses them), ',', "->", "..." and ASCII whitespace
/// are syntax, and surrogates are not UTF-8 (parse_error). Implicit output: the labels that occur
/// exactly once, in code-point order (NumPy's rule).
///
/// "..." (at most once per operand and in the output) broadcasts as NumPy does: it covers the
/// dimensions the operand's shape has beyond its named indices; those are aligned on the right
/// across operands and must agree in extent or be 1. Each position becomes a fresh label, named by
/// the first get_symbol symbols the text does not use; an operand's extent-1 dimension against a
/// longer one gets a label of its own that the contraction sums away, so every operand keeps its
/// given shape. The output's "..." (implicit: first) holds the positions in order; an explicit
/// output without "..." while the ellipsis covers dimensions is a shape_error, as in NumPy.
network parse_expression(std::string_view expression, const std::vector<std::vector<std::int64_t>>& shapes);

/// "2x3,3x4" -> {{2,3},{3,4}}; "" or "-" for a scalar operand ("2x3,,4").
std::vector<std::vector<std::int64_t>> parse_shapes(std::string_view text);

/// Converts an opt_einsum linear path over `net` into steps. Intermediate outputs keep the labels
/// still needed by a remaining operand or the output, in first-appearance order; the final step
/// produces net.output in order (a trailing unary step is added when the path leaves one operand
/// whose labels differ from the output). Throws path_error for an index out of range, a pair naming
/// one position twice, or a path that does not end in one operand.
contraction_tree tree_from_linear_path(const network& net, const std::vector<std::vector<int>>& path);

/// The opt_einsum linear path of a tree (a unary step is a one-position entry), the inverse of
/// tree_from_linear_path up to the order of each step's output labels. path_error for a tree whose
/// step uses an operand that is not live at that point.
std::vector<std::vector<int>> linear_path_of(const network& net, const contraction_tree& tree);

/// A linear path on its own: a JSON list of position tuples ([[0, 1], [0, 1]]: what json.dump
/// writes for opt_einsum's path or a cotengra ContractionTree's get_path()), or an object whose
/// "path" is one (an einsum JSON, or what `tnrt inspect --write-path` writes). parse_error for
/// anything else (with the JSON position), io_error for a file that cannot be read. The path is not
/// checked against a network here: tree_from_linear_path does that.
std::vector<std::vector<int>> load_linear_path_json(std::string_view json_text, std::string source = {});
std::vector<std::vector<int>> load_linear_path_file(const std::string& path);

/// Loads by content: a JSON object with "tree" is a tree JSON, with "format_string" an einsum JSON.
struct load_options {
  tree_json_options tree;
  einsum_json_options einsum;
};
problem load_file(const std::string& path, const load_options& opt);

}  // namespace tnrt
