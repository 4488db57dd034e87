#include "core/tiled.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "core/tiled_index.hpp"

namespace tnrt {
namespace {

using i64 = std::int64_t;

enum class role : std::uint8_t { free, batch, s_free, contracted };

struct mode_desc {
  i64 extent = 1;
  i64 big = 0, small = 0, d = 0;  // strides (0: absent or broadcast)
  role r = role::free;
};

i64 elements_of(const strided_operand& o) {
  i64 e = 1;
  for (i64 x : o.extents) e *= x;
  return e;
}

i64 span_of(const strided_operand& o) {
  i64 last = 0;
  for (std::size_t i = 0; i < o.extents.size(); ++i) last += (o.extents[i] - 1) * o.strides[i];
  return last + 1;
}

// Stride of `mode` in `o`; `present` says whether o has the mode at all.
i64 stride_of(const strided_operand& o, std::int32_t mode, bool& present) {
  for (std::size_t i = 0; i < o.modes.size(); ++i)
    if (o.modes[i] == mode) {
      present = true;
      return o.strides[i];
    }
  present = false;
  return 0;
}

constexpr i64 int32_max = std::numeric_limits<std::int32_t>::max();

}  // namespace

std::size_t tiled_record::shared_bytes(std::size_t element_bytes) const noexcept {
  return tiled_shared_bytes(tile_big, group, small_span, element_bytes, std::int64_t{table_rows} * tiled_k_max(k_count));
}

namespace {

// The record for `s` with threads holding results as `vec_kind` needs (only the caps on D's tile
// depend on it; the layout itself is classified afterwards by vector_layout). Pointers unbound.
bool plan_tiled(const lowered_step& s, std::size_t element_bytes, const tiled_limits& limits, std::int32_t vec_kind, tiled_record& out) {
  if (s.kind != lowered_kind::contraction) return false;
  const bool a_small = elements_of(s.a) <= elements_of(s.b);
  const strided_operand& big = a_small ? s.b : s.a;
  const strided_operand& small = a_small ? s.a : s.b;
  const auto eb = static_cast<i64>(element_bytes);
  const i64 small_span = span_of(small);
  if (small_span * eb > limits.max_small_bytes || small_span > 0xFFFF) return false;
  if (elements_of(s.d) < limits.min_d_elements) return false;

  std::int32_t max_mode = -1;
  for (const strided_operand* o : {&s.a, &s.b, &s.d})
    for (std::size_t i = 0; i < o->modes.size(); ++i) {
      if (o->strides[i] < 0) return false;
      max_mode = std::max(max_mode, o->modes[i]);
    }
  std::vector<mode_desc> modes;
  for (std::int32_t m = 0; m <= max_mode; ++m) {
    mode_desc md;
    bool in_big = false, in_small = false, in_d = false;
    md.big = stride_of(big, m, in_big);
    md.small = stride_of(small, m, in_small);
    md.d = stride_of(s.d, m, in_d);
    if (!in_big && !in_small && !in_d) continue;
    for (const strided_operand* o : {&s.a, &s.b, &s.d})
      for (std::size_t i = 0; i < o->modes.size(); ++i)
        if (o->modes[i] == m) md.extent = o->extents[i];
    if (md.extent == 1) continue;
    if (in_d && md.d == 0) return false;  // a broadcast result: not a contraction's output
    if (in_d) {
      md.r = md.big != 0 ? (md.small != 0 ? role::batch : role::free) : role::s_free;
    } else {
      md.r = role::contracted;
    }
    modes.push_back(md);
  }

  // The slab's fixed part (batch and contracted modes of Big) and D's (batch and s_free).
  i64 inner_big = 1, inner_d = 1, k_count = 1;
  for (const mode_desc& m : modes) {
    if ((m.r == role::batch || m.r == role::contracted) && m.big != 0) inner_big *= m.extent;
    if (m.r == role::batch || m.r == role::s_free) inner_d *= m.extent;
    if (m.r == role::contracted) k_count *= m.extent;
  }
  const i64 cap_big = tiled_max_tile_big(element_bytes);
  if (k_count > tiled_max_k_for(element_bytes)) return false;
  const int outputs = tiled_outputs_for(element_bytes, tiled_k_max(k_count), vec_kind);
  const i64 max_tile_d = std::min<i64>(limits.max_tile_d, i64{tiled_threads} * outputs);
  // Threads holding more results (run_coefs) take proportionally larger tiles.
  const i64 min_tile_d = limits.min_tile_d * (outputs / tiled_outputs(element_bytes, tiled_k_max(k_count)));

  // The tile's free modes: index into `modes` -> extent taken (a divisor when the mode is split).
  std::map<std::size_t, i64> tile;
  i64 tile_free = 1;
  // Whether a tile with `free` elements of free modes fits the limits (slab, D's tile, shared memory).
  auto fits = [&](i64 free) {
    const i64 tb = inner_big * free, td = inner_d * free;
    return tb <= cap_big && td <= max_tile_d && tiled_shared_bytes(tb, 1, small_span, element_bytes) <= static_cast<std::size_t>(limits.max_shared_bytes);
  };
  if (!fits(1)) return false;
  auto add_free = [&](std::size_t i) -> i64 {
    const i64 e = modes[i].extent;
    // The most the caps leave room for, then the largest divisor of e within it.
    const i64 room_smem = (limits.max_shared_bytes / eb - small_span) / (i64{tiled_stages} * inner_big * tile_free);
    i64 t = std::min({e, cap_big / (inner_big * tile_free), max_tile_d / (inner_d * tile_free), room_smem});
    while (t >= 2 && (e % t != 0 || !fits(tile_free * t))) --t;
    if (t < 2) t = 0;
    if (t != 0) {
      tile[i] = t;
      tile_free *= t;
    }
    return t;
  };
  auto order_by = [&](i64 mode_desc::*stride) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < modes.size(); ++i)
      if (modes[i].*stride != 0) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return modes[x].*stride < modes[y].*stride; });
    return idx;
  };
  const std::vector<std::size_t> big_order = order_by(&mode_desc::big);
  const std::vector<std::size_t> d_order = order_by(&mode_desc::d);
  const i64 target = std::max<i64>(1, (limits.min_contig_bytes + eb - 1) / eb);
  // Big's fastest modes, then D's, inside the tile: both sides move in runs of `target` elements.
  for (const std::vector<std::size_t>* order : {&big_order, &d_order}) {
    i64 run = 1;
    for (std::size_t i : *order) {
      if (run >= target) break;
      const mode_desc& m = modes[i];
      if (m.r != role::free) {
        run *= m.extent;
        continue;
      }
      auto it = tile.find(i);
      const i64 t = it != tile.end() ? it->second : add_free(i);
      if (t == 0) break;
      run *= t;
      if (t < m.extent) break;
    }
  }
  // Then more of Big's free modes until a tile gives every thread a few results (and a few loads in
  // flight: the kernel is bound by the bytes it has in flight).
  for (std::size_t i : big_order) {
    if (inner_d * tile_free >= min_tile_d || inner_big * tile_free >= cap_big) break;
    if (modes[i].r != role::free || tile.count(i) != 0) continue;
    const i64 t = add_free(i);
    if (t == 0 || t < modes[i].extent) break;
  }

  // The slab, in Big's memory order, and each of its modes' weight in a slot.
  struct slab_mode {
    std::size_t i;
    i64 extent, stride;
  };
  // Contracted modes first: a result's k_count slab values are then adjacent in shared memory
  // (one vector load). Copies stay coalesced at the sector level as long as Big's fastest modes
  // follow (consecutive threads cover the contracted combinations, then Big's contiguous run).
  // (Optional, limits.contracted_first: it costs the 16-byte copies whenever Big's fastest modes
  // are not the contracted ones.)
  std::vector<slab_mode> slab;
  std::size_t contracted_in_slab = 0;
  for (std::size_t i : big_order)
    if (modes[i].r == role::contracted) ++contracted_in_slab;
  if (limits.contracted_first)
    for (std::size_t i : big_order)
      if (modes[i].r == role::contracted) slab.push_back({i, modes[i].extent, modes[i].big});
  // D's leading free modes first (limits.d_first): a run of D's results then has adjacent slab
  // values (results in runs sharing coefficients) even where Big's fastest mode is a batch or
  // contracted one; the copies lose 16 bytes' width unless Big's fastest mode leads D too.
  std::vector<char> in_slab(modes.size(), 0);
  if (limits.d_first && !limits.contracted_first) {
    for (std::size_t i : d_order) {
      auto it = tile.find(i);
      if (modes[i].r != role::free || it == tile.end()) break;
      slab.push_back({i, it->second, modes[i].big});
      in_slab[i] = 1;
      if (it->second < modes[i].extent) break;  // D's next mode is not adjacent to a split one
    }
  }
  for (std::size_t i : big_order) {
    const mode_desc& m = modes[i];
    if (in_slab[i] != 0) continue;
    if (m.r == role::free) {
      if (auto it = tile.find(i); it != tile.end()) slab.push_back({i, it->second, m.big});
    } else if (m.r == role::batch || (m.r == role::contracted && !limits.contracted_first)) {
      slab.push_back({i, m.extent, m.big});
    }
  }
  std::vector<i64> slot_weight(modes.size(), 0);
  i64 tile_big = 1, big_reach = 0;
  for (const slab_mode& sm : slab) {
    slot_weight[sm.i] = tile_big;
    tile_big *= sm.extent;
    big_reach += (sm.extent - 1) * sm.stride;
  }

  // D's tile, in D's memory order.
  struct d_mode {
    i64 extent, d, slot, small;
  };
  std::vector<d_mode> dt;
  i64 tile_d = 1, d_reach = 0;
  for (std::size_t i : d_order) {
    const mode_desc& m = modes[i];
    if (m.r == role::free) {
      auto it = tile.find(i);
      if (it == tile.end()) continue;
      dt.push_back({it->second, m.d, slot_weight[i], 0});
    } else {
      dt.push_back({m.extent, m.d, m.r == role::batch ? slot_weight[i] : 0, m.small});
    }
    tile_d *= dt.back().extent;
    d_reach += (dt.back().extent - 1) * m.d;
  }

  bool shared_values = false;
  // Past the first tiled_threads results (one per thread), results of one thread that differ only
  // in s_free modes share their slab values: s_free modes first there, so that the kernel reuses
  // the values it loaded for the previous result.
  {
    i64 lanes = 1;
    std::size_t cut = 0;
    while (cut < dt.size() && lanes < tiled_threads) lanes *= dt[cut++].extent;
    if (lanes == tiled_threads) {
      std::stable_partition(dt.begin() + static_cast<std::ptrdiff_t>(cut), dt.end(), [](const d_mode& m) { return m.slot == 0; });
      shared_values = cut < dt.size() && dt[cut].slot == 0;
    }
  }

  // Contracted modes and the outer groups.
  std::vector<d_mode> ks;  // extent, -, slot, small
  std::vector<mode_desc> outer;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const mode_desc& m = modes[i];
    if (m.r == role::contracted) ks.push_back({m.extent, 0, m.big != 0 ? slot_weight[i] : 0, m.small});
    if (m.r != role::free) continue;
    auto it = tile.find(i);
    if (it == tile.end()) {
      outer.push_back(m);
    } else if (it->second < m.extent) {
      mode_desc rest = m;
      rest.extent = m.extent / it->second;
      rest.big = m.big * it->second;
      rest.d = m.d * it->second;
      outer.push_back(rest);
    }
  }
  std::stable_sort(outer.begin(), outer.end(), [](const mode_desc& x, const mode_desc& y) { return x.d < y.d; });
  std::vector<mode_desc> merged;
  for (const mode_desc& m : outer) {
    if (!merged.empty()) {
      mode_desc& p = merged.back();
      if (m.d == p.d * p.extent && m.big == p.big * p.extent) {
        p.extent *= m.extent;
        continue;
      }
    }
    merged.push_back(m);
  }

  if (static_cast<int>(slab.size()) > tiled_max_modes || static_cast<int>(dt.size()) > tiled_max_modes ||
      static_cast<int>(ks.size()) > tiled_max_modes || static_cast<int>(merged.size()) > tiled_max_outer)
    return false;
  if (big_reach > int32_max || d_reach > int32_max || tile_big > cap_big || tile_d > max_tile_d) return false;

  tiled_record r;
  r.small_is_a = a_small ? 1 : 0;
  r.tile_big = static_cast<std::int32_t>(tile_big);
  r.tile_d = static_cast<std::int32_t>(tile_d);
  r.k_count = static_cast<std::int32_t>(k_count);
  r.small_span = static_cast<std::int32_t>(small_span);
  r.n_big = static_cast<std::int32_t>(slab.size());
  for (std::size_t j = 0; j < slab.size(); ++j) {
    r.big_extent[j] = static_cast<std::int32_t>(slab[j].extent);
    r.big_stride[j] = static_cast<std::int32_t>(slab[j].stride);
  }
  r.n_d = static_cast<std::int32_t>(dt.size());
  for (std::size_t j = 0; j < dt.size(); ++j) {
    r.d_extent[j] = static_cast<std::int32_t>(dt[j].extent);
    r.d_stride[j] = static_cast<std::int32_t>(dt[j].d);
    r.d_slot[j] = static_cast<std::int32_t>(dt[j].slot);
    r.d_small[j] = static_cast<std::int32_t>(dt[j].small);
  }
  r.n_k = static_cast<std::int32_t>(ks.size());
  for (std::size_t j = 0; j < ks.size(); ++j) {
    r.k_extent[j] = static_cast<std::int32_t>(ks[j].extent);
    r.k_slot[j] = static_cast<std::int32_t>(ks[j].slot);
    r.k_small[j] = static_cast<std::int32_t>(ks[j].small);
  }
  for (std::int32_t k = 0; k < r.k_count; ++k) r.k_pack[k] = tiled_index::k_entry(r, k);
  // A result's slab values are slots slot .. slot + k_count - 1 when every contracted mode is in Big
  // (staged first); whole vectors when k_count is the kernel's loop bound.
  bool dense = contracted_in_slab == ks.size();
  for (std::int32_t k = 0; dense && k < r.k_count; ++k) dense = (r.k_pack[k] & 0xFFFFU) == static_cast<std::uint32_t>(k);
  r.k_dense = dense && r.k_count == tiled_k_max(r.k_count) ? 1 : 0;
  r.contracted_first = limits.contracted_first ? 1 : 0;
  r.d_first = limits.d_first && !limits.contracted_first ? 1 : 0;
  r.reuse = shared_values ? 1 : 0;
  r.n_outer = static_cast<std::int32_t>(merged.size());
  i64 count = 1;
  for (std::size_t j = 0; j < merged.size(); ++j) {
    r.outer_extent[j] = merged[j].extent;
    r.outer_div[j] = count;
    r.outer_big[j] = merged[j].big;
    r.outer_d[j] = merged[j].d;
    count *= merged[j].extent;
  }
  r.tile_count = count;
  if (count > int32_max) return false;  // the kernel numbers tiles in 32 bits
  // Vector copies: the slab's leading modes a dense run of exactly `v` elements (then slot j and
  // offset agree within each group of v), every other stride and the base a multiple of v.
  if (const i64 v = tiled_vec_d(element_bytes); v > 1) {
    i64 run = 1;
    std::size_t lead = 0;
    while (lead < slab.size() && run < v && slab[lead].stride == run) run *= slab[lead++].extent;
    bool ok = run == v;
    for (std::size_t j = lead; ok && j < slab.size(); ++j) ok = slab[j].stride % v == 0;
    for (const mode_desc& m : merged) ok = ok && m.big % v == 0;
    if (ok) r.vec_planned = static_cast<std::int32_t>(v);
  }
  if (r.shared_bytes(element_bytes) > static_cast<std::size_t>(limits.max_shared_bytes)) return false;
  // Group small tiles into stages of about stage_bytes (within the shared-memory cap).
  while (r.group * 2 <= r.tile_count && r.group * 2 <= tiled_max_group && i64{r.group} * 2 * tile_big * eb <= limits.stage_bytes) {
    r.group *= 2;
    if (r.shared_bytes(element_bytes) > static_cast<std::size_t>(limits.max_shared_bytes)) {
      r.group /= 2;
      break;
    }
  }
  out = r;
  return true;
}

