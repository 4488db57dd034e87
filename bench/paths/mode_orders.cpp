// How many of a network's compute-heavy steps could be one GEMM as they lie if each intermediate
// had a mode order of its own, against the three whole-network layouts (column, row, follow).
// Host-only analysis for the "intermediate mode orders per step" item of docs/design.md's Next:
// nothing here runs or changes tnrt's engine. Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/mode_orders.cpp build/libtnrt_core.a -o /tmp/mode_orders
//   /tmp/mode_orders [--min-madds X] [--explain] FILE.json...
//
// The greedy pass ("planned"): steps in decreasing multiply-adds. A step's operands whose order is
// still free get one in which the step's groups (batch: in A, B and D; m: A and D; n: B and D;
// k: A and B) are each contiguous, in the order of a fixed operand holding the same group, with the
// group GEMM wants fastest first (A: m, k, batch; B: k, n, batch; D: m, n, batch) and the rest of
// the operand's modes last. Inside each group, modes are sorted by their group at the operand's
// other step (its producer or consumer), so that step may find its own groups contiguous too.
// Network inputs keep their row-major order and the final result its row-major order; an operand no
// step decided is column-major. Then every step is lowered (core lower_step) and checked with
// core lower_to_gemm, exactly as compiled programs check it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gemm_lowering.hpp"
#include "core/step_lowering.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"

