// The search's objective on a set of networks, without a GPU: for each file, the given path's cost
// model time, and the path search (seed 0, N trials, no time bound) scored three ways: by the model
// with flop reconfiguration first (the default), by the model alone, and by multiply-adds. Prints a
// Markdown table (tc, sc, model ms, search s). Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/objective_ablation.cpp build/libtnrt_core.a -o /tmp/ablation
//   /tmp/ablation 32 data/tensornetwork_permutation_optimized.json bench/suites/families/*.json
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TRIALS FILE.json...\n", argv[0]);
    return 2;
  }
  const int trials = std::atoi(argv[1]);
  std::printf("| network | given tc / sc, model ms | model, flops first | model alone | flops objective | "
              "model, flops first, no partitioning |\n|---|---|---|---|---|---|\n");
  for (int i = 2; i < argc; ++i) {
    const tnrt::problem p = tnrt::load_file(argv[i], {});
    const tnrt::cost_model cm = tnrt::cost_model::for_dtype(p.type);
    const tnrt::tree_cost given = tnrt::cost_of(p.net, p.tree);
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("| %s | %.2f / %.2f, %.3f |", name.c_str(), given.log2_tc, given.log2_sc, tnrt::predicted_seconds(p.net, p.tree, cm) * 1e3);
    for (int variant = 0; variant < 4; ++variant) {
      tnrt::search_options o;
      o.model = cm;
      o.max_seconds = 0;
      o.max_trials = trials;
      o.objective = variant == 2 ? tnrt::search_objective::flops : tnrt::search_objective::model;
      o.flops_first = variant == 0 || variant == 3;
      o.partition_trials = variant != 3;
      const auto t0 = std::chrono::steady_clock::now();
      const tnrt::search_result r = tnrt::search_path(p.net, o);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf(" %.2f / %.2f, %.3f (%.2f s) |", r.log2_flops, r.log2_largest, r.predicted_seconds * 1e3, s);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