// Whether D's tile allows `kind` of vector layout (tiled_vec_kind) with vectors of v results: its
// leading modes (split where needed) form a dense run of exactly v results at stride 1, and every
// vector starts at a multiple of v in D (other D strides and the outer strides multiples of v).
// run_values: any such modes (vec_slot gets each result's slot offset from its run's first: the
// same in every run); run_coefs: all free, with slab weights equal to their D strides (the slab
// leads with them), and every other slot weight a multiple of v (16-byte aligned shared-memory
// vectors). On success `r` holds the split D list and the layout.
bool vector_layout(tiled_record& r, std::size_t element_bytes, std::int32_t kind) {
  const int v = tiled_vec_d(element_bytes);
  if (v == 1 || kind == tiled_scalar) return false;
  // run_table: f32 with at least 8 combinations a result (the kernel is built for those alone).
  if (kind == tiled_run_table && (element_bytes != 4 || tiled_k_max(r.k_count) < 8)) return false;
  if (kind == tiled_run_values && tiled_outputs(element_bytes, tiled_k_max(r.k_count)) % v != 0) return false;
  const bool values = kind == tiled_run_values || kind == tiled_run_table;  // a run's values at fixed slot offsets
  tiled_record t = r;
  std::int32_t p = 1;
  int lead = 0;
  while (p < v) {
    if (lead >= t.n_d) return false;
    const std::int32_t e = t.d_extent[lead];
    if (v % (p * e) == 0) {
      p *= e;
      ++lead;
      continue;
    }
    const std::int32_t need = v / p;
    if (e % need != 0 || t.n_d >= tiled_max_modes) return false;
    for (int j = t.n_d; j > lead + 1; --j) {
      t.d_extent[j] = t.d_extent[j - 1];
      t.d_stride[j] = t.d_stride[j - 1];
      t.d_slot[j] = t.d_slot[j - 1];
      t.d_small[j] = t.d_small[j - 1];
    }
    t.d_extent[lead + 1] = e / need;
    t.d_stride[lead + 1] = t.d_stride[lead] * need;
    t.d_slot[lead + 1] = t.d_slot[lead] * need;
    t.d_small[lead + 1] = t.d_small[lead] * need;
    t.d_extent[lead] = need;
    ++t.n_d;
    p = v;
    ++lead;
  }
  std::int32_t run = 1;
  for (int j = 0; j < lead; ++j) {
    if (t.d_stride[j] != run) return false;
    if (kind == tiled_run_coefs && (t.d_small[j] != 0 || t.d_slot[j] != run)) return false;
    run *= t.d_extent[j];
  }
  for (int j = lead; j < t.n_d; ++j) {
    if (t.d_stride[j] % v != 0) return false;
    if (kind == tiled_run_coefs && t.d_slot[j] % v != 0) return false;
  }
  for (int j = 0; j < t.n_outer; ++j)
    if (t.outer_d[j] % v != 0) return false;
  if (kind == tiled_run_coefs) {
    if (t.tile_big % v != 0) return false;
    for (std::int32_t k = 0; k < t.k_count; ++k)
      if ((t.k_pack[k] & 0xFFFFU) % static_cast<std::uint32_t>(v) != 0) return false;
  }
  if (values) {  // each result's slot offset from its run's first (mixed radix)
    int loads = 0;
    for (int u = 0; u < v; ++u) {
      std::int32_t rest = u, off = 0;
      for (int j = 0; j < lead; ++j) {
        off += (rest % t.d_extent[j]) * t.d_slot[j];
        rest /= t.d_extent[j];
      }
      t.vec_slot[u] = off;
      if (u == 0 || off != t.vec_slot[u - 1]) ++loads;
    }
    // Runs whose results share no values buy only the wide store and lose the scalar layout's reuse
    // across results: taking them wherever they applied made eager 8.2 ms on the reference, against
    // 6.8 ms without (H200, bench/results/2026-11-30-h200-vector/runs-all/ and tiled/).
    if (loads == v) return false;
  }
  if (kind == tiled_run_table) {  // the table's rows: every combination of D's modes that Small has
    std::int64_t rows = 1;
    for (int j = 0; j < t.n_d; ++j) {
      t.d_row[j] = 0;
      if (t.d_small[j] == 0) continue;
      t.d_row[j] = static_cast<std::int32_t>(rows);
      rows *= t.d_extent[j];
    }
    if (rows * tiled_k_max(t.k_count) > tiled_max_table) return false;
    t.table_rows = static_cast<std::int32_t>(rows);
  }
  t.vec_kind = kind;
  t.vec_d = v;
  r = t;
  return true;
}

