// Hyper-optimizing path search: random-greedy trials, then subtree reconfiguration (see search.hpp).
#include "tnrt/search.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <future>
#include <iterator>
#include <limits>
#include <queue>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include "core/formats_json.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace {

using ssa_path = std::vector<std::pair<int, int>>;  // operand ids: inputs, then one per step
using clock_type = std::chrono::steady_clock;
constexpr double inf = std::numeric_limits<double>::infinity();

// splitmix64: a fixed stream on every platform (the standard distributions are not).
struct rng64 {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double gumbel() {
    const double u = (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
    return -std::log(-std::log(u));
  }
};

struct deadline {
  clock_type::time_point start = clock_type::now();
  double limit = 0;  // seconds; <= 0: none
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(clock_type::now() - start).count(); }
  [[nodiscard]] bool passed(double fraction = 1.0) const { return limit > 0 && elapsed() >= fraction * limit; }
};

std::vector<label_t> sorted_unique(std::vector<label_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The network as sets of labels.
struct model {
  std::size_t n = 0;
  std::vector<std::vector<label_t>> leaf;  // sorted unique labels of each input
  std::vector<double> extent;              // by label
  std::vector<int> need0;                  // by label: inputs holding it, +1 if in the output
  double size_weight = 0;
  double limit = inf;                      // element cap
  bool timed = false;                      // score by the cost model (else multiply-adds)
  cost_model cm;

  explicit model(const network& net, const search_options& opt, double lim)
      : n(net.inputs.size()), size_weight(opt.size_weight), limit(lim), timed(opt.objective == search_objective::model), cm(opt.model) {
    extent.reserve(net.label_count());
    for (auto e : net.extents) extent.push_back(static_cast<double>(e));
    need0.assign(net.label_count(), 0);
    for (label_t l : net.output) ++need0[static_cast<std::size_t>(l)];
    for (const auto& in : net.inputs) {
      leaf.push_back(sorted_unique(in));
      for (label_t l : leaf.back()) ++need0[static_cast<std::size_t>(l)];
    }
  }

  // The score of one step: `all` elements in the step's label union (its multiply-adds), operands of
  // `a` and `b` elements and a result of `out`.
  [[nodiscard]] double step_cost(double all, double a, double b, double out) const {
    const double base = timed ? cm.step_seconds(all, a, b, out) : all;
    return base + size_weight * out;
  }

  [[nodiscard]] double size_of(const std::vector<label_t>& labels) const {
    double s = 1;
    for (label_t l : labels) s *= extent[static_cast<std::size_t>(l)];
    return s;
  }
};

// Merges two sorted label sets; `out` gets the labels some other live operand or the output still
// needs (need[l] counts live operands holding l, +1 for the output); `all` gets the union.
void step_labels(const std::vector<label_t>& a, const std::vector<label_t>& b, const std::vector<int>& need,
                 std::vector<label_t>& all, std::vector<label_t>& out) {
  all.clear();
  out.clear();
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    label_t l;
    int held = 1;
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      l = a[i++];
    } else if (i == a.size() || b[j] < a[i]) {
      l = b[j++];
    } else {
      l = a[i++];
      ++j;
      held = 2;
    }
    all.push_back(l);
    if (need[static_cast<std::size_t>(l)] > held) out.push_back(l);
  }
}

// A binary contraction tree: ids 0..n-1 the inputs, n..2n-2 the steps (any order; children by id).
struct tree {
  std::vector<int> left, right;
  std::vector<std::vector<label_t>> labels;
  std::vector<double> size;  // elements of each node's tensor
  std::vector<double> cost;  // a step's score (model::step_cost); 0 for inputs
  int root = 0;

  [[nodiscard]] double total() const {
    double t = 0;
    for (double c : cost) t += c;
    return t;
  }
  [[nodiscard]] double largest() const { return *std::max_element(size.begin(), size.end()); }
};

tree tree_from_ssa(const model& m, const ssa_path& ssa) {
  tree t;
  const std::size_t total = m.n + ssa.size();
  t.left.assign(total, -1);
  t.right.assign(total, -1);
  t.labels.resize(total);
  t.size.assign(total, 0);
  t.cost.assign(total, 0);
  std::vector<int> need = m.need0;
  for (std::size_t i = 0; i < m.n; ++i) {
    t.labels[i] = m.leaf[i];
    t.size[i] = m.size_of(m.leaf[i]);
  }
  std::vector<label_t> all;
  for (std::size_t k = 0; k < ssa.size(); ++k) {
    const auto [a, b] = ssa[k];
    const std::size_t id = m.n + k;
    step_labels(t.labels[static_cast<std::size_t>(a)], t.labels[static_cast<std::size_t>(b)], need, all, t.labels[id]);
    for (int x : {a, b})
      for (label_t l : t.labels[static_cast<std::size_t>(x)]) --need[static_cast<std::size_t>(l)];
    for (label_t l : t.labels[id]) ++need[static_cast<std::size_t>(l)];
    t.left[id] = a;
    t.right[id] = b;
    t.size[id] = m.size_of(t.labels[id]);
    t.cost[id] = m.step_cost(m.size_of(all), t.size[static_cast<std::size_t>(a)], t.size[static_cast<std::size_t>(b)], t.size[id]);
  }
  t.root = static_cast<int>(total - 1);
  return t;
}

