#include "core/fusion.hpp"

#include <algorithm>
#include <bit>
#include <complex>
#include <limits>

#include "core/small_step_index.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/memory_plan.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {

bool fusion_plan::is_root(int step) const {
  for (std::size_t s = 0; s < subtrees(); ++s)
    if (absorbed[static_cast<std::size_t>(subtree_begin[s + 1] - 1)] == step) return true;
  return false;
}

fusion_plan plan_fusion(const problem& p, const fusion_limits& limits) {
  const std::size_t n = p.net.inputs.size();
  const std::size_t steps = p.tree.steps.size();
  const auto labels = operand_labels(p.net, p.tree);
  auto elements = [&](int id) { return element_count(p.net.shape_of(labels[static_cast<std::size_t>(id)])); };

  // small[k]: step k and everything below it fit (leaves are inputs); count[k]: steps in its subtree.
  std::vector<char> small(steps, 0);
  std::vector<int> count(steps, 0);
  auto child_small = [&](int id) { return id < 0 || static_cast<std::size_t>(id) < n || small[static_cast<std::size_t>(id) - n] != 0; };
  auto child_count = [&](int id) { return (id < 0 || static_cast<std::size_t>(id) < n) ? 0 : count[static_cast<std::size_t>(id) - n]; };
  for (std::size_t k = 0; k < steps; ++k) {
    const step& s = p.tree.steps[k];
    const bool fits = elements(s.lhs) <= limits.max_elements && (s.rhs < 0 || elements(s.rhs) <= limits.max_elements) &&
                      elements(static_cast<int>(n + k)) <= limits.max_elements &&
                      (limits.step_fits == nullptr || (k < limits.step_fits->size() && (*limits.step_fits)[k] != 0));
    small[k] = (fits && child_small(s.lhs) && child_small(s.rhs)) ? 1 : 0;
    count[k] = 1 + child_count(s.lhs) + child_count(s.rhs);
  }
  const std::vector<int> consumer = step_consumers(p.net, p.tree);

  fusion_plan f;
  f.is_absorbed.assign(steps, 0);
  f.subtree_begin.push_back(0);
  std::vector<int> root_of(steps, -1), level_of(steps, 0);
  for (std::size_t k = 0; k < steps; ++k) {
    if (small[k] == 0) continue;
    const int c = consumer[k];
    const bool maximal = c < 0 || small[static_cast<std::size_t>(c)] == 0;
    if (maximal && count[k] >= limits.min_subtree_steps) root_of[k] = static_cast<int>(k);
  }
  // Collect each root's subtree in post-order.
  for (std::size_t r = 0; r < steps; ++r) {
    if (root_of[r] < 0) continue;
    std::vector<int> stack{static_cast<int>(r)}, order;
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      order.push_back(k);
      for (int id : {p.tree.steps[static_cast<std::size_t>(k)].lhs, p.tree.steps[static_cast<std::size_t>(k)].rhs})
        if (id >= 0 && static_cast<std::size_t>(id) >= n) stack.push_back(id - static_cast<int>(n));
    }
    std::sort(order.begin(), order.end());  // step ids are topological: children first
    std::vector<std::pair<int, int>> by_level;  // (level, step)
    for (int k : order) {
      int lv = 0;
      for (int id : {p.tree.steps[static_cast<std::size_t>(k)].lhs, p.tree.steps[static_cast<std::size_t>(k)].rhs})
        if (id >= 0 && static_cast<std::size_t>(id) >= n)
          lv = std::max(lv, 1 + level_of[static_cast<std::size_t>(id) - n]);
      level_of[static_cast<std::size_t>(k)] = lv;
      by_level.emplace_back(lv, k);
    }
    std::sort(by_level.begin(), by_level.end());  // the root, alone on the top level, stays last
    for (const auto& [lv, k] : by_level) {
      f.absorbed.push_back(k);
      f.level.push_back(lv);
      f.is_absorbed[static_cast<std::size_t>(k)] = 1;
    }
    f.subtree_begin.push_back(static_cast<int>(f.absorbed.size()));
  }
  for (std::size_t k = 0; k < steps; ++k)
    if (f.is_absorbed[k] == 0) f.library_steps.push_back(static_cast<int>(k));
  return f;
}

fusion_plan no_fusion(std::size_t steps) {
  fusion_plan f;
  f.subtree_begin.push_back(0);
  f.is_absorbed.assign(steps, 0);
  for (std::size_t k = 0; k < steps; ++k) f.library_steps.push_back(static_cast<int>(k));
  return f;
}