// Fewer tiles per stage until the record's shared memory fits the limit (run_table's table comes
// after the stages were grouped).
bool fit_shared(tiled_record& r, std::size_t element_bytes, const tiled_limits& limits) {
  while (r.shared_bytes(element_bytes) > static_cast<std::size_t>(limits.max_shared_bytes) && r.group > 1) r.group /= 2;
  return r.shared_bytes(element_bytes) <= static_cast<std::size_t>(limits.max_shared_bytes);
}

}  // namespace

bool describe_tiled(const lowered_step& s, std::size_t element_bytes, const void* a, const void* b, void* d, tiled_record& out,
                    const tiled_limits& limits) {
  tiled_record r;
  if (!plan_tiled(s, element_bytes, limits, tiled_scalar, r)) return false;
  if (limits.vector_results && limits.table_results) {
    // The table's larger tile (threads hold more results), when it still has runs and fits.
    tiled_record wide;
    if (plan_tiled(s, element_bytes, limits, tiled_run_table, wide) && vector_layout(wide, element_bytes, tiled_run_table) &&
        fit_shared(wide, element_bytes, limits)) {
      bind_tiled(wide, a, b, d);
      out = wide;
      return true;
    }
  }
  if (limits.vector_results) {
    if (tiled_record probe = r; vector_layout(probe, element_bytes, tiled_run_coefs)) {
      // Threads hold more results in this layout: plan the larger tile it allows, keep it when it
      // still has the layout.
      tiled_record wide;
      if (plan_tiled(s, element_bytes, limits, tiled_run_coefs, wide) && vector_layout(wide, element_bytes, tiled_run_coefs)) {
        r = wide;
      } else {
        r = probe;
      }
    } else {
      // The scalar tile's caps hold for run_values (the same registers per result).
      (void)vector_layout(r, element_bytes, tiled_run_values);
    }
  }
  bind_tiled(r, a, b, d);
  out = r;
  return true;
}