ssa_path ssa_from_tree(const tree& t, std::size_t n) {
  ssa_path ssa;
  int next = static_cast<int>(n);
  const auto emit = [&](const auto& self, int u) -> int {
    if (static_cast<std::size_t>(u) < n) return u;
    const int a = self(self, t.left[static_cast<std::size_t>(u)]);
    const int b = self(self, t.right[static_cast<std::size_t>(u)]);
    ssa.emplace_back(a, b);
    return next++;
  };
  if (n > 1) emit(emit, t.root);
  return ssa;
}

std::vector<std::vector<int>> to_linear(std::size_t n, const ssa_path& ssa) { return detail::linear_from_ssa(n, ssa); }

ssa_path from_linear(std::size_t n, const std::vector<std::vector<int>>& path) {
  std::vector<int> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = static_cast<int>(i);
  ssa_path ssa;
  int next = static_cast<int>(n);
  for (const auto& e : path) {
    if (e.size() != 2) throw internal_error("search: the greedy path has a step of " + std::to_string(e.size()) + " operands");
    const int pa = std::min(e[0], e[1]), pb = std::max(e[0], e[1]);
    ssa.emplace_back(live[static_cast<std::size_t>(pa)], live[static_cast<std::size_t>(pb)]);
    live.erase(live.begin() + pb);
    live.erase(live.begin() + pa);
    live.push_back(next++);
  }
  return ssa;
}

// One random-greedy trial (cotengra's random_greedy): candidate pairs share a label; a pair's score
// is size(out) - alpha * (size(a) + size(b)), taken as a signed log and perturbed by
// temperature * Gumbel noise drawn when the pair is queued, so the heap pops pairs with probability
// about exp(-score / temperature). Pairs over the memory limit are never taken; nullopt when the
// trial gets stuck with only such pairs left.
std::optional<ssa_path> random_greedy(const model& m, double alpha, double temperature, rng64& rng) {
  struct candidate {
    double score;
    int a, b;
    bool operator<(const candidate& o) const { return std::tie(score, a, b) > std::tie(o.score, o.a, o.b); }
  };
  std::vector<int> need = m.need0;
  std::vector<std::vector<int>> users(need.size());
  std::vector<std::vector<label_t>> ops;
  std::vector<double> size;
  std::vector<char> alive;
  std::priority_queue<candidate> heap;
  ssa_path path;
  std::vector<label_t> all, out;

  const auto add = [&](std::vector<label_t> labels) {
    const int id = static_cast<int>(ops.size());
    for (label_t l : labels) users[static_cast<std::size_t>(l)].push_back(id);
    size.push_back(m.size_of(labels));
    ops.push_back(std::move(labels));
    alive.push_back(1);
    return id;
  };
  const auto push = [&](int a, int b) {
    step_labels(ops[static_cast<std::size_t>(a)], ops[static_cast<std::size_t>(b)], need, all, out);
    const double so = m.size_of(out);
    if (so > m.limit) return;
    const double c = so - alpha * (size[static_cast<std::size_t>(a)] + size[static_cast<std::size_t>(b)]);
    double s = c >= 0 ? std::log2(1 + c) : -std::log2(1 - c);
    if (temperature > 0) s -= temperature * rng.gumbel();
    heap.push({s, std::min(a, b), std::max(a, b)});
  };
  const auto contract = [&](int a, int b) {
    step_labels(ops[static_cast<std::size_t>(a)], ops[static_cast<std::size_t>(b)], need, all, out);
    for (int id : {a, b}) {
      alive[static_cast<std::size_t>(id)] = 0;
      for (label_t l : ops[static_cast<std::size_t>(id)]) --need[static_cast<std::size_t>(l)];
    }
    for (label_t l : out) ++need[static_cast<std::size_t>(l)];
    path.emplace_back(a, b);
    return add(out);
  };

  for (const auto& l : m.leaf) add(l);
  for (std::size_t l = 0; l < users.size(); ++l)
    for (std::size_t i = 0; i < users[l].size(); ++i)
      for (std::size_t j = i + 1; j < users[l].size(); ++j) push(users[l][i], users[l][j]);
  std::size_t live = m.n;
  std::vector<int> partners;
  while (live > 1 && !heap.empty()) {
    const candidate c = heap.top();
    heap.pop();
    if (!alive[static_cast<std::size_t>(c.a)] || !alive[static_cast<std::size_t>(c.b)]) continue;
    const int merged = contract(c.a, c.b);
    --live;
    partners.clear();
    for (label_t l : ops[static_cast<std::size_t>(merged)])
      for (int u : users[static_cast<std::size_t>(l)])
        if (u != merged && alive[static_cast<std::size_t>(u)] && std::find(partners.begin(), partners.end(), u) == partners.end())
          partners.push_back(u);
    for (int u : partners) push(u, merged);
  }
  // What is left shares no labels (or only pairs over the limit): outer products, smallest first.
  while (live > 1) {
    int a = -1, b = -1;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!alive[i]) continue;
      const int id = static_cast<int>(i);
      if (a < 0 || size[i] < size[static_cast<std::size_t>(a)]) {
        b = a;
        a = id;
      } else if (b < 0 || size[i] < size[static_cast<std::size_t>(b)]) {
        b = id;
      }
    }
    step_labels(ops[static_cast<std::size_t>(a)], ops[static_cast<std::size_t>(b)], need, all, out);
    if (m.size_of(out) > m.limit) return std::nullopt;
    contract(std::min(a, b), std::max(a, b));
    --live;
  }
  return path;
}

