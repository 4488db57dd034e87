#include <cstdio>
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
#include "core/step_plan.hpp"
#include "core/fusion.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  load_options lo;
  problem p = load_file(argv[1], lo);
  options o; o.fuse_max_elements = 16384;
  step_plan pl = plan_steps(p, o);
  fusion_plan f = plan_fusion(p, fusion_limits{16384, 2});
  small_step_record probe;
  for (int k : f.absorbed) if (!describe_small_step(pl.lowered[k], nullptr, nullptr, nullptr, probe)) {
    const auto& s = pl.lowered[k]; long long e=1; for (auto x : s.d.extents) e*=x;
    std::printf("step %d: d modes %zu (%lld elements), a modes %zu, b modes %zu\n", k, s.d.modes.size(), e, s.a.modes.size(), s.b.modes.size()); break; }
}