namespace {
using namespace tnrt;
using order_t = std::vector<label_t>;  // an operand's labels, fastest first

enum group : int { g_batch = 0, g_m = 1, g_n = 2, g_k = 3, g_rest = 4 };

bool has(const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct analysis {
  const problem* p = nullptr;
  std::size_t n = 0;
  std::vector<const std::vector<label_t>*> labels;  // by operand id
  std::vector<int> producer, consumer;              // step of each operand id (-1: none)
  std::vector<double> madds;                        // by step

  explicit analysis(const problem& pr) : p(&pr), n(pr.net.inputs.size()) {
    const std::size_t steps = pr.tree.steps.size();
    labels.resize(n + steps);
    producer.assign(n + steps, -1);
    consumer.assign(n + steps, -1);
    for (std::size_t i = 0; i < n; ++i) labels[i] = &pr.net.inputs[i];
    madds.assign(steps, 1.0);
    for (std::size_t k = 0; k < steps; ++k) {
      const step& s = pr.tree.steps[k];
      labels[n + k] = &s.out;
      producer[n + k] = static_cast<int>(k);
      consumer[static_cast<std::size_t>(s.lhs)] = static_cast<int>(k);
      if (s.rhs >= 0) consumer[static_cast<std::size_t>(s.rhs)] = static_cast<int>(k);
      std::vector<label_t> all;
      for (const auto* v : {labels[static_cast<std::size_t>(s.lhs)], s.rhs >= 0 ? labels[static_cast<std::size_t>(s.rhs)] : nullptr, &s.out})
        if (v != nullptr)
          for (label_t x : *v)
            if (!has(all, x)) all.push_back(x);
      for (label_t x : all) madds[k] *= static_cast<double>(pr.net.extents[static_cast<std::size_t>(x)]);
    }
  }

  // The group of label x at step k, as seen from operand id `who` (one of its operands).
  [[nodiscard]] int group_at(std::size_t k, label_t x) const {
    const step& s = p->tree.steps[k];
    const bool in_a = has(*labels[static_cast<std::size_t>(s.lhs)], x);
    const bool in_b = s.rhs >= 0 && has(*labels[static_cast<std::size_t>(s.rhs)], x);
    const bool in_d = has(s.out, x);
    if (in_a && in_b && in_d) return g_batch;
    if (in_a && in_d) return g_m;
    if (in_b && in_d) return g_n;
    if (in_a && in_b) return g_k;
    return g_rest;
  }

  [[nodiscard]] std::vector<std::int64_t> strides_of(std::size_t id, const order_t& order) const {
    const std::vector<label_t>& l = *labels[id];
    std::vector<std::int64_t> st(l.size(), 0);
    std::int64_t s = 1;
    for (label_t x : order) {
      for (std::size_t i = 0; i < l.size(); ++i)
        if (l[i] == x) st[i] = s;
      s *= p->net.extents[static_cast<std::size_t>(x)];
    }
    return st;
  }

  [[nodiscard]] lowered_step lowered(std::size_t k, const std::vector<order_t>& orders) const {
    const step& s = p->tree.steps[k];
    const auto a = static_cast<std::size_t>(s.lhs);
    labelled_layout la{labels[a], strides_of(a, orders[a])};
    labelled_layout ld{labels[n + k], strides_of(n + k, orders[n + k])};
    if (s.rhs < 0) return lower_step(la, nullptr, ld, p->net.extents);
    const auto b = static_cast<std::size_t>(s.rhs);
    labelled_layout lb{labels[b], strides_of(b, orders[b])};
    return lower_step(la, &lb, ld, p->net.extents);
  }
};

order_t row_major(const std::vector<label_t>& l) {
  order_t o;
  for (auto it = l.rbegin(); it != l.rend(); ++it)
    if (!has(o, *it)) o.push_back(*it);
  return o;
}

order_t column_major(const std::vector<label_t>& l) {
  order_t o;
  for (label_t x : l)
    if (!has(o, x)) o.push_back(x);
  return o;
}

std::vector<order_t> planned_orders(const analysis& an) {
  const problem& p = *an.p;
  const std::size_t steps = p.tree.steps.size();
  std::vector<std::optional<order_t>> fixed(an.n + steps);
  for (std::size_t i = 0; i < an.n; ++i) fixed[i] = row_major(*an.labels[i]);
  if (steps > 0) fixed[an.n + steps - 1] = row_major(p.net.output);
  std::vector<std::size_t> by_cost(steps);
  for (std::size_t k = 0; k < steps; ++k) by_cost[k] = k;
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](std::size_t x, std::size_t y) { return an.madds[x] > an.madds[y]; });
  for (std::size_t k : by_cost) {
    const step& s = p.tree.steps[k];
    if (s.rhs < 0) continue;
    const std::size_t ids[3] = {static_cast<std::size_t>(s.lhs), static_cast<std::size_t>(s.rhs), an.n + k};
    // Each group's inner order: from the first fixed operand that holds the group.
    std::map<int, order_t> inner;
    for (int g : {g_batch, g_m, g_n, g_k}) {
      for (std::size_t id : ids) {
        if (!fixed[id]) continue;
        order_t o;
        for (label_t x : *fixed[id])
          if (an.group_at(k, x) == g) o.push_back(x);
        if (!o.empty()) {
          inner[g] = o;
          break;
        }
      }
    }
    const int arrangement[3][3] = {{g_m, g_k, g_batch}, {g_k, g_n, g_batch}, {g_m, g_n, g_batch}};
    for (int which = 0; which < 3; ++which) {
      const std::size_t id = ids[which];
      if (fixed[id]) continue;
      const std::vector<label_t>& l = *an.labels[id];
      // the operand's other step: its producer when it is this step's input, else its consumer
      const int other = which < 2 ? an.producer[id] : an.consumer[id];
      auto other_group = [&](label_t x) { return other >= 0 ? an.group_at(static_cast<std::size_t>(other), x) : 0; };
      // Candidates: the three groups in any arrangement whose fastest group GEMM can take (not
      // batch), and inside each group not yet ordered, the modes sorted by their group at the other
      // step in any order of those groups. Kept: the one under which the most of the other step's
      // groups are contiguous in this operand (the first such, the default arrangement first).
      int groups[3] = {arrangement[which][0], arrangement[which][1], arrangement[which][2]};
      std::sort(groups, groups + 3);
      int rank[5] = {0, 1, 2, 3, 4};
      order_t best;
      int best_score = -1;
      auto consider = [&](const int* arr) {
        order_t o;
        for (int i = 0; i < 3; ++i) {
          const int g = arr[i];
          order_t part;
          if (inner.count(g)) {
            for (label_t x : inner[g])
              if (has(l, x)) part.push_back(x);
          } else {
            for (label_t x : column_major(l))
              if (an.group_at(k, x) == g) part.push_back(x);
            std::stable_sort(part.begin(), part.end(), [&](label_t x, label_t y) { return rank[other_group(x)] < rank[other_group(y)]; });
          }
          o.insert(o.end(), part.begin(), part.end());
        }
        for (label_t x : column_major(l))
          if (!has(o, x)) o.push_back(x);
        if (o.empty() || an.group_at(k, o.front()) == g_batch) {
          if (!o.empty() && o.size() != static_cast<std::size_t>(std::count_if(o.begin(), o.end(), [&](label_t x) { return an.group_at(k, x) == g_batch; })))
            return;  // a batch mode fastest: no GEMM
        }
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
      // the default arrangement and default ranks first
      consider(arrangement[which]);
      do {
        std::sort(rank, rank + 5);
        do {
          consider(groups);
        } while (std::next_permutation(rank, rank + 5));
      } while (std::next_permutation(groups, groups + 3));
      for (int g : {g_batch, g_m, g_n, g_k})
        if (!inner.count(g)) {
          order_t part;
          for (label_t x : best)
            if (an.group_at(k, x) == g) part.push_back(x);
          if (!part.empty()) inner[g] = part;  // the next free operand holding the group takes the same order
        }
      fixed[id] = best;
    }
  }
  std::vector<order_t> out(an.n + steps);
  for (std::size_t id = 0; id < out.size(); ++id) out[id] = fixed[id] ? *fixed[id] : column_major(*an.labels[id]);
  return out;
}

struct tally {
  int heavy = 0, gemm = 0;
  double heavy_madds = 0, gemm_madds = 0;
  std::string which;
};

void count(const analysis& an, std::size_t k, const lowered_step& l, double min_madds, tally& t) {
  if (l.kind != lowered_kind::contraction || an.madds[k] < min_madds) return;
  ++t.heavy;
  t.heavy_madds += an.madds[k];
  if (lower_to_gemm(l)) {
    ++t.gemm;
    t.gemm_madds += an.madds[k];
    t.which += " " + std::to_string(k);
  }
}

void print(const char* name, const tally& t) {
  std::printf("  %-8s %d of %d heavy steps one GEMM as they lie (%.0f%% of their multiply-adds)%s%s\n", name, t.gemm, t.heavy,
              t.heavy_madds > 0 ? 100.0 * t.gemm_madds / t.heavy_madds : 0.0, t.which.empty() ? "" : ": steps", t.which.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  double min_madds = 1e9;
  bool explain = false;
  int first = 1;
  while (first < argc && argv[first][0] == '-') {
    const std::string a = argv[first];
    if (a == "--explain") {
      explain = true;
      ++first;
    } else if (a == "--min-madds" && first + 1 < argc) {
      min_madds = std::atof(argv[first + 1]);
      first += 2;
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: %s [--min-madds X] [--explain] FILE.json...\n", argv[0]);
    return 2;
  }
  for (int f = first; f < argc; ++f) {
    problem p = load_file(argv[f], load_options{});
    p.type = dtype::f32;
    const analysis an(p);
    std::printf("%s (steps of at least %.3g multiply-adds)\n", argv[f], min_madds);
    for (const auto& [pol, name] : {std::pair{layout_policy::column_major, "column"}, std::pair{layout_policy::row_major, "row"},
                                    std::pair{layout_policy::follow, "follow"}}) {
      options opt;
      opt.intermediate_layout = pol;
      const step_plan sp = plan_steps(p, opt);
      tally t;
      for (std::size_t k = 0; k < sp.lowered.size(); ++k) count(an, k, sp.lowered[k], min_madds, t);
      print(name, t);
    }
    {  // the same lowering path on column-major orders: must agree with plan_steps' column line
      std::vector<order_t> col(an.labels.size());
      for (std::size_t id = 0; id < col.size(); ++id) col[id] = id < an.n ? row_major(*an.labels[id]) : column_major(*an.labels[id]);
      if (!p.tree.steps.empty()) col.back() = row_major(p.net.output);
      tally c;
      for (std::size_t k = 0; k < p.tree.steps.size(); ++k) count(an, k, an.lowered(k, col), min_madds, c);
      print("column'", c);
    }
    const std::vector<order_t> orders = planned_orders(an);
    tally t;
    for (std::size_t k = 0; k < p.tree.steps.size(); ++k) count(an, k, an.lowered(k, orders), min_madds, t);
    print("planned", t);
    if (explain) {  // each heavy step under the planned orders: its operands, and which groups lie contiguous in each
      for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
        const step& st = p.tree.steps[k];
        if (st.rhs < 0 || an.madds[k] < min_madds) continue;
        std::printf("    step %zu (%.3g):", k, an.madds[k]);
        const std::size_t ids[3] = {static_cast<std::size_t>(st.lhs), static_cast<std::size_t>(st.rhs), an.n + k};
        const char* names[3] = {"A", "B", "D"};
        for (int w = 0; w < 3; ++w) {
          const std::size_t id = ids[w];
          const int from = w < 2 ? an.producer[id] : an.consumer[id];
          std::printf(" %s(%s%d):", names[w], w < 2 ? (from < 0 ? "input" : "step ") : (from < 0 ? "result" : "to step "), from < 0 ? 0 : from);
          const char* gn = "bmnkr";
          for (int g = 0; g < 5; ++g) {
            std::vector<std::size_t> at;
            for (std::size_t i = 0; i < orders[id].size(); ++i)
              if (an.group_at(k, orders[id][i]) == g) at.push_back(i);
            if (at.empty()) continue;
            std::printf(" %c%zu%s", gn[g], at.size(), at.back() - at.front() + 1 == at.size() ? "" : "(split)");
          }
        }
        std::printf("  %s\n", lower_to_gemm(an.lowered(k, orders)) ? "GEMM" : "no GEMM");
      }
    }
  }
  return 0;
}
