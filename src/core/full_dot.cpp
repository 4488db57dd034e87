#include "core/full_dot.hpp"

#include <algorithm>
#include <bit>
#include <complex>
#include <limits>
#include <vector>

namespace tnrt {

bool describe_full_dot(const lowered_step& s, full_dot_record& out) {
  if (s.kind != lowered_kind::contraction) return false;
  if (std::any_of(s.d.extents.begin(), s.d.extents.end(), [](std::int64_t e) { return e != 1; })) return false;
  struct mode_info {
    std::int32_t mode;
    std::int64_t extent, a, b;
  };
  std::vector<mode_info> modes;
  const auto add = [&](const strided_operand& o, bool is_a) {
    for (std::size_t i = 0; i < o.modes.size(); ++i) {
      if (o.extents[i] == 1) continue;
      auto it = std::find_if(modes.begin(), modes.end(), [&](const mode_info& m) { return m.mode == o.modes[i]; });
      if (it == modes.end()) it = modes.insert(modes.end(), mode_info{o.modes[i], o.extents[i], 0, 0});
      (is_a ? it->a : it->b) = o.strides[i];
    }
  };
  add(s.a, true);
  add(s.b, false);
  if (modes.size() > static_cast<std::size_t>(full_dot_max_modes)) return false;
  // A's largest stride first (B's as the tie-break), so the last mode is A's fastest.
  std::stable_sort(modes.begin(), modes.end(), [](const mode_info& x, const mode_info& y) { return x.a != y.a ? x.a > y.a : x.b > y.b; });
  full_dot_record r;
  r.n = static_cast<std::int32_t>(modes.size());
  std::int64_t count = 1;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    if (count > std::numeric_limits<std::int64_t>::max() / 4 / modes[m].extent) return false;
    count *= modes[m].extent;
    r.extent[m] = modes[m].extent;
    r.a_stride[m] = modes[m].a;
    r.b_stride[m] = modes[m].b;
  }
  r.count = count;
  // Dense in this order, in both operands alike: term i is element i of each.
  bool contiguous = true;
  std::int64_t dense = 1;
  for (int m = r.n - 1; m >= 0; --m) {
    const auto u = static_cast<std::size_t>(m);
    contiguous = contiguous && r.a_stride[u] == dense && r.b_stride[u] == dense;
    dense *= r.extent[u];
  }
  r.contiguous = contiguous ? 1 : 0;
  bool pow2 = true;
  int bits = 0;
  for (int m = r.n - 1; m >= 0 && pow2; --m) {
    const auto u = static_cast<std::size_t>(m);
    const auto e = static_cast<std::uint64_t>(r.extent[u]);
    pow2 = std::has_single_bit(e);
    r.shift[u] = static_cast<std::uint8_t>(bits);
    bits += std::countr_zero(e);
  }
  if (!pow2) std::fill(std::begin(r.shift), std::end(r.shift), std::uint8_t{0});
  r.pow2 = pow2 ? 1 : 0;
  const std::int64_t per_block = std::int64_t{full_dot_threads} * full_dot_terms_per_thread;
  r.blocks = static_cast<std::int32_t>(std::clamp<std::int64_t>((count + per_block - 1) / per_block, 1, full_dot_max_blocks));
  out = r;
  return true;
}

template <class T>
void evaluate_full_dot(const full_dot_record& r, const T* a, const T* b, T* d) {
  T acc{};
  for (std::int64_t i = 0; i < r.count; ++i) {
    std::int64_t ao = 0, bo = 0;
    full_dot_offsets(r, i, ao, bo);
    acc += a[ao] * b[bo];
  }
  *d = acc;
}

template void evaluate_full_dot<float>(const full_dot_record&, const float*, const float*, float*);
template void evaluate_full_dot<double>(const full_dot_record&, const double*, const double*, double*);
template void evaluate_full_dot<std::complex<float>>(const full_dot_record&, const std::complex<float>*, const std::complex<float>*,
                                                     std::complex<float>*);
template void evaluate_full_dot<std::complex<double>>(const full_dot_record&, const std::complex<double>*, const std::complex<double>*,
                                                      std::complex<double>*);

}  // namespace tnrt
