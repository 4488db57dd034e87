#pragma once
// Shared pieces of the JSON loaders: reading the file, parsing with a positioned error, typed access
// that names the JSON location of a bad value, and the loaders' entry points on parsed JSON.
#include <cstdint>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tnrt/formats.hpp"

namespace tnrt::detail {

using json = nlohmann::json;

/// Whole file as bytes; io_error naming the file and the system's reason.
std::string read_text_file(const std::string& path);

/// Parses JSON; parse_error "<source>: malformed JSON at line L, column C: ..." on bad syntax or
/// ill-formed UTF-8.
json parse_json(std::string_view text, const std::string& source);

/// "where" strings are JSON locations in the file's own terms: "shapes[1][0]", "tree.args[2]".
[[noreturn]] void throw_parse(const std::string& source, const std::string& where, const std::string& what);
const json& member(const json& object, const char* key, const std::string& source, const std::string& where);
const json* find_member(const json& object, const char* key);
const json& expect_array(const json& v, const std::string& source, const std::string& where);
std::int64_t expect_integer(const json& v, const std::string& source, const std::string& where);
std::string type_name(const json& v);

/// The file's "slices" (absent or null: none): an array of label names of `net` (strings; integers
/// are read as their decimal text), each once. parse_error for a bad value, shape_error for a name
/// the network does not have.
std::vector<label_t> read_slices(const json& doc, const network& net, const std::string& source);

problem load_tree_json_value(const json& doc, const tree_json_options& opt, const std::string& source);
problem load_einsum_json_value(const json& doc, const einsum_json_options& opt, const std::string& source);

/// parse_expression / tree_from_linear_path with every message prefixed by `context` ("x.json:
/// format_string"), so errors say where the text came from.
network parse_expression_in(std::string_view expression, const std::vector<std::vector<std::int64_t>>& shapes,
                            const std::string& context);
contraction_tree tree_from_linear_path_in(const network& net, const std::vector<std::vector<int>>& path,
                                          const std::string& context);

/// SSA operand ids (inputs 0..n-1, then one per step; rhs < 0: a unary step) -> opt_einsum's
/// positions in the shrinking operand list, each pair in ascending order. path_error for an id
/// that is not live at its step. linear_path_of and the path search use it.
std::vector<std::vector<int>> linear_from_ssa(std::size_t n_inputs, const std::vector<std::pair<int, int>>& ssa);

}  // namespace tnrt::detail
