#include "core/mode_orders.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/step_lowering.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace {

using order_t = std::vector<label_t>;  // an operand's distinct labels, fastest first

enum group : int { g_batch = 0, g_m = 1, g_n = 2, g_k = 3, g_rest = 4 };

bool has(const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

order_t column_major(const std::vector<label_t>& l) {
  order_t o;
  for (label_t x : l)
    if (!has(o, x)) o.push_back(x);
  return o;
}

// The order of one free operand of step k (which: 0 A, 1 B, 2 D), given the groups' inner orders
// fixed so far; records the inner orders it fixes.
order_t choose_order(const tree_roles& t, std::size_t k, int which, std::size_t id, std::map<int, order_t>& inner) {
  static constexpr int arrangement[3][3] = {{g_m, g_k, g_batch}, {g_k, g_n, g_batch}, {g_m, g_n, g_batch}};
  const std::vector<label_t>& l = t.labels[id];
  const order_t cols = column_major(l);
  const int other = which < 2 ? t.producer(id) : t.consumer[id - t.inputs];  // the operand's other step
  auto other_group = [&](label_t x) { return other >= 0 ? t.group_at(static_cast<std::size_t>(other), x) : 0; };
  int rank[5] = {0, 1, 2, 3, 4};
  order_t best;
  int best_score = -1;
  auto consider = [&](const int* arr) {
    order_t o;
    for (int i = 0; i < 3; ++i) {
      const int g = arr[i];
      order_t part;
      if (const auto it = inner.find(g); it != inner.end()) {
        for (label_t x : it->second)
          if (has(l, x)) part.push_back(x);
      } else {
        for (label_t x : cols)
          if (t.group_at(k, x) == g) part.push_back(x);
        std::stable_sort(part.begin(), part.end(), [&](label_t x, label_t y) { return rank[other_group(x)] < rank[other_group(y)]; });
      }
      o.insert(o.end(), part.begin(), part.end());
    }
    for (label_t x : cols)
      if (!has(o, x)) o.push_back(x);
    const bool all_batch = std::all_of(o.begin(), o.end(), [&](label_t x) { return t.group_at(k, x) == g_batch; });
    if (!o.empty() && !all_batch && t.group_at(k, o.front()) == g_batch) return;  // a batch mode fastest: no GEMM
    int score = 0;
    if (other >= 0) {
      for (int h = 0; h < 5; ++h) {
        std::vector<std::size_t> at;
        for (std::size_t i = 0; i < o.size(); ++i)
          if (other_group(o[i]) == h) at.push_back(i);
        if (!at.empty() && at.back() - at.front() + 1 == at.size()) ++score;
      }
    }
    if (score > best_score) {
      best_score = score;
      best = o;
    }
  };
  consider(arrangement[which]);  // the default arrangement and ranks first: kept on ties
  int groups[3] = {arrangement[which][0], arrangement[which][1], arrangement[which][2]};
  std::sort(groups, groups + 3);
  do {
    std::sort(rank, rank + 5);
    do {
      consider(groups);
    } while (std::next_permutation(rank, rank + 5));
  } while (std::next_permutation(groups, groups + 3));
  if (best_score < 0) best = cols;  // only batch and other modes, a batch mode first: no GEMM order exists
  for (int g : {g_batch, g_m, g_n, g_k}) {
    if (inner.count(g) != 0) continue;
    order_t part;
    for (label_t x : best)
      if (t.group_at(k, x) == g) part.push_back(x);
    if (!part.empty()) inner[g] = part;  // the step's next free operand holding the group takes the same order
  }
  return best;
}

}  // namespace

tree_roles::tree_roles(const problem& pr)
    : p(&pr),
      inputs(pr.net.inputs.size()),
      labels(operand_labels(pr.net, pr.tree)),
      consumer(step_consumers(pr.net, pr.tree)),
      multiply_adds(step_multiply_adds(pr.net, pr.tree)) {}

