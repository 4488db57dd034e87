// The heavy steps of a tree (a path given as a linear path file, or the file's own tree): per step
// of at least 2^30 multiply-adds or 1 GB moved, the ranks of its operands and result, its
// multiply-adds and bytes (f32), and the multiply-adds per element moved, which tnrt's cost model
// prices at the GEMM peak. Used to see why the model misjudges a path (docs/design.md, Next).
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/step_stats.cpp build/libtnrt_core.a -o /tmp/step_stats
//   /tmp/step_stats NETWORK.json [PATH.json]
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>

#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: step_stats NETWORK.json [PATH.json]\n");
    return 2;
  }
  try {
    tnrt::problem p = tnrt::load_file(argv[1], {});
    if (argc > 2) p.tree = tnrt::tree_from_linear_path(p.net, tnrt::load_linear_path_file(argv[2]));
    const auto& net = p.net;
    const std::size_t n = net.inputs.size();
    auto labels_of = [&](int id) -> const std::vector<tnrt::label_t>& {
      return static_cast<std::size_t>(id) < n ? net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n].out;
    };
    auto elements_of = [&](const std::vector<tnrt::label_t>& labels) {
      double e = 1;
      for (auto l : labels) e *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
      return e;
    };
    double total_bytes = 0, worst_intensity = 0;
    for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
      const auto& s = p.tree.steps[k];
      const double moved = elements_of(s.out) + elements_of(labels_of(s.lhs)) + (s.rhs >= 0 ? elements_of(labels_of(s.rhs)) : 0);
      std::map<tnrt::label_t, int> all;  // every label of the step once: the multiply-adds are their extents' product
      for (auto l : labels_of(s.lhs)) all[l] = 1;
      if (s.rhs >= 0)
        for (auto l : labels_of(s.rhs)) all[l] = 1;
      double macs = 1;
      for (const auto& [l, one] : all) macs *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
      total_bytes += moved * 4;
      worst_intensity = std::max(worst_intensity, macs / moved);
      if (macs >= 1073741824.0 || moved * 4 >= 1e9)
        std::printf("step %4zu: ranks %2zu x %2zu -> %2zu, 2^%.1f multiply-adds, %.3g GB, %.1f multiply-adds per element moved\n", k,
                    labels_of(s.lhs).size(), s.rhs >= 0 ? labels_of(s.rhs).size() : std::size_t{0}, s.out.size(), std::log2(macs),
                    moved * 4 / 1e9, macs / moved);
    }
    std::printf("all steps: %.3g GB moved (f32); the most multiply-adds per element moved of any step: %.1f\n", total_bytes / 1e9, worst_intensity);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_stats: %s\n", e.what());
    return 1;
  }
  return 0;
}
