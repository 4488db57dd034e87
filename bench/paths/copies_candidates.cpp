// Which steps of a network's tree are compute-heavy and no GEMM as they lie, and what
// lower_to_gemm_with_copies would copy for them, under each intermediate layout, without a GPU:
// per step of at least 1e9 multiply-adds, its kernel by rule, whether it is one GEMM as it lies, and
// the copied operands with each operand's element count; and first the arena the tree's buffers
// need under the static memory plan (core tree_liveness and plan_memory, inputs outside it, without
// the steps' workspaces, which compiled programs plan into the same arena): a step's copies may take
// at most the arena (src/cuda/compiled.cpp, try_copies; half of it until 2026-12-04). Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/copies_candidates.cpp build/libtnrt_core.a -o /tmp/copies_candidates
//   /tmp/copies_candidates FILE.json...
#include <cstdio>
#include <string>
#include <vector>

#include "core/gemm_lowering.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/memory_plan.hpp"

int main(int argc, char** argv) {
  using namespace tnrt;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.json...\n", argv[0]);
    return 2;
  }
  for (int f = 1; f < argc; ++f) {
    problem p = load_file(argv[f], load_options{});
    p.type = dtype::f32;
    const memory_plan arena = plan_memory(tree_liveness(p, false).requests);
    std::printf("%s: tree arena %.3f GiB (f32, without workspaces)\n", argv[f], static_cast<double>(arena.arena_bytes) / 1073741824.0);
    for (const layout_policy pol : all_layouts) {
      const std::string name(name_of(pol));
      options opt;
      opt.intermediate_layout = pol;
      const step_plan sp = plan_steps(p, opt);
      std::printf("  layout %s\n", name.c_str());
      for (std::size_t k = 0; k < sp.lowered.size(); ++k) {
        const lowered_step& l = sp.lowered[k];
        if (l.kind != lowered_kind::contraction) continue;
        double madds = 1;  // the product of the extents of every mode of the step
        std::vector<std::int32_t> seen;
        for (const strided_operand* o : {&l.a, &l.b, &l.d})
          for (std::size_t i = 0; i < o->modes.size(); ++i) {
            bool known = false;
            for (std::int32_t m : seen) known = known || m == o->modes[i];
            if (!known) {
              seen.push_back(o->modes[i]);
              madds *= static_cast<double>(o->extents[i]);
            }
          }
        if (madds < 1e9) continue;
        const auto c = lower_to_gemm_with_copies(l);
        std::printf("    step %zu: %.3g multiply-adds, kernel %s, one GEMM as it lies: %s", k, madds, name_of(sp.kernel[k]),
                    lower_to_gemm(l) ? "yes" : "no");
        if (c)
          std::printf("; with copies of%s%s%s (elements A %lld, B %lld, D %lld; %.1f multiply-adds per copied element)", c->copied[0] ? " A" : "",
                      c->copied[1] ? " B" : "", c->copied[2] ? " D" : "", static_cast<long long>(c->elements[0]),
                      static_cast<long long>(c->elements[1]), static_cast<long long>(c->elements[2]), c->multiply_adds() / c->copied_elements());
        std::printf("\n");
      }
    }
  }
  return 0;
}
