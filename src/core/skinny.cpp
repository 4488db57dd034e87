#include "core/skinny.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>

namespace tnrt {
namespace {

std::int64_t stride_of(const strided_operand& o, std::int32_t mode, bool* present) {
  for (std::size_t i = 0; i < o.modes.size(); ++i)
    if (o.modes[i] == mode) {
      if (present != nullptr) *present = true;
      return o.strides[i];
    }
  if (present != nullptr) *present = false;
  return 0;
}

std::int64_t elements_of(const strided_operand& o) {
  std::int64_t e = 1;
  for (std::int64_t x : o.extents) e *= x;
  return e;
}

std::int64_t span_of(const strided_operand& o) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < o.extents.size(); ++i) last += (o.extents[i] - 1) * o.strides[i];
  return last + 1;
}

struct mode_info {
  std::int64_t extent, big, small, d;
};

// All offsets of a set of modes, first mode slowest (the order does not matter to the kernel).
template <class F>
void enumerate(const std::vector<mode_info>& modes, F&& visit) {
  std::vector<std::int64_t> idx(modes.size(), 0);
  while (true) {
    std::int64_t big = 0, small = 0, d = 0;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      big += idx[i] * modes[i].big;
      small += idx[i] * modes[i].small;
      d += idx[i] * modes[i].d;
    }
    visit(big, small, d);
    std::size_t i = modes.size();
    while (i > 0) {
      --i;
      if (++idx[i] < modes[i].extent) break;
      idx[i] = 0;
      if (i == 0) return;
    }
    if (modes.empty()) return;
  }
}

}  // namespace

bool describe_skinny(const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d,
                     skinny_record& out, const skinny_limits& limits) {
  if (s.kind != lowered_kind::contraction) return false;
  const bool a_small = elements_of(s.a) <= elements_of(s.b);
  const strided_operand& big = a_small ? s.b : s.a;
  const strided_operand& small = a_small ? s.a : s.b;
  const std::int64_t small_span = span_of(small);
  if (small_span * static_cast<std::int64_t>(element_bytes) > limits.max_small_bytes) return false;

  std::int32_t max_mode = -1;
  for (const strided_operand* o : {&s.a, &s.b, &s.d})
    for (std::int32_t m : o->modes) max_mode = std::max(max_mode, m);
  std::vector<mode_info> outer, ms, ks;
  for (std::int32_t m = 0; m <= max_mode; ++m) {
    bool in_big = false, in_small = false, in_d = false;
    const std::int64_t sb = stride_of(big, m, &in_big), ss = stride_of(small, m, &in_small), sd = stride_of(s.d, m, &in_d);
    std::int64_t extent = 1;
    for (const strided_operand* o : {&s.a, &s.b, &s.d})
      for (std::size_t i = 0; i < o->modes.size(); ++i)
        if (o->modes[i] == m) extent = o->extents[i];
    if (extent == 1 || (!in_big && !in_small && !in_d)) continue;
    const mode_info info{extent, sb, ss, sd};
    if (in_d && in_big) {
      outer.push_back(info);
    } else if (in_d) {
      ms.push_back(info);
    } else {
      ks.push_back(info);
    }
  }
  // Outer modes by the result's stride (consecutive threads write consecutive elements), then merged
  // where they are contiguous in all three operands.
  std::stable_sort(outer.begin(), outer.end(), [](const mode_info& x, const mode_info& y) { return x.d < y.d; });
  std::vector<mode_info> merged;
  for (const mode_info& m : outer) {
    if (!merged.empty()) {
      mode_info& p = merged.back();
      if (m.d == p.d * p.extent && m.big == p.big * p.extent && m.small == p.small * p.extent) {
        p.extent *= m.extent;
        continue;
      }
    }
    merged.push_back(m);
  }
  std::int64_t outer_count = 1, m_count = 1, k_count = 1;
  for (const auto& m : merged) outer_count *= m.extent;
  for (const auto& m : ms) m_count *= m.extent;
  for (const auto& m : ks) k_count *= m.extent;
  if (static_cast<int>(merged.size()) > skinny_max_outer || m_count > skinny_max_m || k_count > skinny_max_k ||
      outer_count < limits.min_outer)
    return false;

  // The record keeps D's m offsets in 32 bits (Small's fit: it is at most max_small_bytes).
  std::int64_t max_m_d = 0;
  for (const auto& m : ms) max_m_d += (m.extent - 1) * m.d;
  if (max_m_d > std::numeric_limits<std::int32_t>::max()) return false;

  skinny_record r;
  r.big = a_small ? b : a;
  r.small = a_small ? a : b;
  r.d = d;
  r.outer_count = outer_count;
  r.small_span = small_span;
  r.n_outer = static_cast<std::int32_t>(merged.size());
  for (std::size_t i = 0; i < merged.size(); ++i) {
    r.outer_extent[i] = merged[i].extent;
    r.outer_big[i] = merged[i].big;
    r.outer_small[i] = merged[i].small;
    r.outer_d[i] = merged[i].d;
  }
  r.m_count = static_cast<std::int32_t>(m_count);
  std::int64_t min_m_d = INT64_MAX, min_outer_d = INT64_MAX;
  for (const auto& m : ms) min_m_d = std::min(min_m_d, m.d);
  for (const auto& m : merged) min_outer_d = std::min(min_outer_d, m.d);
  r.m_fast = !ms.empty() && min_m_d < min_outer_d;
  r.k_count = static_cast<std::int32_t>(k_count);
  int i = 0;
  enumerate(ms, [&](std::int64_t, std::int64_t sm, std::int64_t dd) {
    r.m_small[i] = static_cast<std::int32_t>(sm);
    r.m_d[i] = static_cast<std::int32_t>(dd);
    ++i;
  });
  i = 0;
  enumerate(ks, [&](std::int64_t bg, std::int64_t sm, std::int64_t) {
    r.k_big[i] = bg;
    r.k_small[i] = static_cast<std::int32_t>(sm);
    ++i;
  });
  out = r;
  return true;
}

template <class T>
void evaluate_skinny(const skinny_record& r) {
  const T* big = static_cast<const T*>(r.big);
  const T* small = static_cast<const T*>(r.small);
  T* d = static_cast<T*>(r.d);
  for (std::int64_t j = 0; j < r.outer_count; ++j) {
    std::int64_t rest = j, ob = 0, os = 0, od = 0;
    for (int g = 0; g < r.n_outer; ++g) {
      const std::int64_t x = rest % r.outer_extent[g];
      rest /= r.outer_extent[g];
      ob += x * r.outer_big[g];
      os += x * r.outer_small[g];
      od += x * r.outer_d[g];
    }
    for (int m = 0; m < r.m_count; ++m) {
      T acc{};
      for (int k = 0; k < r.k_count; ++k) acc += big[ob + r.k_big[k]] * small[os + r.m_small[m] + r.k_small[k]];
      d[od + r.m_d[m]] = acc;
    }
  }
}

template void evaluate_skinny<float>(const skinny_record&);
template void evaluate_skinny<double>(const skinny_record&);
template void evaluate_skinny<std::complex<float>>(const skinny_record&);
template void evaluate_skinny<std::complex<double>>(const skinny_record&);

}  // namespace tnrt