// One partitioning trial (cotengra's recursive-bisection idea, with a partitioner of our own): the
// inputs are vertices of a hypergraph whose hyperedges are the labels, weighted by log2 of their
// extent. A group larger than `cutoff` is bisected (grown from a random vertex, then refined by
// moves that lower the cut weight, within `imbalance` of half), each half built the same way, and
// the halves contracted; a group of at most `cutoff` is contracted by repeatedly merging its two most
// strongly connected members. Reconfiguration later re-orders the small groups exactly.
ssa_path partition_trial(const model& m, int cutoff, double imbalance, rng64& rng) {
  const std::size_t n = m.n;
  std::vector<std::vector<int>> users(m.extent.size());
  for (std::size_t v = 0; v < n; ++v)
    for (label_t l : m.leaf[v]) users[static_cast<std::size_t>(l)].push_back(static_cast<int>(v));
  std::vector<double> w(m.extent.size());
  for (std::size_t l = 0; l < w.size(); ++l) w[l] = std::log2(std::max(m.extent[l], 1.0)) + 1e-3;  // extent 1 still links
  ssa_path path;
  std::vector<int> side(n, -1);  // scratch: 0/1 within the group being split, -1 outside it
  std::vector<int> cnt0(w.size(), 0), cnt1(w.size(), 0);

  const auto bisect = [&](const std::vector<int>& verts, std::vector<int>& a, std::vector<int>& b) {
    const std::size_t total = verts.size();
    const auto target = static_cast<std::size_t>(std::ceil(total / 2.0));
    const auto lo = static_cast<std::size_t>(std::max(1.0, std::floor(total * (0.5 - imbalance / 2))));
    const auto hi = std::min(total - 1, static_cast<std::size_t>(std::ceil(total * (0.5 + imbalance / 2))));
    for (int v : verts) side[static_cast<std::size_t>(v)] = 1;
    // grow part 0 from a random seed, always taking the outside vertex most tied to it
    std::vector<double> tie(n, 0.0);
    std::size_t size0 = 0;
    std::vector<int> cand;
    while (size0 < target) {
      int pick = -1;
      for (int v : cand)
        if (side[static_cast<std::size_t>(v)] == 1 && (pick < 0 || tie[static_cast<std::size_t>(v)] > tie[static_cast<std::size_t>(pick)])) pick = v;
      if (pick < 0) {  // a new component (or the start): a random vertex still outside
        std::vector<int> left;
        for (int v : verts)
          if (side[static_cast<std::size_t>(v)] == 1) left.push_back(v);
        pick = left[static_cast<std::size_t>(rng.next() % left.size())];
      }
      side[static_cast<std::size_t>(pick)] = 0;
      ++size0;
      for (label_t l : m.leaf[static_cast<std::size_t>(pick)])
        for (int u : users[static_cast<std::size_t>(l)])
          if (side[static_cast<std::size_t>(u)] == 1) {
            if (tie[static_cast<std::size_t>(u)] == 0) cand.push_back(u);
            tie[static_cast<std::size_t>(u)] += w[static_cast<std::size_t>(l)];
          }
    }
    // refine: passes of single moves with positive gain that keep the balance
    for (int v : verts)
      for (label_t l : m.leaf[static_cast<std::size_t>(v)]) ++(side[static_cast<std::size_t>(v)] == 0 ? cnt0 : cnt1)[static_cast<std::size_t>(l)];
    std::vector<int> order = verts;
    for (int pass = 0; pass < 4; ++pass) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next() % i]);
      bool moved = false;
      for (int v : order) {
        const int from = side[static_cast<std::size_t>(v)];
        const std::size_t from_size = from == 0 ? size0 : total - size0;
        if (from_size - 1 < lo || total - from_size + 1 > hi) continue;
        auto& cf = from == 0 ? cnt0 : cnt1;
        auto& ct = from == 0 ? cnt1 : cnt0;
        double gain = 0;
        for (label_t l : m.leaf[static_cast<std::size_t>(v)]) {
          const auto u = static_cast<std::size_t>(l);
          const bool cut_before = cf[u] > 0 && ct[u] > 0;
          const bool cut_after = cf[u] > 1;
          gain += w[u] * ((cut_before ? 1 : 0) - (cut_after ? 1 : 0));
        }
        if (gain <= 1e-12) continue;
        for (label_t l : m.leaf[static_cast<std::size_t>(v)]) {
          --cf[static_cast<std::size_t>(l)];
          ++ct[static_cast<std::size_t>(l)];
        }
        side[static_cast<std::size_t>(v)] = 1 - from;
        size0 += from == 0 ? -1 : 1;
        moved = true;
      }
      if (!moved) break;
    }
    for (int v : verts) {
      (side[static_cast<std::size_t>(v)] == 0 ? a : b).push_back(v);
      for (label_t l : m.leaf[static_cast<std::size_t>(v)]) cnt0[static_cast<std::size_t>(l)] = cnt1[static_cast<std::size_t>(l)] = 0;
      side[static_cast<std::size_t>(v)] = -1;
    }
  };

  // a small group: merge its two most strongly tied members until one is left
  const auto contract_group = [&](const std::vector<int>& verts) {
    std::vector<int> ids = verts;
    std::vector<std::vector<label_t>> labels;
    for (int v : verts) labels.push_back(m.leaf[static_cast<std::size_t>(v)]);
    std::vector<label_t> both;
    while (ids.size() > 1) {
      std::size_t bi = 0, bj = 1;
      double best = -1;
      for (std::size_t i = 0; i < ids.size(); ++i)
        for (std::size_t j = i + 1; j < ids.size(); ++j) {
          both.clear();
          std::set_intersection(labels[i].begin(), labels[i].end(), labels[j].begin(), labels[j].end(), std::back_inserter(both));
          double tie = 0;
          for (label_t l : both) tie += w[static_cast<std::size_t>(l)];
          if (tie > best) {
            best = tie;
            bi = i;
            bj = j;
          }
        }
      path.emplace_back(ids[bi], ids[bj]);
      std::vector<label_t> merged;
      std::set_union(labels[bi].begin(), labels[bi].end(), labels[bj].begin(), labels[bj].end(), std::back_inserter(merged));
      ids[bi] = static_cast<int>(n + path.size() - 1);
      labels[bi] = std::move(merged);  // a superset of the result's labels: enough to rank ties
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(bj));
      labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(bj));
    }
    return ids[0];
  };

  const auto build = [&](const auto& self, const std::vector<int>& verts) -> int {
    if (verts.size() <= static_cast<std::size_t>(std::max(cutoff, 2))) return contract_group(verts);
    std::vector<int> a, b;
    bisect(verts, a, b);
    const int x = self(self, a);
    const int y = self(self, b);
    path.emplace_back(x, y);
    return static_cast<int>(n + path.size() - 1);
  };
  std::vector<int> all(n);
  for (std::size_t v = 0; v < n; ++v) all[v] = static_cast<int>(v);
  build(build, all);
  return path;
}

