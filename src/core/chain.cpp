#include "core/chain.hpp"

#include <algorithm>
#include <complex>
#include <initializer_list>
#include <optional>

#include "core/chain_index.hpp"

namespace tnrt {
namespace {

bool has_repeats(const std::vector<label_t>& l) {
  std::vector<label_t> s(l);
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) != s.end();
}

bool contains(const std::vector<label_t>& l, label_t x) { return std::find(l.begin(), l.end(), x) != l.end(); }

// A mode list under construction: extents and weight columns, merged where an entry continues the
// one before it in every column (weight == previous weight * previous extent; zeros stay zero).
struct mode_list {
  std::vector<std::int64_t> extent;
  std::vector<std::vector<std::int64_t>> cols;
  explicit mode_list(std::size_t columns) : cols(columns) {}
  void add(std::int64_t e, std::initializer_list<std::int64_t> w) {
    if (e == 1) return;
    if (!extent.empty()) {
      const std::size_t j = extent.size() - 1;
      bool merge = true;
      std::size_t c = 0;
      for (std::int64_t x : w) merge = merge && x == cols[c++][j] * extent[j];
      if (merge) {
        extent[j] *= e;
        return;
      }
    }
    extent.push_back(e);
    std::size_t c = 0;
    for (std::int64_t x : w) cols[c++].push_back(x);
  }
  [[nodiscard]] std::size_t size() const noexcept { return extent.size(); }
};

// log2 of every extent into `shift`; false when one is no power of two.
bool shifts_of(const std::vector<std::int64_t>& extent, std::int32_t* shift) {
  for (std::size_t i = 0; i < extent.size(); ++i) {
    if ((extent[i] & (extent[i] - 1)) != 0) return false;
    std::int32_t k = 0;
    while ((std::int64_t{1} << k) < extent[i]) ++k;
    shift[i] = k;
  }
  return true;
}

// Splits the entry that straddles bit `bit` of the index (every extent a power of two): an entry of
// 2^s values starting at bit p < bit < p + s becomes 2^(bit - p) values, then 2^(s - bit + p) values
// whose weights are 2^(bit - p) times the first's. The index decodes to the same offsets.
void split_at_bit(mode_list& ml, int bit) {
  int p = 0;
  for (std::size_t i = 0; i < ml.size(); ++i) {
    int s = 0;
    while ((std::int64_t{1} << s) < ml.extent[i]) ++s;
    if (p < bit && bit < p + s) {
      const std::int64_t low = std::int64_t{1} << (bit - p);
      ml.extent[i] = low;
      ml.extent.insert(ml.extent.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::int64_t{1} << (s - bit + p));
      for (auto& c : ml.cols) c.insert(c.begin() + static_cast<std::ptrdiff_t>(i) + 1, c[i] * low);
      return;
    }
    p += s;
  }
}

// Splits every list at `bit` (split_at_bit) when every extent of every list is a power of two and
// each split list still fits chain_max_modes entries; false, and the lists unchanged, otherwise.
bool split_lists_at_bit(std::initializer_list<mode_list*> lists, int bit) {
  std::int32_t probe[chain_max_modes] = {};
  std::vector<mode_list> split;
  for (const mode_list* ml : lists) {
    if (ml->size() > static_cast<std::size_t>(chain_max_modes) || !shifts_of(ml->extent, probe)) return false;
    split.push_back(*ml);
    split_at_bit(split.back(), bit);
    if (split.back().size() > static_cast<std::size_t>(chain_max_modes)) return false;
  }
  std::size_t i = 0;
  for (mode_list* ml : lists) *ml = std::move(split[i++]);
  return true;
}

template <class Out>
void copy_column(const std::vector<std::int64_t>& from, Out* to) {
  for (std::size_t i = 0; i < from.size(); ++i) to[i] = static_cast<Out>(from[i]);
}

struct chain_builder {
  const problem& p;
  const std::vector<std::vector<std::int64_t>>& strides;
  std::size_t element_bytes;
  const chain_limits& limits;
  std::size_t n_inputs;
  std::vector<std::vector<label_t>> labels;  // by operand id (operand_labels)

