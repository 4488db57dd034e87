#include <cstdio>
#include <cstdlib>
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
#include "core/step_plan.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  load_options lo;
  problem p = load_file(argv[1], lo);
  options o;
  std::string lay = argc > 2 ? argv[2] : "row";
  o.intermediate_layout = lay == "row" ? layout_policy::row_major : lay == "follow" ? layout_policy::follow : lay == "planned" ? layout_policy::planned : layout_policy::column_major;
  step_plan pl = plan_steps(p, o);
  for (size_t k = 0; k < pl.kernel.size(); ++k) {
    const auto& s = pl.lowered[k];
    long long outn = 1; for (auto e : s.d.extents) outn *= e;
    std::printf("step %zu %s out=%lld\n", k, name_of(pl.kernel[k]), outn);
    if (argc > 3 && std::atoi(argv[3]) == (int)k) {
      auto pr = [](const char* n, const strided_operand& o) { std::printf("  %s:", n); for (size_t i = 0; i < o.modes.size(); ++i) std::printf(" m%d[%lld s%lld]", o.modes[i], (long long)o.extents[i], (long long)o.strides[i]); std::printf("\n"); };
      pr("A", s.a); pr("B", s.b); pr("D", s.d);
    }
  }
}