// Label sets of a reconfigured subtree, as bits over its own labels.
constexpr std::size_t mask_words = 4;
using lmask = std::array<std::uint64_t, mask_words>;
lmask operator|(const lmask& x, const lmask& y) {
  lmask r;
  for (std::size_t i = 0; i < mask_words; ++i) r[i] = x[i] | y[i];
  return r;
}
lmask operator&(const lmask& x, const lmask& y) {
  lmask r;
  for (std::size_t i = 0; i < mask_words; ++i) r[i] = x[i] & y[i];
  return r;
}
template <typename F>
void for_bits(const lmask& x, F&& f) {
  for (std::size_t w = 0; w < mask_words; ++w)
    for (std::uint64_t b = x[w]; b; b &= b - 1) f(w * 64 + static_cast<std::size_t>(std::countr_zero(b)));
}

// Re-orders the subtree under internal node v optimally: its frontier (v's children, the dearest
// internal member expanded into its children until `k` members) is re-contracted by dynamic
// programming over subsets. The new steps reuse the old ids (v keeps its own). Returns whether the
// subtree got cheaper.
bool reconfigure_node(const model& m, tree& t, int v, int k) {
  std::vector<int> frontier{t.left[static_cast<std::size_t>(v)], t.right[static_cast<std::size_t>(v)]};
  std::vector<int> internal{v};
  while (static_cast<int>(frontier.size()) < k) {
    int pick = -1;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      const auto u = static_cast<std::size_t>(frontier[i]);
      if (u < m.n) continue;
      if (pick < 0 || t.cost[u] > t.cost[static_cast<std::size_t>(frontier[static_cast<std::size_t>(pick)])])
        pick = static_cast<int>(i);
    }
    if (pick < 0) break;
    const int u = frontier[static_cast<std::size_t>(pick)];
    internal.push_back(u);
    frontier[static_cast<std::size_t>(pick)] = t.left[static_cast<std::size_t>(u)];
    frontier.push_back(t.right[static_cast<std::size_t>(u)]);
  }
  const std::size_t f = frontier.size();
  if (f < 3) return false;
  double old_cost = 0;
  for (int u : internal) old_cost += t.cost[static_cast<std::size_t>(u)];

  std::vector<label_t> local;
  for (int u : frontier) local.insert(local.end(), t.labels[static_cast<std::size_t>(u)].begin(), t.labels[static_cast<std::size_t>(u)].end());
  local = sorted_unique(std::move(local));
  if (local.size() > mask_words * 64) return false;
  const auto to_mask = [&](const std::vector<label_t>& labels) {
    lmask r{};
    for (label_t l : labels) {
      const auto i = static_cast<std::size_t>(std::lower_bound(local.begin(), local.end(), l) - local.begin());
      r[i / 64] |= std::uint64_t{1} << (i % 64);
    }
    return r;
  };
  std::vector<double> log_ext(local.size());
  for (std::size_t i = 0; i < local.size(); ++i) log_ext[i] = std::log2(m.extent[static_cast<std::size_t>(local[i])]);
  const auto log_size = [&](const lmask& x) {
    double s = 0;
    for_bits(x, [&](std::size_t i) { s += log_ext[i]; });
    return s;
  };

  const std::uint32_t full = (1u << f) - 1;
  std::vector<lmask> uni(full + 1, lmask{}), out(full + 1);
  std::vector<double> osize(full + 1), best(full + 1, inf);
  std::vector<std::uint32_t> split(full + 1, 0);
  const lmask vmask = to_mask(t.labels[static_cast<std::size_t>(v)]);
  std::vector<lmask> fm(f);
  for (std::size_t i = 0; i < f; ++i) fm[i] = to_mask(t.labels[static_cast<std::size_t>(frontier[i])]);
  for (std::uint32_t s = 1; s <= full; ++s) uni[s] = uni[s & (s - 1)] | fm[static_cast<std::size_t>(std::countr_zero(s))];
  for (std::uint32_t s = 1; s <= full; ++s) {
    // a member keeps its own labels (an input may hold a label it alone sums)
    out[s] = (s & (s - 1)) == 0 ? uni[s] : uni[s] & (uni[full ^ s] | vmask);
    osize[s] = std::exp2(log_size(out[s]));
  }
  for (std::uint32_t s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) {
      best[s] = 0;
      continue;
    }
    if (s != full && osize[s] > m.limit) continue;
    const std::uint32_t low = s & (~s + 1);
    for (std::uint32_t a = (s - 1) & s; a != 0; a = (a - 1) & s) {
      if (!(a & low)) continue;
      const std::uint32_t b = s ^ a;
      const double sub = best[a] + best[b];
      if (sub >= best[s]) continue;
      const double total = sub + m.step_cost(std::exp2(log_size(out[a] | out[b])), osize[a], osize[b], osize[s]);
      if (total < best[s]) {
        best[s] = total;
        split[s] = a;
      }
    }
  }
  if (!(best[full] < old_cost * (1 - 1e-12))) return false;

  // rebuild with the old ids: v for the whole frontier, the others in any order
  std::vector<int> pool(internal.begin() + 1, internal.end());
  const auto build = [&](const auto& self, std::uint32_t s) -> int {
    if ((s & (s - 1)) == 0) return frontier[static_cast<std::size_t>(std::countr_zero(s))];
    const int id = s == full ? v : pool.back();
    if (s != full) pool.pop_back();
    const int a = self(self, split[s]);
    const int b = self(self, s ^ split[s]);
    const auto u = static_cast<std::size_t>(id);
    t.left[u] = a;
    t.right[u] = b;
    if (s != full) {
      std::vector<label_t> labels;
      for_bits(out[s], [&](std::size_t i) { labels.push_back(local[i]); });
      t.labels[u] = std::move(labels);
      t.size[u] = m.size_of(t.labels[u]);
    }
    std::vector<label_t> all;
    for_bits(out[split[s]] | out[s ^ split[s]], [&](std::size_t i) { all.push_back(local[i]); });
    t.cost[u] = m.step_cost(m.size_of(all), t.size[static_cast<std::size_t>(a)], t.size[static_cast<std::size_t>(b)], t.size[u]);
    return id;
  };
  build(build, full);
  return true;
}

