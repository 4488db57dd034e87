// Launch counts of a memory-bound network under today's fused launch and under level-wide launches of
// small steps anywhere in the tree (a plan count, no GPU): what the next fusion would have to reach.
//   level_launches NETWORK.json [copy GB/s] [µs a launch]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/fusion.hpp"
#include "tnrt/formats.hpp"

using namespace tnrt;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const double gbps = argc > 2 ? std::atof(argv[2]) : 4253.0;  // 2026-12-07d-h200-show's copy bandwidth
  const double launch_us = argc > 3 ? std::atof(argv[3]) : 4.2;  // its cheapest launch beyond its bytes
  load_options lo;
  const problem p = load_file(argv[1], lo);
  const std::size_t n_in = p.net.inputs.size(), n = p.tree.steps.size();
  auto labels = [&](int id) -> const std::vector<label_t>& {
    return id < static_cast<int>(n_in) ? p.net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n_in].out;
  };
  std::vector<double> largest(n), bytes(n);
  std::vector<int> level(n, 0);
  double total_bytes = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const step& s = p.tree.steps[k];
    const double a = p.net.elements_of(labels(s.lhs)), b = s.rhs >= 0 ? p.net.elements_of(labels(s.rhs)) : 0;
    const double o = p.net.elements_of(s.out);
    largest[k] = std::max({a, b, o});
    bytes[k] = (a + b + o) * static_cast<double>(size_of(p.type));
    total_bytes += bytes[k];
    for (int id : {s.lhs, s.rhs})
      if (id >= static_cast<int>(n_in)) level[k] = std::max(level[k], level[static_cast<std::size_t>(id) - n_in] + 1);
  }
  const double floor_ms = total_bytes / (gbps * 1e6);
  const fusion_plan today = plan_fusion(p, fusion_limits{1024, 2});
  const std::size_t today_launches = today.library_steps.size() + (today.absorbed.empty() ? 0 : 1);
  std::printf("%s: %zu steps, byte floor %.4f ms at %.0f GB/s; today's plan (leaf subtrees of at most 1024 elements in one launch): %zu launches, at best %.2fx the floor at %.1f us a launch\n",
              argv[1], n, floor_ms, gbps, today_launches, (floor_ms + today_launches * launch_us * 1e-3) / floor_ms, launch_us);
  // Level-wide: today's leaf subtrees stay in their one launch; every other step whose operands and
  // result hold at most T elements, anywhere in the tree, runs in one launch per level (all such steps of
  // a level together); every other step is a launch of its own.
  std::vector<char> absorbed(n, 0);
  for (int k : today.absorbed) absorbed[static_cast<std::size_t>(k)] = 1;
  for (double t : {1024.0, 16384.0, 262144.0, 1048576.0}) {
    std::map<int, int> small_levels;
    std::size_t big = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (absorbed[k]) continue;
      if (largest[k] <= t) {
        ++small_levels[level[k]];
      } else {
        ++big;
      }
    }
    const std::size_t launches = (today.absorbed.empty() ? 0 : 1) + big + small_levels.size();
    std::printf("  level-wide at %8.0f elements: %3zu launches (%zu levels of small steps, %zu other steps), at best %.2fx the floor\n", t, launches,
                small_levels.size(), big, (floor_ms + launches * launch_us * 1e-3) / floor_ms);
  }
  return 0;
}
