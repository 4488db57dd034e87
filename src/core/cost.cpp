// The cost model behind `tnrt inspect`: time (multiply-adds), space (largest tensor) and
// read-write (elements moved) complexity of a contraction tree.
#include <algorithm>
#include <cmath>
#include <string>

#include "tnrt/errors.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"

namespace tnrt {
namespace {

// log2 of a count; a tree with no steps does no work, and 0 reads better than -inf.
double log2_or_zero(double x) { return x > 0 ? std::log2(x) : 0.0; }

// Walks the tree's steps: f(multiply-adds, elements of the lhs, of the rhs (0: none), of the result) per
// step, with every operand checked to be defined before its step.
template <class F>
void for_each_step(const network& net, const contraction_tree& tree, const std::vector<std::vector<label_t>>& ops, F&& f) {
  const std::size_t n = net.inputs.size();
  std::vector<label_t> all;
  for (std::size_t k = 0; k < tree.steps.size(); ++k) {
    const step& s = tree.steps[k];
    const int defined = static_cast<int>(n + k);
    if (s.lhs < 0 || s.lhs >= defined || s.rhs >= defined)
      throw path_error("step " + std::to_string(k) + ": an operand is not defined before this step");
    const auto& lhs = ops[static_cast<std::size_t>(s.lhs)];
    all = lhs;
    double rhs_elements = 0;
    if (s.rhs >= 0) {
      const auto& rhs = ops[static_cast<std::size_t>(s.rhs)];
      all.insert(all.end(), rhs.begin(), rhs.end());
      rhs_elements = net.elements_of(rhs);
    }
    all.insert(all.end(), s.out.begin(), s.out.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    f(net.elements_of(all), net.elements_of(lhs), rhs_elements, net.elements_of(s.out));
  }
}

}  // namespace

tree_cost cost_of(const network& net, const contraction_tree& tree) {
  const std::vector<std::vector<label_t>> ops = operand_labels(net, tree);
  tree_cost c;
  c.steps = tree.steps.size();
  for (std::size_t i = 0; i < net.inputs.size(); ++i) c.max_elements = std::max(c.max_elements, net.elements_of(ops[i]));
  for_each_step(net, tree, ops, [&](double flops, double lhs, double rhs, double out) {
    c.flops += flops;
    c.rw_elements += lhs + rhs + out;
    c.max_elements = std::max(c.max_elements, out);
  });
  c.log2_tc = log2_or_zero(c.flops);
  c.log2_sc = log2_or_zero(c.max_elements);
  c.log2_rwc = log2_or_zero(c.rw_elements);
  return c;
}

std::vector<double> step_multiply_adds(const network& net, const contraction_tree& tree) {
  std::vector<double> out;
  out.reserve(tree.steps.size());
  for_each_step(net, tree, operand_labels(net, tree), [&](double flops, double, double, double) { out.push_back(flops); });
  return out;
}

double predicted_seconds(const network& net, const contraction_tree& tree, const cost_model& model) {
  double t = 0;
  for_each_step(net, tree, operand_labels(net, tree),
                [&](double flops, double lhs, double rhs, double out) { t += model.step_seconds(flops, lhs, rhs, out); });
  return t;
}

}  // namespace tnrt