// Recomputes every step's score under m (the tree's shape and labels unchanged).
void rescore(const model& m, tree& t) {
  std::vector<label_t> all;
  for (std::size_t u = m.n; u < t.cost.size(); ++u) {
    const auto a = static_cast<std::size_t>(t.left[u]), b = static_cast<std::size_t>(t.right[u]);
    all = t.labels[a];
    all.insert(all.end(), t.labels[b].begin(), t.labels[b].end());
    t.cost[u] = m.step_cost(m.size_of(sorted_unique(all)), t.size[a], t.size[b], t.size[u]);
  }
}

// Passes of reconfiguration over every step, dearest first, until one changes nothing.
void reconfigure(const model& m, tree& t, const search_options& opt, const deadline& dl) {
  if (m.n < 3) return;
  for (int pass = 0; pass < opt.reconf_passes; ++pass) {
    std::vector<int> order;
    for (std::size_t u = m.n; u < t.cost.size(); ++u) order.push_back(static_cast<int>(u));
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return t.cost[static_cast<std::size_t>(a)] > t.cost[static_cast<std::size_t>(b)]; });
    bool changed = false;
    for (int v : order) {
      if (dl.passed()) return;
      changed = reconfigure_node(m, t, v, opt.reconf_leaves) || changed;
    }
    if (!changed) return;
  }
}

}  // namespace

