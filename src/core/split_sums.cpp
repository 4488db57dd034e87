#include "core/split_sums.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "tnrt/network.hpp"

namespace tnrt {
namespace {

bool contains(const std::vector<label_t>& v, label_t l) { return std::find(v.begin(), v.end(), l) != v.end(); }

// The labels to keep for step s (empty: leave it as it is).
std::vector<label_t> kept_labels(const network& net, const std::vector<label_t>& a, const std::vector<label_t>& b, const step& s,
                                 const split_sum_rules& r) {
  const double result = net.elements_of(s.out);
  if (result < r.min_result || result > r.max_result) return {};
  std::vector<label_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  if (net.elements_of(all) < r.min_multiply_adds) return {};
  // summed labels of both operands, once each in each (a diagonal stays where it is), in lhs order
  std::vector<label_t> summed;
  for (label_t l : a)
    if (!contains(s.out, l) && contains(b, l) && std::count(a.begin(), a.end(), l) == 1 && std::count(b.begin(), b.end(), l) == 1 &&
        !contains(summed, l))
      summed.push_back(l);
  double sum = net.elements_of(summed);
  if (sum < r.min_sum || summed.size() < 2) return {};
  // middle outward (m, m-1, m+1, m-2, ...), the first and last labels last of all
  const int n = static_cast<int>(summed.size()), mid = n / 2;
  std::vector<int> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  const auto rank = [&](int i) { return std::pair{n > 2 && (i == 0 || i == n - 1), std::abs(i - mid)}; };
  std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) { return rank(x) < rank(y); });
  std::vector<label_t> order;
  for (int i : idx) order.push_back(summed[static_cast<std::size_t>(i)]);
  std::vector<label_t> kept;
  double factor = 1;
  for (label_t l : order) {
    if (result * factor >= r.target_result) break;
    const auto e = static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
    if (sum / (factor * e) < r.min_sum_left) continue;
    kept.push_back(l);
    factor *= e;
  }
  if (factor < r.min_factor) return {};
  return kept;
}

}  // namespace

std::optional<split_sums_result> split_long_sums(const network& net, const contraction_tree& tree, const split_sum_rules& rules) {
  const std::vector<std::vector<label_t>> ops = operand_labels(net, tree);
  const std::size_t n = net.inputs.size();
  split_sums_result r;
  std::vector<int> new_id(n + tree.steps.size());
  for (std::size_t i = 0; i < n; ++i) new_id[i] = static_cast<int>(i);
  auto map = [&](int id) { return id < 0 ? id : new_id[static_cast<std::size_t>(id)]; };
  for (std::size_t k = 0; k < tree.steps.size(); ++k) {
    const step& s = tree.steps[k];
    std::vector<label_t> kept;
    if (s.rhs >= 0) kept = kept_labels(net, ops[static_cast<std::size_t>(s.lhs)], ops[static_cast<std::size_t>(s.rhs)], s, rules);
    if (kept.empty()) {
      r.tree.steps.push_back({map(s.lhs), map(s.rhs), s.out});
    } else {
      step wide{map(s.lhs), map(s.rhs), s.out};
      wide.out.insert(wide.out.end(), kept.begin(), kept.end());  // the result's labels first, the kept ones outermost (column layout)
      r.tree.steps.push_back(std::move(wide));
      r.origin.push_back(static_cast<int>(k));
      r.tree.steps.push_back({static_cast<int>(n + r.tree.steps.size() - 1), -1, s.out});
      ++r.split;
    }
    r.origin.push_back(static_cast<int>(k));
    new_id[n + k] = static_cast<int>(n + r.tree.steps.size() - 1);
  }
  if (r.split == 0) return std::nullopt;
  return r;
}

}  // namespace tnrt
