#include <cstdio>
#include <cstdlib>
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
#include "core/step_plan.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  load_options lo;
  problem p = load_file(argv[1], lo);
  for (long fm : {1024L, 4096L, 16384L, 65536L, 262144L}) {
    options o; o.fuse_max_elements = fm; o.intermediate_layout = layout_policy::column_major;
    step_plan pl = plan_steps(p, o);
    std::printf("fuse-max %ld: fused %zu in %zu subtrees, library %zu, tiled %zu\n", fm, pl.count(step_kernel::fused), pl.fusion.subtrees(), pl.count(step_kernel::library), pl.count(step_kernel::tiled));
  }
}