cost_model cost_model::for_dtype(dtype type) {
  cost_model m;
  m.bytes_per_element = static_cast<double>(size_of(type));
  m.flops_per_multiply_add = is_complex(type) ? 8 : 2;
  return m;
}

namespace {
// `m` with other calibration terms (the machine's figures and the dtype's stay).
cost_model calibrated(cost_model m, double gemm_tile, double parallel_elements, double parallel_exponent, double memory_efficiency,
                      double overlap) noexcept {
  m.gemm_tile = gemm_tile;
  m.parallel_elements = parallel_elements;
  m.parallel_exponent = parallel_exponent;
  m.memory_efficiency = memory_efficiency;
  m.overlap = overlap;
  return m;
}
}  // namespace

cost_model cost_model::roofline() const noexcept { return calibrated(*this, 0, 0, parallel_exponent, 1, 0); }

cost_model cost_model::tile_fit() const noexcept { return calibrated(*this, 33.3, 5.16e6, 0.32, 0.64, 0); }

double cost_model::step_seconds(double multiply_adds, double lhs, double rhs, double out) const noexcept {
  double compute = multiply_adds * flops_per_multiply_add / (peak_tflops * 1e12);
  if (gemm_tile > 0 && rhs > 0 && lhs > 0) {
    const double narrow = std::max(1.0, std::min(multiply_adds / rhs, multiply_adds / lhs));  // min(m, n)
    compute *= 1 + gemm_tile / narrow;
  }
  const double memory = (lhs + rhs + out) * bytes_per_element / (bandwidth_gbps * 1e9 * memory_efficiency);
  double t = std::max(compute, memory) + overlap * std::min(compute, memory);
  if (parallel_elements > 0 && out > 1 && out < parallel_elements) t /= std::pow(out / parallel_elements, parallel_exponent);
  return t + step_overhead_us * 1e-6;
}

search_options automatic_search_options(dtype type) {
  search_options opt;
  opt.model = cost_model::for_dtype(type);
  opt.max_trials = 16;
  opt.reconf_leaves = 10;
  opt.roofline_search = true;
  opt.tile_search = true;
  opt.max_seconds = 10.0;
  return opt;
}

namespace {
search_result search_one(const network& net, const search_options& opt);
}  // namespace