int tree_roles::group_at(std::size_t k, label_t x) const {
  const step& s = p->tree.steps[k];
  if (s.rhs < 0) return g_rest;
  const bool in_a = has(labels[static_cast<std::size_t>(s.lhs)], x);
  const bool in_b = has(labels[static_cast<std::size_t>(s.rhs)], x);
  const bool in_d = has(s.out, x);
  if (in_a && in_b && in_d) return g_batch;
  if (in_a && in_d) return g_m;
  if (in_b && in_d) return g_n;
  if (in_a && in_b) return g_k;
  return g_rest;
}

std::vector<std::vector<std::int64_t>> planned_strides(const problem& p, const std::vector<std::vector<std::int64_t>>* input_strides,
                                                       const std::vector<std::int64_t>* final_strides) {
  const tree_roles t(p);
  const std::size_t steps = p.tree.steps.size();
  std::vector<std::optional<order_t>> fixed(t.inputs + steps);
  // The inputs and the final result lie as the caller has them (row-major unless given); their
  // orders (distinct labels, fastest first) tell the steps that read or write them the inner order
  // of their groups.
  auto end_strides = [&](std::size_t id) {
    if (id < t.inputs && input_strides != nullptr) return (*input_strides)[id];
    if (id >= t.inputs && final_strides != nullptr) return *final_strides;
    return dense_strides(p.net.shape_of(t.labels[id]), false);  // row-major, repeated labels included
  };
  // Labels by increasing stride; among equal strides (extent-1 modes) the later position first, so
  // that row-major strides give the labels from last to first.
  auto order_of = [&](const std::vector<label_t>& l, const std::vector<std::int64_t>& given) {
    const std::vector<std::int64_t> st = given.size() == l.size() ? given : dense_strides(p.net.shape_of(l), false);
    std::vector<std::size_t> at(l.size());
    for (std::size_t i = 0; i < at.size(); ++i) at[i] = i;
    std::stable_sort(at.begin(), at.end(), [&](std::size_t x, std::size_t y) { return st[x] < st[y] || (st[x] == st[y] && x > y); });
    order_t o;
    for (std::size_t i : at)
      if (!has(o, l[i])) o.push_back(l[i]);
    return o;
  };
  for (std::size_t i = 0; i < t.inputs; ++i) fixed[i] = order_of(t.labels[i], end_strides(i));
  if (steps > 0) fixed[t.inputs + steps - 1] = order_of(t.labels[t.inputs + steps - 1], end_strides(t.inputs + steps - 1));
  std::vector<std::size_t> by_cost(steps);
  for (std::size_t k = 0; k < steps; ++k) by_cost[k] = k;
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](std::size_t x, std::size_t y) { return t.multiply_adds[x] > t.multiply_adds[y]; });
  for (std::size_t k : by_cost) {
    const step& s = p.tree.steps[k];
    if (s.rhs < 0) continue;
    const std::size_t ids[3] = {static_cast<std::size_t>(s.lhs), static_cast<std::size_t>(s.rhs), t.inputs + k};
    std::map<int, order_t> inner;  // each group's inner order: from the first fixed operand holding it
    for (int g : {g_batch, g_m, g_n, g_k}) {
      for (std::size_t id : ids) {
        if (!fixed[id]) continue;
        order_t o;
        for (label_t x : *fixed[id])
          if (t.group_at(k, x) == g) o.push_back(x);
        if (!o.empty()) {
          inner[g] = o;
          break;
        }
      }
    }
    for (int which = 0; which < 3; ++which)
      if (!fixed[ids[which]]) fixed[ids[which]] = choose_order(t, k, which, ids[which], inner);
  }
  std::vector<std::vector<std::int64_t>> out(t.inputs + steps);
  for (std::size_t id = 0; id < out.size(); ++id) {
    const std::vector<label_t>& l = t.labels[id];
    if (id < t.inputs || id + 1 == out.size()) {
      out[id] = end_strides(id);
      continue;
    }
    const order_t o = fixed[id] ? *fixed[id] : column_major(l);
    std::vector<std::int64_t> st(l.size(), 0);
    std::int64_t stride = 1;
    for (label_t x : o) {
      for (std::size_t i = 0; i < l.size(); ++i)
        if (l[i] == x) st[i] = stride;
      stride *= p.net.extents[static_cast<std::size_t>(x)];
    }
    out[id] = st;
  }
  return out;
}

}  // namespace tnrt
