// Grid runs counted on plans (no GPU): of the steps a compiled program leaves to the library (tree
// order, after today's fused launch), the maximal runs of at least two consecutive steps of at most
// O result elements and M multiply-adds (options::grid_step_max_outputs / _max_madds), and the launches
// left when each run is one launch. It ignores what timing would put on the tiled kernel or cuBLAS
// (those steps end a run) and the 12-mode limit of a record.
//   grid_runs NETWORK.json
#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "core/fusion.hpp"
#include "tnrt/formats.hpp"

using namespace tnrt;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  load_options lo;
  const problem p = load_file(argv[1], lo);
  const std::size_t n_in = p.net.inputs.size();
  auto labels = [&](int id) -> const std::vector<label_t>& {
    return id < static_cast<int>(n_in) ? p.net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n_in].out;
  };
  const fusion_plan today = plan_fusion(p, fusion_limits{1024, 2});
  const std::size_t lib = today.library_steps.size();
  std::printf("%s: %zu steps, %zu library steps, %zu launches today\n", argv[1], p.tree.steps.size(), lib, lib + (today.absorbed.empty() ? 0 : 1));
  for (const auto& [outs, madds] : std::vector<std::pair<double, double>>{{1 << 12, 1 << 16}, {1 << 16, 1 << 20}, {1 << 18, 1 << 22}, {1 << 20, 1 << 24}}) {
    std::vector<char> fits;
    for (int k : today.library_steps) {
      const step& s = p.tree.steps[static_cast<std::size_t>(k)];
      std::set<label_t> all(labels(s.lhs).begin(), labels(s.lhs).end());
      if (s.rhs >= 0) all.insert(labels(s.rhs).begin(), labels(s.rhs).end());
      for (label_t l : s.out) all.erase(l);
      double sum = 1;
      for (label_t l : all) sum *= static_cast<double>(p.net.extents[static_cast<std::size_t>(l)]);
      const double o = p.net.elements_of(s.out);
      fits.push_back(o <= outs && o * sum <= madds ? 1 : 0);
    }
    const auto runs = plan_grid_runs(fits, 2);
    std::size_t in_runs = 0;
    for (const auto& [b, e] : runs) in_runs += static_cast<std::size_t>(e - b);
    const std::size_t launches = lib - in_runs + runs.size() + (today.absorbed.empty() ? 0 : 1);
    std::printf("  at most %7.0f outputs, %9.0f multiply-adds: %3zu steps in %2zu runs, %3zu launches\n", outs, madds, in_runs, runs.size(), launches);
  }
  return 0;
}