bool same_tiled_plan(const tiled_record& x, const tiled_record& y) noexcept {
  auto same = [](const auto& p, const auto& q, int n) { return std::equal(p, p + n, q); };
  return x.tile_big == y.tile_big && x.tile_d == y.tile_d && x.group == y.group && x.vec_kind == y.vec_kind && x.reuse == y.reuse &&
         x.n_big == y.n_big && x.n_d == y.n_d && same(x.big_extent, y.big_extent, x.n_big) && same(x.big_stride, y.big_stride, x.n_big) &&
         same(x.d_extent, y.d_extent, x.n_d) && same(x.d_stride, y.d_stride, x.n_d) && same(x.d_slot, y.d_slot, x.n_d);
}

std::vector<tiled_record> tiled_alternatives(const lowered_step& s, std::size_t element_bytes, const tiled_limits& base, const tiled_record& chosen) {
  std::vector<tiled_record> out;
  for (const int order : {0, 1, 2})
    for (const int results : {0, 1, 2}) {  // in runs, scalar, in runs from the table
      const bool vector_results = results != 1;
      if (order == 2 && !vector_results) continue;
      if (results == 2 && (!base.table_results || order == 2)) continue;
      tiled_limits l = base;
      l.contracted_first = order == 1;
      l.d_first = order == 2;
      l.vector_results = vector_results;
      l.table_results = results == 2;
      tiled_record alt;
      // (Where no table plan fits, describe_tiled gives the register layout: a plan already seen.)
      if (!describe_tiled(s, element_bytes, nullptr, nullptr, nullptr, alt, l)) continue;
      bool seen = same_tiled_plan(alt, chosen);
      for (const tiled_record& x : out) seen = seen || same_tiled_plan(alt, x);
      if (!seen) out.push_back(alt);
    }
  return out;
}

