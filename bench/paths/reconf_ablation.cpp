// auto's search settings on a set of networks, without a GPU: for each file, the path search (seed 0,
// 16 trials, no time bound) under the calibrated cost model with subtrees of up to 8 leaves
// reconfigured, with up to 10, and as auto runs it (10 leaves and the roofline's search beside).
// Prints a Markdown table: model ms (the calibrated model), tc / sc and search seconds of each.
// Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/reconf_ablation.cpp build/libtnrt_core.a -o /tmp/reconf
//   /tmp/reconf data/tensornetwork_permutation_optimized.json bench/suites/families/*.json
#include <cstdio>
#include <string>

#include "tnrt/formats.hpp"
#include "tnrt/search.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.json...\n", argv[0]);
    return 2;
  }
  std::printf("| network | 8 leaves: model ms, tc / sc, s | 10 leaves | auto (10 leaves + roofline search) |\n|---|---|---|---|\n");
  for (int i = 1; i < argc; ++i) {
    const tnrt::problem p = tnrt::load_file(argv[i], {});
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("| %s |", name.c_str());
    for (int variant = 0; variant < 3; ++variant) {
      tnrt::search_options o = tnrt::automatic_search_options(p.type);
      o.max_seconds = 0;
      o.reconf_leaves = variant == 0 ? 8 : 10;
      o.roofline_search = variant == 2;
      const tnrt::search_result r = tnrt::search_path(p.net, o);
      std::printf(" %.3f, %.2f / %.2f, %.2f |", r.predicted_seconds * 1e3, r.log2_flops, r.log2_largest, r.seconds);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
