#include "core/step_plan.hpp"

#include <algorithm>

#include "core/mode_orders.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {

const char* name_of(step_kernel k) noexcept {
  switch (k) {
    case step_kernel::fused: return "fused";
    case step_kernel::tiled: return "tiled";
    case step_kernel::library: return "library";
    case step_kernel::copy: return "copy";
  }
  return "?";
}

std::size_t step_plan::count(step_kernel k) const noexcept { return static_cast<std::size_t>(std::count(kernel.begin(), kernel.end(), k)); }

std::vector<std::vector<std::int64_t>> input_strides(const problem& p, const std::vector<std::vector<std::int64_t>>* given) {
  std::vector<std::vector<std::int64_t>> strides(p.net.inputs.size() + p.tree.steps.size());
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i)
    strides[i] = given != nullptr ? (*given)[i] : row_major_strides(p.net.shape_of(p.net.inputs[i]));
  return strides;
}

lowered_step lower_tree_step(const options& opt, const problem& p, std::size_t k, std::vector<std::vector<std::int64_t>>& strides,
                             const std::vector<std::int64_t>* final_strides) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  auto labels_of = [&](int id) -> const std::vector<label_t>& {
    return static_cast<std::size_t>(id) < n ? net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n].out;
  };
  const step& s = p.tree.steps[k];
  const labelled_layout la{&labels_of(s.lhs), strides[static_cast<std::size_t>(s.lhs)]};
  labelled_layout lb;
  if (s.rhs >= 0) lb = labelled_layout{&labels_of(s.rhs), strides[static_cast<std::size_t>(s.rhs)]};
  const bool last = k + 1 == p.tree.steps.size();
  if (!strides[n + k].empty()) {
    // chosen over the whole tree already (the planned layout)
  } else if (last && final_strides != nullptr) {
    strides[n + k] = *final_strides;
  } else {
    strides[n + k] = choose_result_strides(s.out, la, s.rhs >= 0 ? &lb : nullptr, net.extents, last ? layout_policy::row_major : opt.intermediate_layout);
  }
  const labelled_layout ld{&s.out, strides[n + k]};
  return lower_step(la, s.rhs >= 0 ? &lb : nullptr, ld, net.extents);
}

fusion_plan fusion_of(const options& opt, const problem& p, const std::vector<lowered_step>& lowered) {
  const std::size_t steps = p.tree.steps.size();
  if (!opt.fuse_small_steps) return no_fusion(steps);
  small_step_record probe;
  std::vector<char> fits;
  fits.reserve(lowered.size());
  for (const lowered_step& s : lowered) fits.push_back(describe_small_step(s, nullptr, nullptr, nullptr, probe) ? 1 : 0);
  fusion_limits lim{opt.fuse_max_elements, 2};
  lim.step_fits = &fits;
  fusion_plan f = plan_fusion(p, lim);
  return f.subtrees() > 0 ? f : no_fusion(steps);
}

tiled_limits tiled_limits_of(const options& opt) {
  tiled_limits l;
  l.min_d_elements = opt.tiled_min_elements;
  l.table_results = opt.tiled_table;  // for compiled's alternatives (describe_tiled_for turns it off)
  return l;
}

bool describe_tiled_for(const options& opt, const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                        tiled_record& out) {
  tiled_limits l = tiled_limits_of(opt);
  l.table_results = false;  // the rule takes the register layouts; compiled times the table's
  tiled_record rec;
  if (!describe_tiled(s, element_bytes, a, b, d, rec, l)) return false;
  if (opt.tiled_max_intensity > 0) {
    double d_elements = 1, big_elements = 1;
    for (std::int64_t e : s.d.extents) d_elements *= static_cast<double>(e);
    for (std::int64_t e : (rec.small_is_a != 0 ? s.b : s.a).extents) big_elements *= static_cast<double>(e);
    if (static_cast<double>(rec.k_count) * d_elements / (d_elements + big_elements) > opt.tiled_max_intensity) return false;
  }
  // Many contracted combinations: vector loads of a result's values beat the 16-byte copies
  // (measured on the reference network's steps, docs/results.md), unless a vector layout of the
  // results applies.
  if (rec.k_count >= 8 && rec.vec_kind == tiled_scalar) {
    l.contracted_first = true;
    tiled_record alt;
    if (describe_tiled(s, element_bytes, a, b, d, alt, l)) rec = alt;
    out = rec;
    return true;
  }
  // Scalar results where staging D's leading modes first gives runs sharing coefficients: those
  // won (reference step 387: 0.65 ms against 0.77 ms with the scalar layout, compiled timing).
  if (rec.vec_kind == tiled_scalar) {
    l.d_first = true;
    tiled_record alt;
    if (describe_tiled(s, element_bytes, a, b, d, alt, l) && alt.vec_kind == tiled_run_coefs) rec = alt;
  }
  out = rec;
  return true;
}

step_plan plan_steps(const problem& p, const options& opt, const std::vector<std::vector<std::int64_t>>* input_strides_given,
                     const std::vector<std::int64_t>* final_strides) {
  const std::size_t steps = p.tree.steps.size();
  step_plan plan;
  // The planned layout is chosen over the whole tree, every result at once (the inputs and the last
  // step's result as given or row-major, as input_strides and lower_tree_step lay them).
  plan.strides = opt.intermediate_layout == layout_policy::planned ? planned_strides(p, input_strides_given, final_strides)
                                                                   : input_strides(p, input_strides_given);
  if (steps == 0) {
    plan.fusion = no_fusion(0);
    plan.kernel.assign(1, step_kernel::copy);
    return plan;
  }
  plan.lowered.resize(steps);
  for (std::size_t k = 0; k < steps; ++k) plan.lowered[k] = lower_tree_step(opt, p, k, plan.strides, final_strides);
  plan.fusion = fusion_of(opt, p, plan.lowered);
  plan.consumer = step_consumers(p.net, p.tree);
  plan.kernel.assign(steps, step_kernel::library);
  plan.tiled.resize(steps);
  for (int k : plan.fusion.absorbed) plan.kernel[static_cast<std::size_t>(k)] = step_kernel::fused;
  if (opt.tiled_kernel != kernel_choice::never)
    for (int kk : plan.fusion.library_steps) {
      const auto k = static_cast<std::size_t>(kk);
      if (describe_tiled_for(opt, plan.lowered[k], size_of(p.type), nullptr, nullptr, nullptr, plan.tiled[k])) plan.kernel[k] = step_kernel::tiled;
    }
  return plan;
}

}  // namespace tnrt
