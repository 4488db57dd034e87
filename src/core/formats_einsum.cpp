// Einsum JSON: {"format_string", "shapes", "dtype", "path" | "paths": {name: {"path": [...]}},
// "slices": [label names]}.
#include <climits>
#include <string>

#include "core/formats_json.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace detail {
namespace {

// One opt_einsum path: entries are tuples of positions, pairs normally, single positions for a
// unary step (a bare integer is taken as a one-element tuple).
std::vector<std::vector<int>> read_linear_path(const json& v, const std::string& source, const std::string& where) {
  expect_array(v, source, where);
  std::vector<std::vector<int>> path;
  path.reserve(v.size());
  const auto position = [&](const json& p, const std::string& at) {
    const std::int64_t i = expect_integer(p, source, at);
    // positions beyond int are out of range however many operands there are; say so as a path error
    if (i < INT_MIN || i > INT_MAX) throw path_error(source + ": " + at + ": position " + std::to_string(i) + " is out of range");
    return static_cast<int>(i);
  };
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::string at = where + "[" + std::to_string(k) + "]";
    auto& entry = path.emplace_back();
    if (v[k].is_array()) {
      for (std::size_t i = 0; i < v[k].size(); ++i) entry.push_back(position(v[k][i], at + "[" + std::to_string(i) + "]"));
    } else {
      entry.push_back(position(v[k], at));
    }
  }
  return path;
}

}  // namespace

problem load_einsum_json_value(const json& doc, const einsum_json_options& opt, const std::string& source) {
  if (!doc.is_object()) throw_parse(source, "", "expected a JSON object, got " + type_name(doc));
  const json& format = member(doc, "format_string", source, "");
  if (!format.is_string()) throw_parse(source, "format_string", "expected a string, got " + type_name(format));
  const json& shapes_json = expect_array(member(doc, "shapes", source, ""), source, "shapes");
  std::vector<std::vector<std::int64_t>> shapes(shapes_json.size());
  for (std::size_t i = 0; i < shapes_json.size(); ++i) {
    const std::string at = "shapes[" + std::to_string(i) + "]";
    for (std::size_t k = 0; k < expect_array(shapes_json[i], source, at).size(); ++k)
      shapes[i].push_back(expect_integer(shapes_json[i][k], source, at + "[" + std::to_string(k) + "]"));
  }

  problem p;
  p.source = source;
  if (opt.type) {
    p.type = *opt.type;
  } else if (const json* t = find_member(doc, "dtype"); t != nullptr && !t->is_null()) {
    if (!t->is_string()) throw_parse(source, "dtype", "expected a string, got " + type_name(*t));
    try {
      p.type = parse_dtype(t->get<std::string>());
    } catch (const dtype_error& e) {
      throw dtype_error(source + ": dtype: " + e.what());
    }
  }
  p.net = parse_expression_in(format.get<std::string>(), shapes, source + ": format_string");

  const json* path = find_member(doc, "path");
  if (path != nullptr && path->is_null()) path = nullptr;
  const json* paths = find_member(doc, "paths");
  if (paths != nullptr && !paths->is_null() && !paths->is_object())
    throw_parse(source, "paths", "expected an object of named paths, got " + type_name(*paths));
  // a named path is {"path": [...]} as opt_einsum's PathInfo dumps write it, or the bare list
  const auto named = [&](const std::string& name, std::string& where) -> const json* {
    const json* e = paths == nullptr ? nullptr : find_member(*paths, name.c_str());
    if (e == nullptr) return nullptr;
    where = "paths." + name;
    if (!e->is_object()) return e;
    where += ".path";
    return &member(*e, "path", source, "paths." + name);
  };

  const json* chosen = nullptr;
  std::string where;
  if (!opt.path_name.empty()) {
    if (opt.path_name == "path") {
      chosen = path;
      where = "path";
    } else {
      chosen = named(opt.path_name, where);
    }
    if (chosen == nullptr) {
      std::string have;
      if (path != nullptr) have = "path";
      if (paths != nullptr && paths->is_object())
        for (const auto& item : paths->items()) have += (have.empty() ? "" : ", ") + item.key();
      throw path_error(source + ": no path named '" + opt.path_name + "' in the file (" +
                       (have.empty() ? std::string("it has none") : "it has: " + have) + ")");
    }
  } else if (path != nullptr) {
    chosen = path;
    where = "path";
  } else if ((chosen = named("opt_size", where)) == nullptr) {
    chosen = named("opt_flops", where);
  }

  if (chosen != nullptr) {
    p.tree = tree_from_linear_path_in(p.net, read_linear_path(*chosen, source, where), source + ": " + where);
  } else {
    p.tree = tree_from_linear_path(p.net, optimize_path(p.net, opt.missing_path, p.type));
  }
  validate(p.net, p.tree);
  p.slices = read_slices(doc, p.net, source);
  return p;
}

}  // namespace detail

problem load_einsum_json(std::string_view json_text, const einsum_json_options& opt, std::string source) {
  if (source.empty()) source = "einsum JSON";
  return detail::load_einsum_json_value(detail::parse_json(json_text, source), opt, source);
}

problem load_einsum_json_file(const std::string& path, const einsum_json_options& opt) {
  return load_einsum_json(detail::read_text_file(path), opt, path);
}

std::vector<std::vector<int>> load_linear_path_json(std::string_view json_text, std::string source) {
  if (source.empty()) source = "path JSON";
  const detail::json doc = detail::parse_json(json_text, source);
  if (doc.is_object()) {
    const detail::json* path = detail::find_member(doc, "path");
    if (path == nullptr) throw parse_error(source + ": the object has no \"path\" (expected [[0, 1], ...] or {\"path\": [[0, 1], ...]})");
    return detail::read_linear_path(*path, source, "path");
  }
  if (!doc.is_array())
    throw parse_error(source + ": expected a linear path [[0, 1], ...] or {\"path\": [[0, 1], ...]}, not " + detail::type_name(doc));
  return detail::read_linear_path(doc, source, "path");
}

std::vector<std::vector<int>> load_linear_path_file(const std::string& path) {
  return load_linear_path_json(detail::read_text_file(path), path);
}

}  // namespace tnrt
