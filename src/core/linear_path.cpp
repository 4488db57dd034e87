// opt_einsum linear paths ("contract positions i and j of the current list, append the result")
// into contraction-tree steps.
#include <algorithm>
#include <string>

#include "core/formats_json.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace {

struct live_operand {
  int id;
  std::vector<label_t> labels;
};

bool first_occurrence(const std::vector<label_t>& labels, std::size_t i) {
  return std::find(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(i), labels[i]) ==
         labels.begin() + static_cast<std::ptrdiff_t>(i);
}

std::string entry_text(const std::vector<int>& entry) {
  std::string s = "(";
  for (std::size_t i = 0; i < entry.size(); ++i) s += (i ? ", " : "") + std::to_string(entry[i]);
  return s + (entry.size() == 1 ? ",)" : ")");
}

}  // namespace

namespace detail {

contraction_tree tree_from_linear_path_in(const network& net, const std::vector<std::vector<int>>& path,
                                          const std::string& context) {
  const std::string at = context.empty() ? "" : context + ": ";
  const std::size_t n = net.inputs.size();
  if (n == 0) throw path_error(at + "the network has no operands");

  // need[l]: how many live operands hold label l (each once), plus one when the output does. A step
  // keeps a label exactly when something outside it still needs it.
  std::vector<int> need(net.label_count(), 0);
  const auto count = [&](const std::vector<label_t>& labels, int delta) {
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (first_occurrence(labels, i)) need.at(static_cast<std::size_t>(labels[i])) += delta;
  };
  std::vector<live_operand> ops;
  ops.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    ops.push_back({static_cast<int>(i), net.inputs[i]});
    count(net.inputs[i], +1);
  }
  count(net.output, +1);

  contraction_tree tree;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const std::vector<int>& entry = path[k];
    const std::string where = at + "path[" + std::to_string(k) + "] = " + entry_text(entry);
    if (entry.empty()) throw path_error(where + " names no operand");
    for (std::size_t i = 0; i < entry.size(); ++i) {
      const int p = entry[i];
      if (p < 0 || static_cast<std::size_t>(p) >= ops.size())
        throw path_error(where + ": position " + std::to_string(p) + " is out of range (" + std::to_string(ops.size()) +
                         (ops.size() == 1 ? " operand remains, position 0)" : " operands remain, positions 0.." + std::to_string(ops.size() - 1) + ")"));
      if (std::find(entry.begin(), entry.begin() + static_cast<std::ptrdiff_t>(i), p) != entry.begin() + static_cast<std::ptrdiff_t>(i))
        throw path_error(where + ": names position " + std::to_string(p) + " twice");
    }
    std::vector<live_operand> taken;
    taken.reserve(entry.size());
    for (int p : entry) taken.push_back(ops[static_cast<std::size_t>(p)]);
    std::vector<int> positions = entry;
    std::sort(positions.rbegin(), positions.rend());  // erase from the back so earlier positions stay put
    for (int p : positions) ops.erase(ops.begin() + p);
    for (const auto& t : taken) count(t.labels, -1);

    // Fold the named operands left to right (a single one is a unary step). The step that leaves one
    // operand at the end of the path produces net.output directly, in its order.
    live_operand acc = taken[0];
    for (std::size_t j = taken.size() == 1 ? 0 : 1; j < taken.size(); ++j) {
      const bool unary = taken.size() == 1;
      const bool final_step = k + 1 == path.size() && ops.empty() && j + 1 == taken.size();
      step s;
      s.lhs = acc.id;
      s.rhs = unary ? -1 : taken[j].id;
      if (final_step) {
        s.out = net.output;
      } else {
        std::vector<label_t> candidates = acc.labels;
        if (!unary) candidates.insert(candidates.end(), taken[j].labels.begin(), taken[j].labels.end());
        for (std::size_t i = 0; i < candidates.size(); ++i) {
          const label_t l = candidates[i];
          if (!first_occurrence(candidates, i)) continue;
          bool needed = need.at(static_cast<std::size_t>(l)) > 0;
          for (std::size_t r = j + 1; r < taken.size() && !needed; ++r)
            needed = std::find(taken[r].labels.begin(), taken[r].labels.end(), l) != taken[r].labels.end();
          if (needed) s.out.push_back(l);
        }
      }
      acc = {static_cast<int>(n + tree.steps.size()), s.out};
      tree.steps.push_back(std::move(s));
    }
    count(acc.labels, +1);
    ops.push_back(std::move(acc));
  }

  if (ops.size() != 1)
    throw path_error(at + "the path ends with " + std::to_string(ops.size()) + " operands; it must contract the " +
                     std::to_string(n) + " inputs down to one");
  if (tree.steps.empty() && ops[0].labels != net.output) tree.steps.push_back({0, -1, net.output});
  return tree;
}

}  // namespace detail

contraction_tree tree_from_linear_path(const network& net, const std::vector<std::vector<int>>& path) {
  return detail::tree_from_linear_path_in(net, path, "");
}

}  // namespace tnrt

namespace tnrt {

namespace detail {

std::vector<std::vector<int>> linear_from_ssa(std::size_t n_inputs, const std::vector<std::pair<int, int>>& ssa) {
  std::vector<int> live(n_inputs);
  for (std::size_t i = 0; i < n_inputs; ++i) live[i] = static_cast<int>(i);
  const auto position = [&](int id, std::size_t k) {
    const auto it = std::find(live.begin(), live.end(), id);
    if (it == live.end())
      throw path_error("step " + std::to_string(k) + ": operand " + std::to_string(id) + " is not live (not defined yet, or used twice)");
    return static_cast<int>(it - live.begin());
  };
  std::vector<std::vector<int>> path;
  path.reserve(ssa.size());
  for (std::size_t k = 0; k < ssa.size(); ++k) {
    const auto [lhs, rhs] = ssa[k];
    const int a = position(lhs, k);
    if (rhs < 0) {
      path.push_back({a});
      live.erase(live.begin() + a);
    } else {
      const int b = position(rhs, k);
      if (a == b) throw path_error("step " + std::to_string(k) + ": both operands are " + std::to_string(lhs));
      path.push_back({std::min(a, b), std::max(a, b)});
      live.erase(live.begin() + std::max(a, b));
      live.erase(live.begin() + std::min(a, b));
    }
    live.push_back(static_cast<int>(n_inputs + k));
  }
  return path;
}

}  // namespace detail

std::vector<std::vector<int>> linear_path_of(const network& net, const contraction_tree& tree) {
  std::vector<std::pair<int, int>> ssa;
  ssa.reserve(tree.steps.size());
  for (const step& s : tree.steps) ssa.emplace_back(s.lhs, s.rhs);
  return detail::linear_from_ssa(net.inputs.size(), ssa);
}

}  // namespace tnrt
