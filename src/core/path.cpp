// Path optimizers: greedy for any size, exhaustive (dynamic programming over subsets) for few inputs.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <tuple>

#include "tnrt/errors.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"

namespace tnrt {
namespace {

using ssa_path = std::vector<std::pair<int, int>>;  // operand ids: inputs, then one per step

std::vector<label_t> unique_labels(const std::vector<label_t>& labels) {
  std::vector<label_t> u;
  for (label_t l : labels)
    if (std::find(u.begin(), u.end(), l) == u.end()) u.push_back(l);
  return u;
}

// SSA ids -> opt_einsum's positions in the shrinking operand list.
std::vector<std::vector<int>> to_linear(std::size_t n_inputs, const ssa_path& ssa) {
  std::vector<int> live(n_inputs);
  for (std::size_t i = 0; i < n_inputs; ++i) live[i] = static_cast<int>(i);
  std::vector<std::vector<int>> path;
  path.reserve(ssa.size());
  int next = static_cast<int>(n_inputs);
  for (const auto& [a, b] : ssa) {
    const auto pa = static_cast<int>(std::find(live.begin(), live.end(), a) - live.begin());
    const auto pb = static_cast<int>(std::find(live.begin(), live.end(), b) - live.begin());
    path.push_back({pa, pb});
    live.erase(live.begin() + std::max(pa, pb));
    live.erase(live.begin() + std::min(pa, pb));
    live.push_back(next++);
  }
  return path;
}

// The opt_einsum greedy heuristic with a heap of candidate pairs that share a label. Label counts
// change as operands merge, so a popped pair whose cost is stale is re-scored and pushed back
// instead of being taken at its old price.
class greedy_optimizer {
 public:
  explicit greedy_optimizer(const network& net) : net_(net), need_(net.label_count(), 0), users_(net.label_count()) {
    for (label_t l : net.output) ++need_[static_cast<std::size_t>(l)];
    for (const auto& in : net.inputs) add_operand(unique_labels(in));
  }

  ssa_path run() {
    for (std::size_t l = 0; l < users_.size(); ++l)
      for (std::size_t i = 0; i < users_[l].size(); ++i)
        for (std::size_t j = i + 1; j < users_[l].size(); ++j) push(users_[l][i], users_[l][j]);
    std::size_t live = operands_.size();
    while (live > 1 && !heap_.empty()) {
      const candidate c = heap_.top();
      heap_.pop();
      if (!alive_[static_cast<std::size_t>(c.a)] || !alive_[static_cast<std::size_t>(c.b)]) continue;
      const double now = cost(c.a, c.b);
      if (now != c.cost) {
        heap_.push({now, c.a, c.b});
        continue;
      }
      const int merged = contract(c.a, c.b);
      --live;
      std::vector<int> partners;
      for (label_t l : operands_[static_cast<std::size_t>(merged)])
        for (int u : users_[static_cast<std::size_t>(l)])
          if (u != merged && alive_[static_cast<std::size_t>(u)] && std::find(partners.begin(), partners.end(), u) == partners.end())
            partners.push_back(u);
      for (int u : partners) push(u, merged);
    }
    // What is left shares no labels: outer products, smallest first.
    while (live > 1) {
      int a = -1, b = -1;
      for (std::size_t i = 0; i < operands_.size(); ++i) {
        if (!alive_[i]) continue;
        const int id = static_cast<int>(i);
        if (a < 0 || size_[i] < size_[static_cast<std::size_t>(a)]) {
          b = a;
          a = id;
        } else if (b < 0 || size_[i] < size_[static_cast<std::size_t>(b)]) {
          b = id;
        }
      }
      contract(std::min(a, b), std::max(a, b));
      --live;
    }
    return path_;
  }

 private:
  struct candidate {
    double cost;
    int a, b;
    // std::priority_queue is a max-heap: "less" means "worse", i.e. dearer, then later ids
    bool operator<(const candidate& o) const { return std::tie(cost, a, b) > std::tie(o.cost, o.a, o.b); }
  };

  double size_of(const std::vector<label_t>& labels) const {
    double s = 1;
    for (label_t l : labels) s *= static_cast<double>(net_.extents[static_cast<std::size_t>(l)]);
    return s;
  }

  int add_operand(std::vector<label_t> labels) {
    const int id = static_cast<int>(operands_.size());
    for (label_t l : labels) {
      ++need_[static_cast<std::size_t>(l)];
      users_[static_cast<std::size_t>(l)].push_back(id);
    }
    size_.push_back(size_of(labels));
    operands_.push_back(std::move(labels));
    alive_.push_back(true);
    return id;
  }