  [[nodiscard]] const std::vector<label_t>& labels_of(int id) const { return labels[static_cast<std::size_t>(id)]; }
  [[nodiscard]] std::int64_t extent(label_t l) const { return p.net.extents[static_cast<std::size_t>(l)]; }
  // The stride of label l in operand id (0 when the operand lacks it).
  [[nodiscard]] std::int64_t stride(int id, label_t l) const {
    const auto& ls = labels_of(id);
    for (std::size_t i = 0; i < ls.size(); ++i)
      if (ls[i] == l) return strides[static_cast<std::size_t>(id)][i];
    return 0;
  }
  // id's labels, fastest first.
  [[nodiscard]] std::vector<label_t> by_stride(int id) const {
    std::vector<label_t> ls = labels_of(id);
    std::stable_sort(ls.begin(), ls.end(), [&](label_t a, label_t b) { return stride(id, a) < stride(id, b); });
    return ls;
  }

  std::optional<chain_plan> build(const std::vector<int>& seg, const std::vector<int>& big_of, const std::vector<int>& small_of) const {
    const std::size_t m = seg.size();
    if (m > static_cast<std::size_t>(chain_max_steps)) return std::nullopt;
    const auto eb = static_cast<std::int64_t>(element_bytes);
    const std::int64_t slab_elems = limits.slab_bytes / eb;
    std::vector<int> x_id(m + 1), s_id(m);
    x_id[0] = big_of[static_cast<std::size_t>(seg[0])];
    for (std::size_t i = 0; i < m; ++i) {
      s_id[i] = small_of[static_cast<std::size_t>(seg[i])];
      x_id[i + 1] = static_cast<int>(n_inputs) + seg[i];
    }
    std::vector<std::vector<label_t>> X(m + 1), S(m);
    for (std::size_t i = 0; i <= m; ++i) X[i] = labels_of(x_id[i]);
    // The kernel's offsets are 32-bit.
    for (std::size_t i = 0; i <= m; ++i)
      if (p.net.elements_of(X[i]) >= 2147483648.0) return std::nullopt;
    for (std::size_t i = 0; i < m; ++i) S[i] = labels_of(s_id[i]);
    // Active labels: every S_i's, and those of X_i a step sums. A label a step sums must not come
    // back later in the chain (a tree never does this; guard).
    std::vector<label_t> active;
    auto add_active = [&](label_t l) {
      if (!contains(active, l)) active.push_back(l);
    };
    for (std::size_t i = 0; i < m; ++i) {
      for (const auto* side : {&X[i], &S[i]})
        for (label_t l : *side) {
          if (contains(X[i + 1], l)) continue;
          for (std::size_t j = i + 1; j < m; ++j)
            if (contains(S[j], l) || contains(X[j + 1], l)) return std::nullopt;
        }
      for (label_t l : X[i])
        if (!contains(X[i + 1], l)) add_active(l);
      for (label_t l : S[i]) add_active(l);
    }
    std::vector<label_t> passive;
    for (label_t l : by_stride(x_id[0]))
      if (!contains(active, l)) {
        if (!contains(X[m], l)) return std::nullopt;
        passive.push_back(l);
      }
    // The slab: active labels, then passive ones (T) for contiguous runs and a slab of some size.
    std::vector<std::int64_t> base(m + 1, 1);
    for (std::size_t i = 0; i <= m; ++i)
      for (label_t l : X[i])
        if (contains(active, l)) base[i] *= extent(l);
    const std::int64_t base_max = *std::max_element(base.begin(), base.end());
    if (base_max > slab_elems) return std::nullopt;
    std::vector<label_t> tile;
    std::int64_t tile_prod = 1;
    auto fits = [&](std::int64_t e) { return base_max * tile_prod * e <= slab_elems; };
    for (int id : {x_id[0], x_id[m]}) {
      std::int64_t run = 1;
      for (label_t l : by_stride(id)) {
        if (run >= limits.min_run) break;
        if (contains(active, l) || contains(tile, l)) {
          run *= extent(l);
        } else if (fits(extent(l))) {
          tile.push_back(l);
          tile_prod *= extent(l);
          run *= extent(l);
        } else {
          break;
        }
      }
    }
    for (label_t l : passive) {
      if (contains(tile, l)) continue;
      if (base_max * tile_prod * 2 > slab_elems || !fits(extent(l))) break;
      tile.push_back(l);
      tile_prod *= extent(l);
    }
    // The slab's label order: T in X_0's order, then X_0's active labels in its order, then the
    // labels the S_i bring, in order of appearance.
    std::vector<label_t> order;
    for (label_t l : passive)
      if (contains(tile, l)) order.push_back(l);
    for (label_t l : by_stride(x_id[0]))
      if (contains(active, l)) order.push_back(l);
    for (std::size_t i = 0; i < m; ++i)
      for (label_t l : by_stride(s_id[i]))
        if (!contains(order, l)) order.push_back(l);
    // `order` holds every active label (X_0's, and those the S_i bring), so each step's labels are in
    // the slab; a passive label is in it when it is in T.
    auto in_slab = [&](label_t l) { return contains(order, l); };
    // Each X_i's slab: dense over its slab labels in `order`, first fastest.
    std::vector<std::vector<std::int64_t>> w(m + 1, std::vector<std::int64_t>(p.net.label_count(), 0));
    std::vector<std::int64_t> slab(m + 1, 1);
    for (std::size_t i = 0; i <= m; ++i)
      for (label_t l : order)
        if (contains(X[i], l)) {
          w[i][static_cast<std::size_t>(l)] = slab[i];
          slab[i] *= extent(l);
        }
    chain_plan out;
    chain_record& r = out.rec;
    r.steps = static_cast<std::int32_t>(m);
    r.slab_max = static_cast<std::int32_t>(*std::max_element(slab.begin(), slab.end()));
    r.vec = element_bytes < 16 ? static_cast<std::int32_t>(16 / element_bytes) : 1;
    std::int64_t sd = 0;
    for (std::size_t i = 0; i < m; ++i) {
      chain_step_record& s = r.step[i];
      std::vector<label_t> rows, summed, brought;
      for (label_t l : order)
        if (contains(X[i], l) && contains(X[i + 1], l)) rows.push_back(l);
      for (label_t l : order)
        if ((contains(X[i], l) || contains(S[i], l)) && !contains(X[i + 1], l)) summed.push_back(l);
      for (label_t l : S[i])
        if (!contains(summed, l) && !contains(X[i], l)) brought.push_back(l);
      std::int64_t k_count = 1, n_count = 1, batch = 1, rows_count = 1;
      for (label_t l : summed) k_count *= extent(l);
      for (label_t l : brought) n_count *= extent(l);
      // The kernel holds a row's summed values in registers: at most 256 bytes of them.
      if (k_count > chain_max_k || n_count > chain_max_n || k_count * eb > 256) return std::nullopt;
      mode_list rl(3), bl(1);
      for (label_t l : rows) {
        const bool is_batch = contains(S[i], l);
        rl.add(extent(l), {w[i][static_cast<std::size_t>(l)], w[i + 1][static_cast<std::size_t>(l)], is_batch ? batch : 0});
        rows_count *= extent(l);
        if (is_batch) {
          bl.add(extent(l), {stride(s_id[i], l)});
          batch *= extent(l);
        }
      }
      if (rl.size() > static_cast<std::size_t>(chain_max_modes) || bl.size() > static_cast<std::size_t>(chain_max_modes)) return std::nullopt;
      s.rows = static_cast<std::int32_t>(rows_count);
      s.k_count = static_cast<std::int32_t>(k_count);
      s.n_count = static_cast<std::int32_t>(n_count);
      s.n_pad = static_cast<std::int32_t>((n_count + r.vec - 1) / r.vec * r.vec);
      s.batch = static_cast<std::int32_t>(batch);
      // Rows in groups of chain_threads: a thread decodes its place in the group once a step.
      const bool split = rows_count <= static_cast<std::int64_t>(chain_max_hi) << chain_thread_bits && split_lists_at_bit({&rl}, chain_thread_bits);
      s.n_r = static_cast<std::int32_t>(rl.size());
      copy_column(rl.extent, s.r_extent);
      copy_column(rl.cols[0], s.r_in);
      copy_column(rl.cols[1], s.r_out);
      copy_column(rl.cols[2], s.r_b);
      s.r_pow2 = shifts_of(rl.extent, s.r_shift) ? 1 : 0;
      if (split) {
        s.split = 1;
        for (std::int32_t j = 0; (static_cast<std::int64_t>(j) << chain_thread_bits) < rows_count; ++j)
          chain_index::row_offsets(s, j << chain_thread_bits, s.hi_in[j], s.hi_out[j], s.hi_b[j]);
      }
      s.n_b = static_cast<std::int32_t>(bl.size());
      copy_column(bl.extent, s.b_extent);
      copy_column(bl.cols[0], s.b_small);
      for (std::int64_t k = 0; k < k_count; ++k) {
        std::int64_t j = k, in = 0, sm = 0;
        for (label_t l : summed) {
          const std::int64_t d = j % extent(l);
          j /= extent(l);
          in += d * w[i][static_cast<std::size_t>(l)];  // 0 where X_i lacks l
          sm += d * stride(s_id[i], l);                  // 0 where S_i lacks l
        }
        s.k_in[k] = static_cast<std::int32_t>(in);
        s.k_small[k] = static_cast<std::int32_t>(sm);
      }
      for (std::int64_t n = 0; n < n_count; ++n) {
        std::int64_t j = n, o = 0, sm = 0;
        for (label_t l : brought) {
          const std::int64_t d = j % extent(l);
          j /= extent(l);
          o += d * w[i + 1][static_cast<std::size_t>(l)];
          sm += d * stride(s_id[i], l);
        }
        s.n_out[n] = static_cast<std::int32_t>(o);
        s.n_small[n] = static_cast<std::int32_t>(sm);
      }
      sd = (sd + r.vec - 1) / r.vec * r.vec;
      s.sd_offset = static_cast<std::int32_t>(sd);
      sd += batch * k_count * s.n_pad;
    }
    if (sd * eb > limits.table_bytes) return std::nullopt;
    r.sd_elems = static_cast<std::int32_t>(sd);
    mode_list load(2), store(2), outer(2);
    for (label_t l : by_stride(x_id[0]))
      if (in_slab(l)) load.add(extent(l), {stride(x_id[0], l), w[0][static_cast<std::size_t>(l)]});
    for (label_t l : by_stride(x_id[m]))
      if (in_slab(l)) store.add(extent(l), {stride(x_id[m], l), w[m][static_cast<std::size_t>(l)]});
    for (label_t l : passive)
      if (!contains(tile, l)) outer.add(extent(l), {stride(x_id[0], l), stride(x_id[m], l)});
    for (const mode_list* ml : {&load, &store, &outer})
      if (ml->size() > static_cast<std::size_t>(chain_max_modes)) return std::nullopt;
    // With every extent a power of two, both lists split at bit chain_thread_bits: a thread decodes
    // its place in a group of chain_threads entries once (chain_index::load_entry_split).
    const bool lists_split = split_lists_at_bit({&load, &store}, chain_thread_bits);
    r.load_count = static_cast<std::int32_t>(slab[0]);
    r.n_load = static_cast<std::int32_t>(load.size());
    copy_column(load.extent, r.load_extent);
    copy_column(load.cols[0], r.load_global);
    copy_column(load.cols[1], r.load_slab);
    r.store_count = static_cast<std::int32_t>(slab[m]);
    r.n_store = static_cast<std::int32_t>(store.size());
    copy_column(store.extent, r.store_extent);
    copy_column(store.cols[0], r.store_global);
    copy_column(store.cols[1], r.store_slab);
    r.pow2 = shifts_of(load.extent, r.load_shift) && shifts_of(store.extent, r.store_shift) ? 1 : 0;
    if (lists_split) {
      r.lists_split = 1;
      for (std::int32_t j = 0; j < chain_max_hi; ++j) {
        const std::int64_t e = static_cast<std::int64_t>(j) << chain_thread_bits;
        if (e < r.load_count) chain_index::load_entry(r, static_cast<std::int32_t>(e), r.load_hi_g[j], r.load_hi_slot[j]);
        if (e < r.store_count) chain_index::store_entry(r, static_cast<std::int32_t>(e), r.store_hi_g[j], r.store_hi_slot[j]);
      }
    }
    r.n_outer = static_cast<std::int32_t>(outer.size());
    std::int64_t tiles = 1;
    for (std::int64_t e : outer.extent) tiles *= e;
    r.tile_count = static_cast<std::int32_t>(tiles);  // at most X_0's elements
    copy_column(outer.extent, r.outer_extent);
    copy_column(outer.cols[0], r.outer_in);
    copy_column(outer.cols[1], r.outer_out);
    r.outer_pow2 = shifts_of(outer.extent, r.outer_shift) ? 1 : 0;
    out.steps = seg;
    out.big_id = x_id[0];
    out.small_ids = s_id;
    for (std::size_t i = 0; i < m; ++i) {
      const step& st = p.tree.steps[static_cast<std::size_t>(seg[i])];
      out.small_is_lhs.push_back(st.lhs == s_id[i] ? 1 : 0);
    }
    for (std::size_t i = 1; i < m; ++i) out.bytes_saved += 2.0 * p.net.elements_of(X[i]) * static_cast<double>(eb);
    return out;
  }
};

}  // namespace

