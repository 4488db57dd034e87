// The fused launch's subtrees on the host (plan_steps under the planned layout): per network, the
// subtrees, their most levels, and the longest sum one thread does in turn over a subtree (per
// level, the level's result elements dealt over 256 threads, times the level's longest sum; summed
// over the levels), from each absorbed step's small_step_record; and the largest scratch of one
// subtree (plan_fusion_scratch on that subtree alone, in the network's dtype).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/fusion.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
using namespace tnrt;

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    load_options lo;
    const problem p = load_file(argv[i], lo);
    options o;
    o.intermediate_layout = layout_policy::planned;
    const step_plan pl = plan_steps(p, o);
    const fusion_plan& f = pl.fusion;
    const std::size_t el = size_of(p.type);
    int most_levels = 0;
    long long longest = 0;
    std::size_t scratch = 0;
    for (std::size_t t = 0; t < f.subtrees(); ++t) {
      const int b = f.subtree_begin[t], e = f.subtree_begin[t + 1];
      std::vector<long long> outs, sums;
      for (int j = b; j < e; ++j) {
        small_step_record r;
        if (!describe_small_step(pl.lowered[static_cast<std::size_t>(f.absorbed[j])], nullptr, nullptr, nullptr, r)) continue;
        const auto lv = static_cast<std::size_t>(f.level[j]);
        if (outs.size() <= lv) outs.resize(lv + 1, 0), sums.resize(lv + 1, 0);
        outs[lv] += r.out_count;
        sums[lv] = std::max<long long>(sums[lv], r.sum_count);
      }
      long long serial = 0;
      for (std::size_t lv = 0; lv < outs.size(); ++lv) serial += (outs[lv] + 255) / 256 * sums[lv];
      most_levels = std::max(most_levels, static_cast<int>(outs.size()));
      longest = std::max(longest, serial);
      fusion_plan one = f;
      one.subtree_begin = {b, e};
      const fusion_scratch fs = plan_fusion_scratch(
          one, pl.consumer,
          [&](int k) {
            std::size_t n = 1;
            for (auto x : pl.lowered[static_cast<std::size_t>(k)].d.extents) n *= static_cast<std::size_t>(x);
            return n * el;
          },
          16);
      scratch = std::max(scratch, fs.bytes);
    }
    std::printf("%-42s %s absorbed %4zu subtrees %3zu most levels %3d longest sum a thread %4lld largest scratch %6zu B\n",
                std::strrchr(argv[i], '/') + 1, std::string(name_of(p.type)).c_str(), f.absorbed.size(), f.subtrees(), most_levels, longest,
                scratch);
  }
}