  std::vector<label_t> out_labels(int a, int b) const {
    const auto& la = operands_[static_cast<std::size_t>(a)];
    const auto& lb = operands_[static_cast<std::size_t>(b)];
    std::vector<label_t> out;
    const auto keep = [&](label_t l) {
      const int held = 1 + static_cast<int>(std::find(la.begin(), la.end(), l) != la.end() &&
                                            std::find(lb.begin(), lb.end(), l) != lb.end());
      if (need_[static_cast<std::size_t>(l)] > held) out.push_back(l);
    };
    for (label_t l : la) keep(l);
    for (label_t l : lb)
      if (std::find(la.begin(), la.end(), l) == la.end()) keep(l);
    return out;
  }

  double cost(int a, int b) const {
    const double out = size_of(out_labels(a, b));
    if (std::isinf(out)) return std::numeric_limits<double>::infinity();
    return out - size_[static_cast<std::size_t>(a)] - size_[static_cast<std::size_t>(b)];
  }

  void push(int a, int b) { heap_.push({cost(a, b), std::min(a, b), std::max(a, b)}); }

  int contract(int a, int b) {
    std::vector<label_t> out = out_labels(a, b);
    for (int id : {a, b}) {
      alive_[static_cast<std::size_t>(id)] = false;
      for (label_t l : operands_[static_cast<std::size_t>(id)]) --need_[static_cast<std::size_t>(l)];
    }
    path_.emplace_back(a, b);
    return add_operand(std::move(out));
  }

  const network& net_;
  std::vector<int> need_;                 // by label: live operands holding it, +1 if in the output
  std::vector<std::vector<int>> users_;   // by label: every operand id that ever held it
  std::vector<std::vector<label_t>> operands_;
  std::vector<double> size_;
  std::vector<bool> alive_;
  std::priority_queue<candidate> heap_;
  ssa_path path_;
};

// Best total multiply-adds over every contraction tree, by dynamic programming over subsets of the
// inputs: a subset's result has the labels that inputs outside it or the output still need,
// whatever order it was built in, so best(S) = min over splits A|B of best(A) + best(B) + cost.
ssa_path exhaustive(const network& net) {
  const std::size_t n = net.inputs.size();
  const std::uint32_t full = (1u << n) - 1;
  std::vector<std::vector<label_t>> labels(full + 1);
  std::vector<double> best(full + 1, std::numeric_limits<double>::infinity());
  std::vector<std::uint32_t> split(full + 1, 0);
  for (std::uint32_t s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) {
      const auto i = static_cast<std::size_t>(std::countr_zero(s));
      labels[s] = unique_labels(net.inputs[i]);
      best[s] = 0;
      continue;
    }
    std::vector<label_t> all;
    for (std::size_t i = 0; i < n; ++i)
      if (s & (1u << i)) all.insert(all.end(), net.inputs[i].begin(), net.inputs[i].end());
    for (label_t l : unique_labels(all)) {
      bool needed = std::find(net.output.begin(), net.output.end(), l) != net.output.end();
      for (std::size_t i = 0; i < n && !needed; ++i)
        needed = !(s & (1u << i)) && std::find(net.inputs[i].begin(), net.inputs[i].end(), l) != net.inputs[i].end();
      if (needed) labels[s].push_back(l);
    }
    const std::uint32_t low = s & (~s + 1);
    // each split once: A holds the lowest input of S
    for (std::uint32_t a = (s - 1) & s; a != 0; a = (a - 1) & s) {
      if (!(a & low)) continue;
      const std::uint32_t b = s ^ a;
      std::vector<label_t> step_labels = labels[a];
      step_labels.insert(step_labels.end(), labels[b].begin(), labels[b].end());
      double flops = 1;
      for (label_t l : unique_labels(step_labels)) flops *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
      const double total = best[a] + best[b] + flops;
      // split[s] == 0: take the first split even when its cost overflows to infinity (huge
      // extents), so that every subset has one and the walk below ends
      if (total < best[s] || split[s] == 0) {
        best[s] = total;
        split[s] = a;
      }
    }
  }
  // post-order over the chosen splits gives SSA ids in definition order
  ssa_path path;
  int next = static_cast<int>(n);
  const auto emit = [&](const auto& self, std::uint32_t s) -> int {
    if ((s & (s - 1)) == 0) return std::countr_zero(s);
    const int a = self(self, split[s]);
    const int b = self(self, s ^ split[s]);
    path.emplace_back(a, b);
    return next++;
  };
  emit(emit, full);
  return path;
}

}  // namespace

std::vector<std::vector<int>> optimize_path(const network& net, path_optimizer how, dtype type) {
  const std::size_t n = net.inputs.size();
  if (n <= 1) return {};
  if (how == path_optimizer::hyper) {
    search_options opt;
    opt.model = cost_model::for_dtype(type);
    return search_path(net, opt).path;
  }
  if (how == path_optimizer::automatic) return search_path(net, automatic_search_options(type)).path;
  if (how == path_optimizer::exhaustive) {
    if (n > 8) throw usage_error("the exhaustive path optimizer takes at most 8 inputs; this network has " + std::to_string(n));
    return to_linear(n, exhaustive(net));
  }
  return to_linear(n, greedy_optimizer(net).run());
}

}  // namespace tnrt