bool describe_small_step(const lowered_step& s, const void* a, const void* b, void* d, small_step_record& out, bool stage) {
  small_step_record r;
  r.a = a;
  r.b = s.kind == lowered_kind::contraction ? b : nullptr;
  r.d = d;
  constexpr std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  auto stride_in = [](const strided_operand& o, std::int32_t mode) -> std::int64_t {
    for (std::size_t i = 0; i < o.modes.size(); ++i)
      if (o.modes[i] == mode) return o.strides[i];
    return 0;
  };
  auto extent_of = [&](std::int32_t mode) -> std::int64_t {
    for (const strided_operand* o : {&s.a, &s.b, &s.d})
      for (std::size_t i = 0; i < o->modes.size(); ++i)
        if (o->modes[i] == mode) return o->extents[i];
    return 1;
  };
  std::int32_t max_mode = -1;
  for (const strided_operand* o : {&s.a, &s.b, &s.d})
    for (std::int32_t m : o->modes) max_mode = std::max(max_mode, m);
  std::int64_t out_count = 1, sum_count = 1;
  // Output modes in D's order, the innermost (smallest D stride) last so that consecutive threads
  // write consecutive elements.
  std::vector<std::int32_t> out_modes(s.d.modes.begin(), s.d.modes.end());
  std::stable_sort(out_modes.begin(), out_modes.end(), [&](std::int32_t x, std::int32_t y) { return stride_in(s.d, x) > stride_in(s.d, y); });
  for (std::int32_t m : out_modes) {
    const std::int64_t e = extent_of(m);
    if (e == 1) continue;  // extent-1 modes never move an offset
    if (r.n_out == small_step_max_modes) return false;
    const auto i = static_cast<std::size_t>(r.n_out++);
    r.out_extent[i] = static_cast<std::int32_t>(e);
    const std::int64_t sa = stride_in(s.a, m), sb = r.b != nullptr ? stride_in(s.b, m) : 0, sd = stride_in(s.d, m);
    if (std::max({sa, sb, sd, e}) > limit) return false;
    r.out_a[i] = static_cast<std::int32_t>(sa);
    r.out_b[i] = static_cast<std::int32_t>(sb);
    r.out_d[i] = static_cast<std::int32_t>(sd);
    out_count *= e;
  }
  for (std::int32_t m = 0; m <= max_mode; ++m) {
    if (std::find(s.d.modes.begin(), s.d.modes.end(), m) != s.d.modes.end()) continue;
    const std::int64_t e = extent_of(m);
    if (e == 1) continue;
    if (r.n_sum == small_step_max_modes) return false;
    const auto i = static_cast<std::size_t>(r.n_sum++);
    r.sum_extent[i] = static_cast<std::int32_t>(e);
    const std::int64_t sa = stride_in(s.a, m), sb = r.b != nullptr ? stride_in(s.b, m) : 0;
    if (std::max({sa, sb, e}) > limit) return false;
    r.sum_a[i] = static_cast<std::int32_t>(sa);
    r.sum_b[i] = static_cast<std::int32_t>(sb);
    sum_count *= e;
  }
  if (out_count > limit || sum_count > limit) return false;
  r.out_count = static_cast<std::int32_t>(out_count);
  r.sum_count = static_cast<std::int32_t>(sum_count);
  // Power-of-two extents: each mode's digit is a shift and a mask (small_step_index.hpp).
  const auto shifts_of = [](const std::int32_t* extent, int n, std::uint8_t* shift) {
    int bits = 0;
    for (int i = n - 1; i >= 0; --i) {
      const auto e = static_cast<std::uint32_t>(extent[i]);
      if (!std::has_single_bit(e)) return false;
      shift[i] = static_cast<std::uint8_t>(bits);
      bits += std::countr_zero(e);
    }
    return true;
  };
  // The operands' spans, for staging (a view with a negative stride is read in place).
  std::int64_t a_span = 1, b_span = r.b != nullptr ? 1 : 0;
  bool forward = true;
  for (int i = 0; i < r.n_out; ++i) {
    a_span += std::int64_t{r.out_extent[i] - 1} * r.out_a[i];
    if (r.b != nullptr) b_span += std::int64_t{r.out_extent[i] - 1} * r.out_b[i];
    forward = forward && r.out_a[i] >= 0 && r.out_b[i] >= 0;
  }
  for (int i = 0; i < r.n_sum; ++i) {
    a_span += std::int64_t{r.sum_extent[i] - 1} * r.sum_a[i];
    if (r.b != nullptr) b_span += std::int64_t{r.sum_extent[i] - 1} * r.sum_b[i];
    forward = forward && r.sum_a[i] >= 0 && r.sum_b[i] >= 0;
  }
  if (stage && forward && a_span <= small_step_stage_elements && b_span <= small_step_stage_elements) {
    r.a_span = static_cast<std::int32_t>(a_span);
    r.b_span = static_cast<std::int32_t>(b_span);
  }
  if (shifts_of(r.out_extent, r.n_out, r.out_shift) && shifts_of(r.sum_extent, r.n_sum, r.sum_shift)) {
    r.pow2 = 1;
  } else {
    std::fill(std::begin(r.out_shift), std::end(r.out_shift), std::uint8_t{0});
    std::fill(std::begin(r.sum_shift), std::end(r.sum_shift), std::uint8_t{0});
  }
  out = r;
  return true;
}

