// Each chain record plan_chains makes (every network given, four layouts, 4/8/16-byte elements), hashed:
// one line per network, layout and element size: chains found and an FNV-1a hash of their records.
#include <cstdio>
#include <cstring>
#include <string>
#include "core/chain.hpp"
#include "core/step_plan.hpp"
#include "tnrt/options.hpp"
#include "tnrt/formats.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    for (layout_policy lay : {layout_policy::column_major, layout_policy::row_major, layout_policy::follow, layout_policy::planned}) {
      load_options lo; problem p = load_file(argv[a], lo);
      options o; o.intermediate_layout = lay;
      const step_plan sp = plan_steps(p, o);
      std::vector<std::uint8_t> el(p.tree.steps.size(), 1);
      for (int eb : {4, 8, 16}) {
        auto cs = plan_chains(p, sp.strides, el, eb);
        unsigned long long h = 1469598103934665603ULL;
        for (auto& c : cs) { auto* b = reinterpret_cast<const unsigned char*>(&c.rec); for (size_t i = 0; i < sizeof c.rec; ++i) h = (h ^ b[i]) * 1099511628211ULL; }
        std::printf("%s %d %d %zu %llx\n", argv[a], int(lay), eb, cs.size(), h);
      }
    }
  }
}