void bind_tiled(tiled_record& r, const void* a, const void* b, void* d) noexcept {
  r.big = r.small_is_a != 0 ? b : a;
  r.small = r.small_is_a != 0 ? a : b;
  r.d = d;
  r.vec = reinterpret_cast<std::uintptr_t>(r.big) % 16 == 0 ? r.vec_planned : 1;
  r.vec_store = r.vec_kind != tiled_scalar && reinterpret_cast<std::uintptr_t>(d) % 16 == 0 ? 1 : 0;
}

template <class T>
void evaluate_tiled(const tiled_record& r) {
  const T* big = static_cast<const T*>(r.big);
  const T* small = static_cast<const T*>(r.small);
  T* d = static_cast<T*>(r.d);
  std::vector<std::int32_t> big_off(static_cast<std::size_t>(r.tile_big)), d_off(static_cast<std::size_t>(r.tile_d));
  std::vector<std::uint32_t> d_pack(static_cast<std::size_t>(r.tile_d)), k_pack(r.k_pack, r.k_pack + r.k_count);
  for (std::int32_t j = 0; j < r.tile_big; ++j) big_off[static_cast<std::size_t>(j)] = tiled_index::big_offset(r, j);
  for (std::int32_t e = 0; e < r.tile_d; ++e) tiled_index::d_entry(r, e, d_off[static_cast<std::size_t>(e)], d_pack[static_cast<std::size_t>(e)]);
  std::vector<T> slab(static_cast<std::size_t>(r.tile_big));
  // run_table's table, built as the kernel builds it (tiled_index::table_entry).
  const int k_max = tiled_k_max(r.k_count);
  std::vector<T> table(r.vec_kind == tiled_run_table ? static_cast<std::size_t>(r.table_rows) * static_cast<std::size_t>(k_max) : 0);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::int32_t at = tiled_index::table_entry(r, static_cast<std::int32_t>(i), k_max);
    table[i] = at < 0 ? T{} : small[at];
  }
  for (std::int64_t t = 0; t < r.tile_count; ++t) {
    std::int64_t ob = 0, od = 0;
    tiled_index::outer_offsets(r, t, ob, od);
    for (std::size_t j = 0; j < slab.size(); ++j) slab[j] = big[ob + big_off[j]];
    for (std::size_t e = 0; e < d_pack.size(); ++e) {
      std::uint32_t slot = d_pack[e] & 0xFFFFU, sm = d_pack[e] >> 16U;
      std::int64_t off = d_off[e];
      // The vector layouts take each run of vec_d results from its first one, as the kernel does.
      const std::size_t u = e % static_cast<std::size_t>(r.vec_d), e0 = e - u;
      if (r.vec_kind == tiled_run_values || r.vec_kind == tiled_run_table) {
        slot = (d_pack[e0] & 0xFFFFU) + static_cast<std::uint32_t>(r.vec_slot[u]);
        off = d_off[e0] + static_cast<std::int64_t>(u);
      } else if (r.vec_kind == tiled_run_coefs) {
        slot = (d_pack[e0] & 0xFFFFU) + static_cast<std::uint32_t>(u);
        sm = d_pack[e0] >> 16U;
        off = d_off[e0] + static_cast<std::int64_t>(u);
      }
      T acc{};
      if (r.vec_kind == tiled_run_table) {  // the coefficients from the table, as the kernel reads them
        const T* row = table.data() + static_cast<std::size_t>(tiled_index::table_row(r, static_cast<std::int32_t>(e))) * static_cast<std::size_t>(k_max);
        for (std::size_t k = 0; k < k_pack.size(); ++k) acc += slab[slot + (k_pack[k] & 0xFFFFU)] * row[k];
      } else {
        for (const std::uint32_t kp : k_pack) acc += slab[slot + (kp & 0xFFFFU)] * small[sm + (kp >> 16U)];
      }
      d[od + off] = acc;
    }
  }
}

template void evaluate_tiled<float>(const tiled_record&);
template void evaluate_tiled<double>(const tiled_record&);
template void evaluate_tiled<std::complex<float>>(const tiled_record&);
template void evaluate_tiled<std::complex<double>>(const tiled_record&);

}  // namespace tnrt