void group_small_steps(const fusion_plan& f, std::vector<small_step_record>& records, bool together) {
  if (records.size() != f.absorbed.size()) throw internal_error("group_small_steps: one record per absorbed step");
  for (auto& r : records) r.group_left = 1;
  if (!together) return;
  for (std::size_t t = 0; t < f.subtrees(); ++t) {
    const auto e = static_cast<std::size_t>(f.subtree_begin[t + 1]);
    std::size_t i = static_cast<std::size_t>(f.subtree_begin[t]);
    while (i < e) {
      std::size_t j = i + 1;
      std::int64_t outputs = records[i].out_count;
      if (records[i].a_span == 0) {
        while (j < e && f.level[j] == f.level[i] && records[j].a_span == 0 &&
               j - i < static_cast<std::size_t>(small_step_group_max) &&
               outputs + records[j].out_count <= small_step_group_outputs) {
          outputs += records[j].out_count;
          ++j;
        }
      }
      for (std::size_t x = i; x < j; ++x) records[x].group_left = static_cast<std::int32_t>(j - x);
      i = j;
    }
  }
}

fusion_scratch plan_fusion_scratch(const fusion_plan& f, const std::vector<int>& consumer,
                                   const std::function<std::size_t(int)>& bytes_of, std::size_t alignment) {
  if (alignment == 0) throw internal_error("plan_fusion_scratch: alignment 0");
  const std::size_t steps = f.is_absorbed.size();
  fusion_scratch out;
  out.offset.assign(steps, 0);
  std::vector<int> position(steps, -1);
  for (std::size_t i = 0; i < f.absorbed.size(); ++i)
    position[static_cast<std::size_t>(f.absorbed[i])] = static_cast<int>(i);
  for (std::size_t t = 0; t < f.subtrees(); ++t) {
    const auto b = static_cast<std::size_t>(f.subtree_begin[t]), e = static_cast<std::size_t>(f.subtree_begin[t + 1]);
    std::vector<buffer_request> local;
    std::vector<int> local_step;
    for (std::size_t i = b; i + 1 < e; ++i) {  // the root (last) is the caller's
      const auto k = static_cast<std::size_t>(f.absorbed[i]);
      const int c = consumer[k];
      if (c < 0 || position[static_cast<std::size_t>(c)] < 0)
        throw internal_error("plan_fusion_scratch: a non-root absorbed step is consumed outside its subtree");
      // Live from its level to its consumer's: the closed intervals of a step's result and of what
      // any step of the same level reads meet on that level, so they never share bytes.
      local.push_back(buffer_request{bytes_of(static_cast<int>(k)), f.level[i],
                                     f.level[static_cast<std::size_t>(position[static_cast<std::size_t>(c)])]});
      local_step.push_back(static_cast<int>(k));
    }
    const memory_plan lp = plan_memory(local, alignment);
    for (std::size_t j = 0; j < local.size(); ++j)
      out.offset[static_cast<std::size_t>(local_step[j])] = out.bytes + lp.offsets[j];
    out.bytes += (lp.arena_bytes + alignment - 1) / alignment * alignment;
  }
  return out;
}

template <class T>
void evaluate_small_step(const small_step_record& r) {
  const T* a = static_cast<const T*>(r.a);
  const T* b = static_cast<const T*>(r.b);
  T* d = static_cast<T*>(r.d);
  for (std::int32_t o = 0; o < r.out_count; ++o) {
    std::int64_t ao = 0, bo = 0, dof = 0;
    small_step_index::out_offsets(r, o, ao, bo, dof);
    T acc{};
    for (std::int32_t k = 0; k < r.sum_count; ++k) {
      std::int64_t ak = 0, bk = 0;
      small_step_index::sum_offsets(r, k, ak, bk);
      acc += b != nullptr ? a[ao + ak] * b[bo + bk] : a[ao + ak];
    }
    d[dof] = acc;
  }
}

template void evaluate_small_step<float>(const small_step_record&);
template void evaluate_small_step<double>(const small_step_record&);
template void evaluate_small_step<std::complex<float>>(const small_step_record&);
template void evaluate_small_step<std::complex<double>>(const small_step_record&);

bool grid_step_fits(const small_step_record& r, const grid_step_limits& limits) {
  if (r.a_span != 0 || r.b_span != 0) return false;
  const std::int64_t outs = r.out_count, madds = outs * static_cast<std::int64_t>(r.sum_count);
  return outs >= 1 && outs <= limits.max_outputs && madds <= limits.max_madds && r.sum_count <= limits.max_sum;
}

std::vector<std::pair<int, int>> plan_grid_runs(const std::vector<char>& fits, int min_run) {
  std::vector<std::pair<int, int>> runs;
  const int n = static_cast<int>(fits.size());
  for (int i = 0; i < n;) {
    if (fits[static_cast<std::size_t>(i)] == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < n && fits[static_cast<std::size_t>(j)] != 0) ++j;
    if (j - i >= std::max(min_run, 1)) runs.emplace_back(i, j);
    i = j;
  }
  return runs;
}

}  // namespace tnrt
