#include "core/gemm_route.hpp"

#include <algorithm>
#include <utility>

#include "tnrt/path.hpp"

namespace tnrt {

gemm_routes plan_gemm_routes(const problem& p, const step_plan& plan, const options& opt, dtype t, bool blas_there, const gemm_route_rule& rule) {
  gemm_routes out;
  const std::size_t steps = plan.lowered.size();
  out.route.resize(steps);
  if (plan.kernel.size() != steps) return out;  // the step-less tree: its one entry is a copy
  const bool gemm_on = blas_there && opt.gemm_lowering != kernel_choice::never &&
                       !(opt.compute_precision == precision::tf32x3 && !is_double(t));
  const bool direct_always = gemm_on && opt.gemm_lowering == kernel_choice::always;
  const bool copies_always = gemm_on && opt.gemm_copies == kernel_choice::always;
  // Timed (`learn`) only when neither is `always`: gemm_lowering is then `automatic` (or `never`,
  // with tiled candidates alone), and copies are timed unless gemm_copies is `never`.
  out.learn = !direct_always && !copies_always;
  const bool copies_timed = out.learn && opt.gemm_copies != kernel_choice::never;
  const bool tiled_timed = out.learn && opt.tiled_kernel == kernel_choice::automatic;

  std::vector<int> chosen;
  std::vector<double> tree_madds;  // the tiled candidates' multiply-adds, by step, when there are any
  for (std::size_t k = 0; k < steps; ++k) {
    const lowered_step& low = plan.lowered[k];
    if (plan.kernel[k] == step_kernel::tiled && tiled_timed) {
      gemm_route r;
      r.library = true;
      if (tree_madds.empty()) tree_madds = step_multiply_adds(p.net, p.tree);
      r.multiply_adds = tree_madds[k];
      out.route[k] = std::move(r);
      chosen.push_back(static_cast<int>(k));
      continue;
    }
    if (!gemm_on || plan.kernel[k] != step_kernel::library || low.kind != lowered_kind::contraction) continue;
    gemm_route r;
    if (std::optional<gemm_form> g = lower_to_gemm(low)) {
      r.multiply_adds = static_cast<double>(g->m) * static_cast<double>(g->n) * static_cast<double>(g->k) * static_cast<double>(g->batch);
      const bool take = direct_always || (out.learn && r.multiply_adds >= rule.min_multiply_adds);
      if (!take) continue;
      r.direct = *g;
    } else if (std::optional<gemm_with_copies> c = lower_to_gemm_with_copies(low)) {
      r.multiply_adds = c->multiply_adds();
      const bool take = copies_always || (copies_timed && r.multiply_adds >= rule.min_multiply_adds &&
                                          r.multiply_adds >= rule.copies_min_intensity * c->copied_elements());
      if (!take) continue;
      for (int i = 0; i < 3; ++i)
        if (c->copied[i]) r.copy_steps[i] = gemm_copy_step(low, *c, i);
      r.copies = std::move(*c);
    } else {
      continue;
    }
    out.route[k] = std::move(r);
    chosen.push_back(static_cast<int>(k));
  }
  if (out.learn && chosen.size() > rule.max_candidates) {  // the largest, by multiply-adds (ties: tree order)
    std::stable_sort(chosen.begin(), chosen.end(), [&](int x, int y) {
      return out.route[static_cast<std::size_t>(x)]->multiply_adds > out.route[static_cast<std::size_t>(y)]->multiply_adds;
    });
    for (std::size_t i = rule.max_candidates; i < chosen.size(); ++i) out.route[static_cast<std::size_t>(chosen[i])].reset();
    chosen.resize(rule.max_candidates);
    std::sort(chosen.begin(), chosen.end());
  }
  out.candidates = std::move(chosen);
  return out;
}

}  // namespace tnrt
