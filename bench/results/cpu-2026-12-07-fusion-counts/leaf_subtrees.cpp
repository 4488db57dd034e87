#include <cstdio>
#include "tnrt/formats.hpp"
#include "core/fusion.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  load_options lo;
  problem p = load_file(argv[1], lo);
  std::printf("%s steps %zu:", argv[1], p.tree.steps.size());
  for (long fm : {1024L, 16384L, 262144L, 1L<<20, 1L<<22}) {
    fusion_plan f = plan_fusion(p, fusion_limits{fm, 2});
    std::printf(" %ld:%zu/%zu", fm, f.absorbed.size(), f.library_steps.size());
  }
  std::printf("\n");
}
