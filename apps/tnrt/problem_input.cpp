// INPUT -> tnrt::problem, for `contract` and `inspect`.
#include <chrono>
#include <filesystem>
#include <limits>

#include "cli.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace tnrt::cli {

namespace {

std::map<std::string, std::int64_t> parse_label_sizes(const std::optional<std::string>& text) {
  std::map<std::string, std::int64_t> sizes;
  if (!text || text->empty()) return sizes;
  for (const auto& item : split(*text, ',')) {
    // rfind: a label may itself be any Unicode letter, but never '='.
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      throw usage_error("--label-size expects LABEL=N[,LABEL=N...], got '" + item + "'");
    }
    const std::int64_t n = parse_int(std::string_view(item).substr(eq + 1), "--label-size " + item.substr(0, eq));
    if (n < 1) throw usage_error("--label-size " + item + ": extent must be at least 1");
    sizes[item.substr(0, eq)] = n;
  }
  return sizes;
}

/// Length in bytes of the UTF-8 sequence starting with `lead` (1 for stray continuation bytes, so
/// that malformed text still advances and the expression parser reports it).
std::size_t utf8_length(unsigned char lead) noexcept {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

/// Shapes for an expression given without --shapes: one extent per index letter, from
/// --label-size or --bond-dim (a '...' then covers nothing). Only counts indices; the expression
/// parser judges the syntax.
std::vector<std::vector<std::int64_t>> shapes_from_labels(std::string_view expression, std::int64_t bond_dim,
                                                          const std::map<std::string, std::int64_t>& sizes) {
  const auto arrow = expression.find("->");
  const std::string_view lhs = expression.substr(0, arrow);
  std::vector<std::vector<std::int64_t>> shapes(1);
  for (std::size_t i = 0; i < lhs.size();) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ',') {
      shapes.emplace_back();
      ++i;
      continue;
    }
    const std::size_t len = std::min(utf8_length(c), lhs.size() - i);
    if (c != ' ' && c != '\t' && c != '.') {  // an ellipsis covers no dimension here
      const auto it = sizes.find(std::string(lhs.substr(i, len)));
      shapes.back().push_back(it != sizes.end() ? it->second : bond_dim);
    }
    i += len;
  }
  return shapes;
}

std::optional<path_optimizer> parse_optimizer(const parsed_args& args) {
  if (!args.has("optimizer")) return std::nullopt;
  const std::string how = args.choice_or("optimizer", "auto", {"greedy", "exhaustive", "auto", "hyper"});
  if (how == "greedy") return path_optimizer::greedy;
  if (how == "exhaustive") return path_optimizer::exhaustive;
  if (how == "hyper") return path_optimizer::hyper;
  return path_optimizer::automatic;
}

/// An INPUT that names no existing file is an expression unless it looks like a file name.
bool looks_like_expression(const std::string& input) {
  if (input.find("->") != std::string::npos || input.find(',') != std::string::npos) return true;
  return input.find('/') == std::string::npos && input.find('.') == std::string::npos;
}

}  // namespace

problem load_problem(const std::string& input, const parsed_args& args, std::span<const host_tensor> given,
                     double* search_seconds) {
  const auto timed_search = [search_seconds](const network& net, path_optimizer how, dtype type) {
    const auto t0 = std::chrono::steady_clock::now();
    auto path = optimize_path(net, how, type);
    if (search_seconds) *search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return path;
  };
  if (search_seconds) *search_seconds = 0;
  std::optional<dtype> type;
  if (const auto t = args.value("dtype")) type = parse_dtype(*t);
  const std::int64_t bond_dim = args.int_or("bond-dim", 2, 1, std::numeric_limits<std::int32_t>::max());
  const auto label_sizes = parse_label_sizes(args.value("label-size"));
  const auto optimizer = parse_optimizer(args);
  if (optimizer && args.has("path")) {
    throw usage_error("--path (a path from the file) and --optimizer (the built-in optimizer) exclude each other");
  }
  if (args.has("path")) (void)args.choice_or("path", "opt_size", {"opt_size", "opt_flops"});
  // --path-file: a linear path from a file of its own (cotengra's or opt_einsum's, json-dumped, or
  // what --write-path wrote); read before the input so that a bad file fails before any search
  std::optional<std::vector<std::vector<int>>> path_file;
  if (const auto f = args.value("path-file")) {
    if (optimizer || args.has("path"))
      throw usage_error(std::string("--path-file and ") + (optimizer ? "--optimizer" : "--path") + " exclude each other");
    path_file = load_linear_path_file(*f);
  }

  std::error_code ec;
  const bool is_file = std::filesystem::exists(input, ec);
  problem p;
  if (is_file) {
    if (std::filesystem::is_directory(input, ec)) throw io_error("'" + input + "' is a directory, not an input file");
    if (args.has("shapes")) throw usage_error("--shapes applies to an einsum expression, not to a file input");
    load_options lo;
    lo.tree.bond_dim = bond_dim;
    lo.tree.label_sizes = label_sizes;
    lo.tree.type = type.value_or(dtype::f32);
    lo.einsum.path_name = args.value_or("path", "");
    lo.einsum.type = type;
    if (optimizer || path_file) lo.einsum.missing_path = path_optimizer::greedy;  // replaced below: no search
    p = load_file(input, lo);
    if (optimizer) p.tree = tree_from_linear_path(p.net, timed_search(p.net, *optimizer, p.type));
    if (path_file) p.tree = tree_from_linear_path(p.net, *path_file);
  } else if (looks_like_expression(input)) {
    if (args.has("path"))
      throw usage_error("--path selects a path stored in an einsum JSON file; use --optimizer for an expression");
    std::vector<std::vector<std::int64_t>> shapes;
    if (args.has("shapes")) {
      shapes = parse_shapes(*args.value("shapes"));
    } else if (!given.empty()) {
      const std::size_t operands = shapes_from_labels(input, bond_dim, label_sizes).size();
      if (operands != given.size()) {
        throw usage_error("--inputs names " + std::to_string(given.size()) + " files but the expression has " +
                          std::to_string(operands) + " operands");
      }
      for (const auto& t : given) shapes.push_back(t.shape());
    } else {
      shapes = shapes_from_labels(input, bond_dim, label_sizes);
    }
    p.net = parse_expression(input, shapes);
    p.type = type.value_or(given.empty() ? dtype::f32 : given.front().type());
    p.tree = tree_from_linear_path(p.net, path_file ? *path_file
                                                    : timed_search(p.net, optimizer.value_or(path_optimizer::automatic), p.type));
    p.source = "expression '" + input + "'";
  } else {
    throw io_error("cannot open '" + input + "': no such file (and it is not an einsum expression)");
  }
  validate(p.net, p.tree);
  return p;
}

}  // namespace tnrt::cli