// The search under opt.model, and beside it one under the plain roofline (roofline_search) and one
// under the fit without the overlap term (tile_search), each path kept when opt.model scores it lower.
// The searches beside run on threads of their own while this one runs the main search (each is
// deterministic and they share nothing; the results are combined in this fixed order, so the path
// is the one the same searches run one after another would give); a thread that cannot be started
// runs its search here afterwards.
search_result search_path(const network& net, const search_options& opt) {
  const auto t0 = clock_type::now();
  const bool besides = opt.objective == search_objective::model && net.inputs.size() > 2;
  std::vector<search_options> others;
  const auto add = [&](const cost_model& other, int leaves) {
    search_options o = opt;
    o.model = other;
    o.reconf_leaves = std::min(opt.reconf_leaves, leaves);
    o.roofline_search = o.tile_search = false;
    others.push_back(std::move(o));
  };
  if (besides && opt.roofline_search) add(opt.model.roofline(), 8);
  if (besides && opt.tile_search) add(opt.model.tile_fit(), opt.reconf_leaves);
  std::vector<std::future<search_result>> running(others.size());
  for (std::size_t i = 0; i < others.size(); ++i) {
    try {
      running[i] = std::async(std::launch::async, [&net, &o = others[i]] { return search_one(net, o); });
    } catch (const std::system_error&) {  // no thread: run it here below
    }
  }
  search_result r = search_one(net, opt);
  for (std::size_t i = 0; i < others.size(); ++i) {
    search_result b = running[i].valid() ? running[i].get() : search_one(net, others[i]);
    const double b_model = predicted_seconds(net, tree_from_linear_path(net, b.path), opt.model);
    const int trials = r.trials + b.trials, partition = r.partition_trials + b.partition_trials;
    if (b_model < r.predicted_seconds * (1 - 1e-9)) {
      r = std::move(b);
      r.predicted_seconds = b_model;
    }
    r.trials = trials;
    r.partition_trials = partition;
  }
  r.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return r;
}

