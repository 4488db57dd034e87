#include <algorithm>
#include <cstdio>
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"
#include "core/step_plan.hpp"
using namespace tnrt;
double old_of(const lowered_step& low) {
  std::vector<std::int32_t> seen; double n = 1;
  for (const strided_operand* o : {&low.a, &low.b, &low.d})
    for (std::size_t i = 0; i < o->modes.size(); ++i) {
      if (std::find(seen.begin(), seen.end(), o->modes[i]) != seen.end()) continue;
      seen.push_back(o->modes[i]); n *= static_cast<double>(o->extents[i]); }
  return n;
}
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    load_options lo; problem p = load_file(argv[i], lo);
    auto m = step_multiply_adds(p.net, p.tree);
    int bad = 0, tot = 0;
    for (layout_policy l : all_layouts) {
      options o; o.intermediate_layout = l;
      step_plan plan = plan_steps(p, o);
      for (std::size_t k = 0; k < plan.lowered.size(); ++k) {
        if (plan.lowered[k].kind != lowered_kind::contraction) continue;
        ++tot; if (old_of(plan.lowered[k]) != m[k]) ++bad;
      }
    }
    std::printf("%s: %d of %d contraction steps differ\n", argv[i], bad, tot);
  }
}
