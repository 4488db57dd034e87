// How many of a network's compute-heavy steps could be one GEMM as they lie if each intermediate
// had a mode order of its own, against the three whole-network layouts (column, row, follow).
// Host-only analysis for the "intermediate mode orders per step" item of docs/design.md's Next:
// nothing here runs or changes tnrt's engine. Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/mode_orders.cpp build/libtnrt_core.a -o /tmp/mode_orders
//   /tmp/mode_orders [--min-madds X] [--explain] FILE.json...
//
// "planned" is core's planned_strides (src/core/mode_orders.hpp: the greedy pass, heaviest step
// first). "column'" re-lowers column-major orders through this tool's own path, as a check that it
// agrees with plan_steps' column line. Every step is lowered (core lower_step) and checked with core
// lower_to_gemm, exactly as compiled programs check it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gemm_lowering.hpp"
#include "core/mode_orders.hpp"
#include "core/step_lowering.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"

namespace {
using namespace tnrt;
using order_t = std::vector<label_t>;  // an operand's labels, fastest first

bool has(const std::vector<label_t>& v, label_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// tree_roles (core/mode_orders.hpp) with the lowering of a step under given strides.
struct analysis : tree_roles {
  explicit analysis(const problem& pr) : tree_roles(pr) {}
  [[nodiscard]] double madds(std::size_t k) const { return multiply_adds[k]; }

  [[nodiscard]] lowered_step lowered_with(std::size_t k, const std::vector<std::vector<std::int64_t>>& st) const {
    const step& s = p->tree.steps[k];
    const auto a = static_cast<std::size_t>(s.lhs);
    const labelled_layout la{&labels[a], st[a]};
    const labelled_layout ld{&labels[inputs + k], st[inputs + k]};
    if (s.rhs < 0) return lower_step(la, nullptr, ld, p->net.extents);
    const auto b = static_cast<std::size_t>(s.rhs);
    const labelled_layout lb{&labels[b], st[b]};
    return lower_step(la, &lb, ld, p->net.extents);
  }
};

// An operand's distinct labels by increasing stride (fastest first).
order_t order_of(const std::vector<label_t>& l, const std::vector<std::int64_t>& st) {
  std::vector<std::size_t> pos(l.size());
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = i;
  std::stable_sort(pos.begin(), pos.end(), [&](std::size_t x, std::size_t y) { return st[x] < st[y]; });
  order_t o;
  for (std::size_t i : pos)
    if (!has(o, l[i])) o.push_back(l[i]);
  return o;
}

struct tally {
  int heavy = 0, gemm = 0;
  double heavy_madds = 0, gemm_madds = 0;
  std::string which;
};

void count(const analysis& an, std::size_t k, const lowered_step& l, double min_madds, tally& t) {
  if (l.kind != lowered_kind::contraction || an.madds(k) < min_madds) return;
  ++t.heavy;
  t.heavy_madds += an.madds(k);
  if (lower_to_gemm(l)) {
    ++t.gemm;
    t.gemm_madds += an.madds(k);
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
    {  // the same lowering path on column-major intermediates: must agree with plan_steps' column line
      std::vector<std::vector<std::int64_t>> col(an.labels.size());
      for (std::size_t id = 0; id < col.size(); ++id)
        col[id] = dense_strides(p.net.shape_of(an.labels[id]), id >= an.inputs && id + 1 < col.size());
      tally c;
      for (std::size_t k = 0; k < p.tree.steps.size(); ++k) count(an, k, an.lowered_with(k, col), min_madds, c);
      print("column'", c);
    }
    const std::vector<std::vector<std::int64_t>> planned = planned_strides(p);  // core/mode_orders
    tally t;
    for (std::size_t k = 0; k < p.tree.steps.size(); ++k) count(an, k, an.lowered_with(k, planned), min_madds, t);
    print("planned", t);
    if (explain) {  // each heavy step under the planned orders: its operands, and which groups lie contiguous in each
      for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
        const step& st = p.tree.steps[k];
        if (st.rhs < 0 || an.madds(k) < min_madds) continue;
        std::printf("    step %zu (%.3g):", k, an.madds(k));
        const std::size_t ids[3] = {static_cast<std::size_t>(st.lhs), static_cast<std::size_t>(st.rhs), an.inputs + k};
        const char* names[3] = {"A", "B", "D"};
        for (int w = 0; w < 3; ++w) {
          const std::size_t id = ids[w];
          const int from = w < 2 ? an.producer(id) : an.consumer[k];
          std::printf(" %s(%s%d):", names[w], w < 2 ? (from < 0 ? "input" : "step ") : (from < 0 ? "result" : "to step "), from < 0 ? 0 : from);
          const char* gn = "bmnkr";
          for (int g = 0; g < 5; ++g) {
            std::vector<std::size_t> at;
            const order_t o = order_of(an.labels[id], planned[id]);
            for (std::size_t i = 0; i < o.size(); ++i)
              if (an.group_at(k, o[i]) == g) at.push_back(i);
            if (at.empty()) continue;
            std::printf(" %c%zu%s", gn[g], at.size(), at.back() - at.front() + 1 == at.size() ? "" : "(split)");
          }
        }
        std::printf("  %s\n", lower_to_gemm(an.lowered_with(k, planned)) ? "GEMM" : "no GEMM");
      }
    }
  }
  return 0;
}