namespace {
search_result search_one(const network& net, const search_options& opt) {
  if (opt.max_trials < 1) throw usage_error("search_path: max_trials must be at least 1, not " + std::to_string(opt.max_trials));
  if (opt.reconf_leaves < 2 || opt.reconf_leaves > 12)
    throw usage_error("search_path: reconf_leaves must be 2..12, not " + std::to_string(opt.reconf_leaves));
  if (!(opt.size_weight >= 0) || !std::isfinite(opt.size_weight)) throw usage_error("search_path: size_weight must be finite and >= 0");
  {
    const cost_model& cm = opt.model;
    for (const auto& [name, v] : {std::pair{"bytes_per_element", cm.bytes_per_element},
                                  std::pair{"flops_per_multiply_add", cm.flops_per_multiply_add},
                                  std::pair{"peak_tflops", cm.peak_tflops}, std::pair{"bandwidth_gbps", cm.bandwidth_gbps}})
      if (!(v > 0) || !std::isfinite(v))
        throw usage_error(std::string("search_path: the cost model's ") + name + " must be positive and finite");
    if (!(cm.step_overhead_us >= 0) || !std::isfinite(cm.step_overhead_us))
      throw usage_error("search_path: the cost model's step_overhead_us must be finite and >= 0");
    for (const auto& [name, v] : {std::pair{"gemm_tile", cm.gemm_tile}, std::pair{"parallel_elements", cm.parallel_elements},
                                  std::pair{"parallel_exponent", cm.parallel_exponent}, std::pair{"overlap", cm.overlap}})
      if (!(v >= 0) || !std::isfinite(v)) throw usage_error(std::string("search_path: the cost model's ") + name + " must be finite and >= 0");
    if (!(cm.memory_efficiency > 0) || !(cm.memory_efficiency <= 1))
      throw usage_error("search_path: the cost model's memory_efficiency must be in (0, 1]");
  }
  if (opt.memory_limit_elements && !(*opt.memory_limit_elements > 0))
    throw usage_error("search_path: memory_limit_elements must be positive");
  const deadline dl{clock_type::now(), opt.max_seconds};
  const double limit = opt.memory_limit_elements.value_or(inf);
  const std::size_t n = net.inputs.size();
  search_result r;

  const auto finish = [&](std::vector<std::vector<int>> path) {
    r.path = std::move(path);
    if (n > 0) {
      const contraction_tree t = tree_from_linear_path(net, r.path);
      const tree_cost c = cost_of(net, t);
      r.log2_flops = c.log2_tc;
      r.log2_largest = c.log2_sc;
      r.predicted_seconds = predicted_seconds(net, t, opt.model);
      if (c.max_elements > limit)
        throw out_of_memory("search_path: the contraction needs a tensor of " + std::to_string(c.max_elements) +
                            " elements, over the limit of " + std::to_string(limit));
    }
    r.seconds = dl.elapsed();
    return r;
  };
  if (n <= 1) return finish({});

  const model m(net, opt, limit);
  for (std::size_t i = 0; i < n; ++i)
    if (m.size_of(m.leaf[i]) > limit)
      throw out_of_memory("search_path: input " + std::to_string(i) + " alone has " + std::to_string(m.size_of(m.leaf[i])) +
                          " elements, over the limit of " + std::to_string(limit));
  if (m.size_of(net.output) > limit)
    throw out_of_memory("search_path: the result has " + std::to_string(m.size_of(net.output)) +
                        " elements, over the limit of " + std::to_string(limit));
  if (n == 2) return finish({{0, 1}});

  // trials: keep the best few distinct trees
  struct scored {
    double total;
    tree t;
  };
  std::vector<scored> top;
  // the partitioning trials keep a list of their own: their small groups are merged crudely, so
  // before reconfiguration they rarely rank among the greedy trees, and after it they may be best
  std::vector<scored> top_part;
  const auto keep_in = [&](std::vector<scored>& list, tree t, int most) {
    if (t.largest() > limit) return;
    const double total = t.total();
    for (const auto& s : list)
      if (s.total == total) return;
    list.push_back({total, std::move(t)});
    std::stable_sort(list.begin(), list.end(), [](const scored& a, const scored& b) { return a.total < b.total; });
    if (static_cast<int>(list.size()) > most) list.pop_back();
  };
  const auto keep = [&](tree t) { keep_in(top, std::move(t), std::max(1, opt.reconf_trees)); };
  const bool partitioning = opt.partition_trials && n > 8;
  rng64 rng{opt.seed};
  for (int trial = 0; trial < opt.max_trials; ++trial) {
    if (trial > 0 && dl.passed(partitioning ? 0.3 : 0.5)) break;  // a time bound leaves the partitioning trials 0.3..0.5
    ++r.trials;
    if (trial == 0) {
      keep(tree_from_ssa(m, from_linear(n, optimize_path(net, path_optimizer::greedy))));
      continue;
    }
    const double alpha = rng.uniform(0.1, 4.0);
    const double temperature = rng.uniform(0.0, 1.0);
    rng64 trial_rng{rng.next()};
    if (auto ssa = random_greedy(m, alpha, temperature, trial_rng)) keep(tree_from_ssa(m, *ssa));
  }
  // then partitioning trials, from a stream of their own (the greedy trials' draws stay as they were)
  rng64 part_rng{opt.seed ^ 0x7061727469746e21ull};
  for (int trial = 0; partitioning && trial < (opt.max_trials + 1) / 2; ++trial) {
    if (dl.passed(0.5)) break;
    ++r.partition_trials;
    const int cutoff = 2 + static_cast<int>(part_rng.next() % 7);
    const double imbalance = part_rng.uniform(0.01, 0.6);
    rng64 trial_rng{part_rng.next()};
    keep_in(top_part, tree_from_ssa(m, partition_trial(m, cutoff, imbalance, trial_rng)), std::max(1, (opt.reconf_trees + 1) / 2));
  }
  for (auto& s : top_part) top.push_back(std::move(s));
  if (top.empty())
    throw out_of_memory("search_path: no contraction order found in " + std::to_string(r.trials) +
                        " trials keeps every tensor within " + std::to_string(limit) + " elements");

  std::size_t best = 0;
  for (std::size_t i = 0; i < top.size(); ++i) {
    if (i > 0 && dl.passed()) break;
    // Under the model, multiply-adds first: flop reconfiguration takes the big steps down (a
    // landscape the model's max() flattens where a step is memory-bound), then the model's own
    // pass trades flops for bytes. On the families suite (32 trials, dev machine) the two phases
    // beat the model's pass alone on 14 of 29 networks by up to 2.8x and lost on 6 by up to 8%
    // (bench/results/2026-12-02-search-model).
    if (m.timed && opt.flops_first) {
      model by_flops = m;
      by_flops.timed = false;
      rescore(by_flops, top[i].t);
      reconfigure(by_flops, top[i].t, opt, dl);
      rescore(m, top[i].t);
    }
    reconfigure(m, top[i].t, opt, dl);
    top[i].total = top[i].t.total();
    if (top[i].total < top[best].total) best = i;
  }
  return finish(to_linear(n, ssa_from_tree(top[best].t, n)));
}

}  // namespace

}  // namespace tnrt
