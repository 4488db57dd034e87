#include <cstdio>
#include <functional>
#include <string>
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"
int main(int argc, char** argv) {
  using namespace tnrt;
  for (int f = 1; f < argc; ++f) {
    problem p = load_file(argv[f], load_options{});
    for (layout_policy pol : all_layouts) {
      options o; o.intermediate_layout = pol;
      std::vector<std::vector<std::int64_t>> in;
      for (int variant = 0; variant < 2; ++variant) {
        const step_plan sp = variant == 0 ? plan_steps(p, o) : [&] {
          in.clear();
          for (const auto& l : p.net.inputs) in.push_back(dense_strides(p.net.shape_of(l), true));
          const auto fin = dense_strides(p.net.shape_of(p.net.output), true);
          return plan_steps(p, o, &in, &fin);
        }();
        std::string s;
        for (const auto& st : sp.strides) { for (auto x : st) s += std::to_string(x) + ","; s += ";"; }
        for (const auto& l : sp.lowered) { for (auto x : l.key()) s += std::to_string(x) + ","; s += "|"; }
        for (auto k : sp.kernel) s += char('0' + int(k));
        for (int k : sp.fusion.absorbed) s += std::to_string(k) + ".";
        std::printf("%s %s %d %zx\n", argv[f], std::string(name_of(pol)).c_str(), variant, std::hash<std::string>{}(s));
      }
    }
  }
}