std::vector<chain_plan> plan_chains(const problem& p, const std::vector<std::vector<std::int64_t>>& strides,
                                    const std::vector<std::uint8_t>& eligible, std::size_t element_bytes, const chain_limits& limits) {
  const auto& steps = p.tree.steps;
  const std::size_t n = p.net.inputs.size();
  const std::size_t count = steps.size();
  chain_builder b{p, strides, element_bytes, limits, n, operand_labels(p.net, p.tree)};
  std::vector<int> big_of(count, -1), small_of(count, -1);
  for (std::size_t k = 0; k < count; ++k) {
    const step& s = steps[k];
    if (k >= eligible.size() || eligible[k] == 0 || s.rhs < 0) continue;
    const auto& la = b.labels_of(s.lhs);
    const auto& lb = b.labels_of(s.rhs);
    if (has_repeats(la) || has_repeats(lb)) continue;  // a diagonal (a step's result has no repeats)
    const double ea = p.net.elements_of(la), eb = p.net.elements_of(lb), ed = p.net.elements_of(s.out);
    if (std::max(ea, eb) < static_cast<double>(limits.min_big) || std::min(ea, eb) > static_cast<double>(limits.max_small) ||
        ed < static_cast<double>(limits.min_big))
      continue;
    big_of[k] = ea >= eb ? s.lhs : s.rhs;
    small_of[k] = ea >= eb ? s.rhs : s.lhs;
  }
  // next[k]: the candidate whose large operand is step k's result.
  std::vector<int> next(count, -1), prev(count, -1);
  for (std::size_t k = 0; k < count; ++k) {
    if (big_of[k] < static_cast<int>(n)) continue;
    const auto j = static_cast<std::size_t>(big_of[k]) - n;
    if (big_of[j] < 0) continue;
    next[j] = static_cast<int>(k);
    prev[k] = static_cast<int>(j);
  }
  std::vector<chain_plan> out;
  auto emit = [&](const std::vector<int>& seg) {
    if (seg.size() < static_cast<std::size_t>(std::max(limits.min_steps, 2))) return;
    if (auto c = b.build(seg, big_of, small_of)) out.push_back(std::move(*c));
  };
  for (std::size_t k = 0; k < count; ++k) {
    if (big_of[k] < 0 || prev[k] >= 0) continue;
    std::vector<int> seg{static_cast<int>(k)};
    for (int x = next[k]; x >= 0; x = next[static_cast<std::size_t>(x)]) {
      std::vector<int> longer(seg);
      longer.push_back(x);
      if (b.build(longer, big_of, small_of)) {
        seg = std::move(longer);
      } else {
        emit(seg);
        seg = {x};
      }
    }
    emit(seg);
  }
  std::sort(out.begin(), out.end(), [](const chain_plan& x, const chain_plan& y) { return x.steps.back() < y.steps.back(); });
  return out;
}

