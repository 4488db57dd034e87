#include "core/full_dot.hpp"

#include <algorithm>
#include <bit>
#include <complex>
#include <limits>
#include <vector>

namespace tnrt {

namespace {

// Tiles for a full dot whose operands lie in different orders (full_dot_record::tile_n): the tile's
// modes are A's fastest, then B's fastest not yet in it, until each covers full_dot_run elements.
// No tiles when they would hold more than full_dot_tile_max terms, when offsets inside a tile need
// more than 31 bits, or when there would be fewer than 8 tiles (term by term keeps more blocks).
void plan_tiles(full_dot_record& r) {
  std::vector<int> tile;
  const auto in_tile = [&](int m) { return std::find(tile.begin(), tile.end(), m) != tile.end(); };
  std::int64_t run = 1;
  for (int m = r.n - 1; m >= 0 && run < full_dot_run; --m) {
    if (r.a_stride[m] == 0) continue;
    tile.push_back(m);
    run *= r.extent[m];
  }
  std::vector<int> by_b;
  for (int m = 0; m < r.n; ++m)
    if (r.b_stride[m] != 0) by_b.push_back(m);
  std::stable_sort(by_b.begin(), by_b.end(), [&](int x, int y) { return r.b_stride[x] < r.b_stride[y]; });
  run = 1;
  for (int m : by_b) {
    if (run >= full_dot_run) break;
    if (!in_tile(m)) tile.push_back(m);
    run *= r.extent[m];
  }
  std::int64_t tile_count = 1, span_a = 0, span_b = 0;
  for (int m : tile) {
    tile_count *= r.extent[m];
    span_a += (r.extent[m] - 1) * r.a_stride[m];
    span_b += (r.extent[m] - 1) * r.b_stride[m];
  }
  constexpr std::int64_t offset_limit = std::numeric_limits<std::int32_t>::max();
  if (tile.size() < 2 || tile_count > full_dot_tile_max || span_a > offset_limit || span_b > offset_limit || r.count < 8 * tile_count) return;
  std::sort(tile.begin(), tile.end());  // A's order
  r.tile_n = static_cast<std::int32_t>(tile.size());
  r.tile_count = static_cast<std::int32_t>(tile_count);
  std::int32_t weight = 1;
  for (int j = r.tile_n - 1; j >= 0; --j) {
    const auto u = static_cast<std::size_t>(j);
    r.tile_a[u] = static_cast<std::int8_t>(tile[u]);
    r.tile_weight[tile[u]] = weight;
    weight *= static_cast<std::int32_t>(r.extent[tile[u]]);
  }
  std::vector<int> tile_b = tile;
  std::stable_sort(tile_b.begin(), tile_b.end(), [&](int x, int y) { return r.b_stride[x] > r.b_stride[y]; });
  for (std::size_t j = 0; j < tile_b.size(); ++j) r.tile_b[j] = static_cast<std::int8_t>(tile_b[j]);
  r.outer_n = 0;
  for (int m = 0; m < r.n; ++m)
    if (!in_tile(m)) r.outer[r.outer_n++] = static_cast<std::int8_t>(m);
  r.outer_count = r.count / tile_count;
  r.blocks = static_cast<std::int32_t>(std::min<std::int64_t>(r.outer_count, full_dot_tile_blocks));
  if (r.pow2 != 0) {  // each order's digits as shifts, its last mode fastest
    const auto shifts = [&](const std::int8_t* modes, int n, std::uint8_t* shift) {
      int bits = 0;
      for (int j = n - 1; j >= 0; --j) {
        shift[j] = static_cast<std::uint8_t>(bits);
        bits += std::countr_zero(static_cast<std::uint64_t>(r.extent[modes[j]]));
      }
    };
    shifts(r.tile_a, r.tile_n, r.tile_a_shift);
    shifts(r.tile_b, r.tile_n, r.tile_b_shift);
    shifts(r.outer, r.outer_n, r.outer_shift);
  }
}

}  // namespace

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
  if (!contiguous) plan_tiles(r);
  out = r;
  return true;
}

full_dot_grid full_dot_grid_of(const full_dot_record& r, std::size_t element_bytes) {
  full_dot_grid g;
  g.blocks = r.blocks;
  if (r.tile_n == 0 || r.tile_count <= 0) return g;
  const std::int64_t fit = std::max<std::int64_t>(1, static_cast<std::int64_t>(full_dot_group_bytes / element_bytes) / r.tile_count);
  const std::int64_t want = (r.outer_count + full_dot_tile_blocks - 1) / full_dot_tile_blocks;
  if (want < full_dot_group_rounds) return g;
  g.group = static_cast<std::int32_t>(std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(fit, full_dot_max_group)));
  g.blocks = static_cast<std::int32_t>(std::min<std::int64_t>((r.outer_count + g.group - 1) / g.group, full_dot_tile_blocks));
  return g;
}

template <class T>
void evaluate_full_dot(const full_dot_record& r, const T* a, const T* b, T* d) {
  T acc{};
  if (r.tile_n > 0) {
    std::vector<T> b_in_a_order(static_cast<std::size_t>(r.tile_count));
    for (std::int64_t u = 0; u < r.outer_count; ++u) {
      std::int64_t ba = 0, bb = 0;
      full_dot_tile_base(r, u, ba, bb);
      for (std::int32_t q = 0; q < r.tile_count; ++q) {
        std::int32_t off = 0, slot = 0;
        full_dot_tile_b(r, q, off, slot);
        b_in_a_order.at(static_cast<std::size_t>(slot)) = b[bb + off];
      }
      for (std::int32_t p = 0; p < r.tile_count; ++p) acc += a[ba + full_dot_tile_a(r, p)] * b_in_a_order[static_cast<std::size_t>(p)];
    }
    *d = acc;
    return;
  }
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
