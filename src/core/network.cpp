#include "tnrt/network.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "tnrt/errors.hpp"

namespace tnrt {

double network::elements_of(const std::vector<label_t>& labels) const {
  double n = 1;
  for (label_t l : labels) n *= static_cast<double>(extents.at(static_cast<std::size_t>(l)));
  return n;
}

std::vector<std::int64_t> network::shape_of(const std::vector<label_t>& labels) const {
  std::vector<std::int64_t> shape;
  shape.reserve(labels.size());
  for (label_t l : labels) shape.push_back(extents.at(static_cast<std::size_t>(l)));
  return shape;
}

std::string network::describe(const std::vector<label_t>& labels) const {
  bool single = std::all_of(labels.begin(), labels.end(), [&](label_t l) {
    const auto& n = label_names.at(static_cast<std::size_t>(l));
    return !n.empty() && (static_cast<unsigned char>(n[0]) >= 0x80 || std::isalpha(static_cast<unsigned char>(n[0])));
  });
  std::string s = single ? "" : "[";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (!single && i) s += ' ';
    s += label_names.at(static_cast<std::size_t>(labels[i]));
  }
  if (!single) s += "]";
  return s;
}

std::string_view name_of(layout_policy l) noexcept {
  switch (l) {
    case layout_policy::row_major:
      return "row";
    case layout_policy::column_major:
      return "column";
    case layout_policy::follow:
      return "follow";
    case layout_policy::planned:
      return "planned";
  }
  return "column";
}

std::optional<layout_policy> layout_named(std::string_view name) noexcept {
  for (layout_policy l : all_layouts)
    if (name == name_of(l)) return l;
  return std::nullopt;
}

std::vector<std::vector<label_t>> operand_labels(const network& net, const contraction_tree& tree) {
  std::vector<std::vector<label_t>> ops = net.inputs;
  ops.reserve(net.inputs.size() + tree.steps.size());
  for (const step& s : tree.steps) ops.push_back(s.out);
  return ops;
}

std::vector<int> step_consumers(const network& net, const contraction_tree& tree) {
  const std::size_t n = net.inputs.size();
  std::vector<int> consumer(tree.steps.size(), -1);
  for (std::size_t k = 0; k < tree.steps.size(); ++k)
    for (int id : {tree.steps[k].lhs, tree.steps[k].rhs})
      if (id >= 0 && static_cast<std::size_t>(id) >= n) consumer[static_cast<std::size_t>(id) - n] = static_cast<int>(k);
  return consumer;
}

void validate(const network& net, const contraction_tree& tree) {
  const std::size_t n = net.inputs.size();
  const std::size_t labels = net.label_count();
  if (net.label_names.size() != labels) throw internal_error("network has " + std::to_string(labels) + " extents but " + std::to_string(net.label_names.size()) + " label names");
  for (std::size_t l = 0; l < labels; ++l)
    if (net.extents[l] <= 0) throw shape_error("label '" + net.label_names[l] + "' has extent " + std::to_string(net.extents[l]) + " (must be positive)");
  auto check_labels = [&](const std::vector<label_t>& ls, const std::string& where) {
    for (label_t l : ls)
      if (l < 0 || static_cast<std::size_t>(l) >= labels) throw internal_error(where + ": label id " + std::to_string(l) + " out of range");
  };
  for (std::size_t i = 0; i < n; ++i) check_labels(net.inputs[i], "input " + std::to_string(i));
  check_labels(net.output, "output");
  if (n == 0) throw path_error("the network has no operands");

  std::vector<int> uses(n + tree.steps.size(), 0);
  std::vector<std::vector<label_t>> ops = net.inputs;
  for (std::size_t k = 0; k < tree.steps.size(); ++k) {
    const step& s = tree.steps[k];
    const std::string where = "step " + std::to_string(k);
    const int defined = static_cast<int>(n + k);
    for (int id : {s.lhs, s.rhs}) {
      if (id == s.rhs && id < 0) continue;
      if (id < 0 || id >= defined) throw path_error(where + ": operand " + std::to_string(id) + " is not defined before this step");
      if (++uses[static_cast<std::size_t>(id)] > 1) throw path_error(where + ": operand " + std::to_string(id) + " is used more than once");
    }
    if (s.lhs == s.rhs) throw path_error(where + ": operand " + std::to_string(s.lhs) + " is used twice");
    check_labels(s.out, where);
    const auto& a = ops[static_cast<std::size_t>(s.lhs)];
    for (std::size_t i = 0; i < s.out.size(); ++i) {
      label_t l = s.out[i];
      if (std::find(s.out.begin(), s.out.begin() + static_cast<std::ptrdiff_t>(i), l) != s.out.begin() + static_cast<std::ptrdiff_t>(i))
        throw shape_error(where + ": output label '" + net.label_names[static_cast<std::size_t>(l)] + "' repeats");
      bool found = std::find(a.begin(), a.end(), l) != a.end();
      if (!found && s.rhs >= 0) {
        const auto& b = ops[static_cast<std::size_t>(s.rhs)];
        found = std::find(b.begin(), b.end(), l) != b.end();
      }
      if (!found) throw shape_error(where + ": output label '" + net.label_names[static_cast<std::size_t>(l)] + "' is in neither operand");
    }
    ops.push_back(s.out);
  }
  const std::size_t total = n + tree.steps.size();
  const auto result = static_cast<std::size_t>(tree.result_id(n));
  for (std::size_t id = 0; id < total; ++id) {
    if (id == result) {
      if (uses[id] != 0) throw path_error("the result operand " + std::to_string(id) + " is consumed by a step");
    } else if (uses[id] == 0) {
      throw path_error(id < n ? "input " + std::to_string(id) + " is never used by the tree"
                              : "the result of step " + std::to_string(id - n) + " is never used");
    }
  }
  if (ops[result] != net.output)
    throw shape_error("the tree's result has labels " + net.describe(ops[result]) + " but the output is " + net.describe(net.output));
}

}  // namespace tnrt