template <class T>
void evaluate_chain(const chain_record& r, const T* x0, const T* const* smalls, T* xm) {
  std::vector<T> buf[2] = {std::vector<T>(static_cast<std::size_t>(r.slab_max)), std::vector<T>(static_cast<std::size_t>(r.slab_max))};
  std::vector<T> sd(static_cast<std::size_t>(r.sd_elems));
  for (int i = 0; i < r.steps; ++i) {
    const chain_step_record& s = r.step[i];
    const std::int32_t count = s.batch * s.k_count * s.n_pad;
    for (std::int32_t e = 0; e < count; ++e) sd[static_cast<std::size_t>(s.sd_offset + e)] = chain_index::table_value(s, smalls[i], e);
  }
  for (std::int32_t t = 0; t < r.tile_count; ++t) {
    std::int32_t in_base = 0, out_base = 0;
    chain_index::tile_bases(r, t, in_base, out_base);
    for (std::int32_t e = 0; e < r.load_count; ++e) {
      std::int32_t lo_g = 0, lo_slot = 0, g = 0, slot = 0;
      if (r.lists_split != 0) chain_index::load_entry(r, e & ((1 << chain_thread_bits) - 1), lo_g, lo_slot);
      chain_index::load_entry_split(r, e, lo_g, lo_slot, g, slot);
      buf[0][static_cast<std::size_t>(slot)] = x0[static_cast<std::ptrdiff_t>(in_base) + g];
    }
    for (int i = 0; i < r.steps; ++i) {
      const chain_step_record& s = r.step[i];
      const T* src = buf[i & 1].data();
      T* dst = buf[(i + 1) & 1].data();
      for (std::int32_t row = 0; row < s.rows; ++row) {
        std::int32_t lo_in = 0, lo_out = 0, lo_b = 0, in = 0, o = 0, bi = 0;
        if (s.split != 0) chain_index::row_offsets(s, row & ((1 << chain_thread_bits) - 1), lo_in, lo_out, lo_b);
        chain_index::row_offsets_split(s, row, lo_in, lo_out, lo_b, in, o, bi);
        const T* table = sd.data() + s.sd_offset + static_cast<std::ptrdiff_t>(bi) * s.k_count * s.n_pad;
        for (std::int32_t n = 0; n < s.n_count; ++n) {
          T acc{};
          for (std::int32_t k = 0; k < s.k_count; ++k) acc += src[in + s.k_in[k]] * table[k * s.n_pad + n];
          dst[o + s.n_out[n]] = acc;
        }
      }
    }
    const T* last = buf[r.steps & 1].data();
    for (std::int32_t e = 0; e < r.store_count; ++e) {
      std::int32_t lo_g = 0, lo_slot = 0, g = 0, slot = 0;
      if (r.lists_split != 0) chain_index::store_entry(r, e & ((1 << chain_thread_bits) - 1), lo_g, lo_slot);
      chain_index::store_entry_split(r, e, lo_g, lo_slot, g, slot);
      xm[static_cast<std::ptrdiff_t>(out_base) + g] = last[slot];
    }
  }
}

template void evaluate_chain<float>(const chain_record&, const float*, const float* const*, float*);
template void evaluate_chain<double>(const chain_record&, const double*, const double* const*, double*);
template void evaluate_chain<std::complex<float>>(const chain_record&, const std::complex<float>*, const std::complex<float>* const*,
                                                  std::complex<float>*);
template void evaluate_chain<std::complex<double>>(const chain_record&, const std::complex<double>*, const std::complex<double>* const*,
                                                   std::complex<double>*);

}  // namespace tnrt
