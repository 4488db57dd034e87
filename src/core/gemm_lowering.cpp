#include "core/gemm_lowering.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <vector>

namespace tnrt {
namespace {

using i64 = std::int64_t;

struct mode_strides {
  i64 extent = 1;
  i64 s[3] = {0, 0, 0};          // stride in A, B, D
  bool in[3] = {false, false, false};
};

/// A group of modes merged into one dimension: its extent and its stride in A, B, D.
struct dimension {
  i64 extent = 1;
  i64 s[3] = {0, 0, 0};
};

/// Merges `group` (modes of one role) into one dimension: sorted by their stride in operand `ref`,
/// each mode must start where the previous one ends, in every operand holding the group.
bool merge(std::vector<mode_strides>& group, int ref, dimension& out) {
  std::sort(group.begin(), group.end(), [ref](const mode_strides& x, const mode_strides& y) { return x.s[ref] < y.s[ref]; });
  out = dimension{};
  if (group.empty()) return true;
  for (int op = 0; op < 3; ++op) {
    if (!group.front().in[op]) continue;
    for (std::size_t i = 1; i < group.size(); ++i)
      if (group[i].s[op] != group[i - 1].s[op] * group[i - 1].extent) return false;
    out.s[op] = group.front().s[op];
  }
  for (const mode_strides& m : group) out.extent *= m.extent;
  return true;
}

/// A rows x cols matrix with these strides as a column-major operand: op (false: as stored, true:
/// stored transposed) and leading dimension. Extent-1 dimensions take whatever stride fits.
bool as_matrix(i64 rows, i64 cols, i64 s_rows, i64 s_cols, bool& trans, i64& ld) {
  if (rows == 1 || s_rows == 1) {
    ld = cols == 1 ? std::max<i64>(rows, 1) : s_cols;
    if (ld >= std::max<i64>(rows, 1)) {
      trans = false;
      return true;
    }
  }
  if (cols == 1 || s_cols == 1) {
    ld = rows == 1 ? std::max<i64>(cols, 1) : s_rows;
    if (ld >= std::max<i64>(cols, 1)) {
      trans = true;
      return true;
    }
  }
  return false;
}

constexpr i64 int_max = std::numeric_limits<int>::max();

// A mode's role by the operands holding it (extent-1 modes play no part).
enum role : int { role_batch, role_m, role_n, role_k, role_unused, role_refused };

role role_of(const mode_strides& md) {
  const bool a = md.in[0], b = md.in[1], d = md.in[2];
  if (!a && !b && !d) return role_unused;  // an id no operand uses
  if (a && b && d) return role_batch;
  if (a && d && !b) return role_m;
  if (b && d && !a) return role_n;
  if (a && b && !d) return role_k;
  return role_refused;  // in one operand only
}

// Every mode of extent > 1 of a contraction, by id, with its strides; false for a broadcast (a
// one-sided sum or an outer copy: stride 0), a mode twice in one operand, or a mode in one operand
// only, which no GEMM takes.
bool collect_modes(const lowered_step& s, std::vector<mode_strides>& modes) {
  if (s.kind != lowered_kind::contraction) return false;
  const strided_operand* ops[3] = {&s.a, &s.b, &s.d};
  for (int op = 0; op < 3; ++op) {
    const strided_operand& o = *ops[op];
    for (std::size_t i = 0; i < o.modes.size(); ++i) {
      if (o.extents[i] == 1) continue;
      if (o.strides[i] == 0) return false;
      const auto id = static_cast<std::size_t>(o.modes[i]);
      if (id >= modes.size()) modes.resize(id + 1);
      if (modes[id].in[op]) return false;
      modes[id].extent = o.extents[i];
      modes[id].s[op] = o.strides[i];
      modes[id].in[op] = true;
    }
  }
  return std::none_of(modes.begin(), modes.end(), [](const mode_strides& md) { return role_of(md) == role_refused; });
}

// The one GEMM a contraction's modes (collect_modes) make as they lie, if any.
std::optional<gemm_form> gemm_of_modes(const std::vector<mode_strides>& modes) {
  std::vector<mode_strides> groups[4];  // by role: batch, m, n, k
  for (const mode_strides& md : modes)
    if (const role r = role_of(md); r != role_unused) groups[r].push_back(md);
  std::vector<mode_strides>&batch = groups[role_batch], &m = groups[role_m], &n = groups[role_n], &k = groups[role_k];
  dimension db, dm, dn, dk;
  if (!merge(batch, 2, db) || !merge(m, 2, dm) || !merge(n, 2, dn) || !merge(k, 0, dk)) return std::nullopt;
  if (std::max({dm.extent, dn.extent, dk.extent}) > int_max || db.extent > int_max) return std::nullopt;

  // Unswapped: X = A (m x k), Y = B (k x n), C = D (m x n). Swapped: X = B^T (n x k), Y = A^T
  // (k x m), C = D^T (n x m). C must be column-major as stored (its rows contiguous).
  for (const bool swapped : {false, true}) {
    const dimension& rows = swapped ? dn : dm;
    const dimension& cols = swapped ? dm : dn;
    const int x_op = swapped ? 1 : 0, y_op = swapped ? 0 : 1;
    gemm_form g;
    g.swapped = swapped;
    g.m = rows.extent;
    g.n = cols.extent;
    g.k = dk.extent;
    g.batch = db.extent;
    bool c_trans = false;
    if (!as_matrix(g.m, g.n, rows.s[2], cols.s[2], c_trans, g.ldc) || c_trans) continue;
    if (!as_matrix(g.m, g.k, rows.s[x_op], dk.s[x_op], g.trans_x, g.ldx)) continue;
    if (!as_matrix(g.k, g.n, dk.s[y_op], cols.s[y_op], g.trans_y, g.ldy)) continue;
    if (std::max({g.ldx, g.ldy, g.ldc}) > int_max) continue;
    if (g.batch > 1) {
      g.stride_x = db.s[x_op];
      g.stride_y = db.s[y_op];
      g.stride_c = db.s[2];
    }
    return g;
  }
  return std::nullopt;
}

}  // namespace

std::optional<gemm_form> lower_to_gemm(const lowered_step& s) {
  std::vector<mode_strides> modes;
  if (!collect_modes(s, modes)) return std::nullopt;
  return gemm_of_modes(modes);
}

lowered_step gemm_copy_step(const lowered_step& s, const gemm_with_copies& c, int i) {
  const strided_operand* from[3] = {&s.a, &s.b, &s.d};
  const strided_operand* to[3] = {&c.step.a, &c.step.b, &c.step.d};
  lowered_step copy;
  copy.kind = lowered_kind::reduction;
  copy.a = i < 2 ? *from[i] : *to[i];
  copy.d = i < 2 ? *to[i] : *from[i];
  return copy;
}

std::optional<gemm_with_copies> lower_to_gemm_with_copies(const lowered_step& s) {
  std::vector<mode_strides> modes;
  if (!collect_modes(s, modes) || gemm_of_modes(modes)) return std::nullopt;
  std::vector<int> group_of(modes.size(), role_unused);
  std::int64_t elements[3] = {1, 1, 1};
  for (std::size_t id = 0; id < modes.size(); ++id) {
    const mode_strides& md = modes[id];
    group_of[id] = role_of(md);
    for (int op = 0; op < 3; ++op)
      if (md.in[op]) {
        if (elements[op] > std::numeric_limits<i64>::max() / md.extent) return std::nullopt;
        elements[op] *= md.extent;
      }
  }
  constexpr int batch = role_batch, m = role_m, n = role_n, k = role_k;
  // Which operands hold each group, and the copies' group sequences (fastest first).
  constexpr int holders[4][3] = {{2, 0, 1}, {2, 0, -1}, {2, 1, -1}, {0, 1, -1}};  // batch, m, n, k
  constexpr int sequence[3][3] = {{m, k, batch}, {k, n, batch}, {m, n, batch}};     // A, B, D

  // The sets of copied operands (bit 0 A, 1 B, 2 D) by elements copied, then by copies.
  std::vector<int> sets{1, 2, 3, 4, 5, 6, 7};
  const auto cost = [&](int set) {
    i64 e = 0;
    for (int op = 0; op < 3; ++op)
      if ((set >> op & 1) != 0) e += elements[op];
    return e;
  };
  std::stable_sort(sets.begin(), sets.end(), [&](int x, int y) {
    const i64 cx = cost(x), cy = cost(y);
    return cx != cy ? cx < cy : __builtin_popcount(static_cast<unsigned>(x)) < __builtin_popcount(static_cast<unsigned>(y));
  });
  for (const int set : sets) {
    const auto copied = [&](int op) { return (set >> op & 1) != 0; };
    // Each group's modes in the memory order of the first operand holding it that stays (else of
    // the first holding it at all, so a copy keeps what order it can).
    std::vector<std::vector<std::size_t>> order(4);
    for (int g = 0; g < 4; ++g) {
      int ref = -1;
      for (int h : holders[g])
        if (h >= 0 && !copied(h)) {
          ref = h;
          break;
        }
      if (ref < 0) ref = holders[g][0];
      for (std::size_t id = 0; id < modes.size(); ++id)
        if (group_of[id] == g) order[static_cast<std::size_t>(g)].push_back(id);
      std::stable_sort(order[static_cast<std::size_t>(g)].begin(), order[static_cast<std::size_t>(g)].end(),
                       [&](std::size_t x, std::size_t y) { return modes[x].s[ref] < modes[y].s[ref]; });
    }
    gemm_with_copies r;
    r.step = s;
    strided_operand* out[3] = {&r.step.a, &r.step.b, &r.step.d};
    for (int op = 0; op < 3; ++op) {
      r.elements[op] = elements[op];
      if (!copied(op)) continue;
      r.copied[op] = true;
      std::vector<i64> stride_of(modes.size(), 0);
      i64 acc = 1;
      for (int g : sequence[op])
        for (std::size_t id : order[static_cast<std::size_t>(g)]) {
          stride_of[id] = acc;
          acc *= modes[id].extent;
        }
      strided_operand& o = *out[op];
      for (std::size_t i = 0; i < o.modes.size(); ++i)
        o.strides[i] = o.extents[i] == 1 ? acc : stride_of[static_cast<std::size_t>(o.modes[i])];
    }
    if (const std::optional<gemm_form> g = lower_to_gemm(r.step)) {
      r.gemm = *g;
      return r;
    }
  }
  return std::nullopt;
}

template <class T>
void evaluate_gemm(const gemm_form& g, const T* a, const T* b, T* d) {
  const T* x = g.swapped ? b : a;
  const T* y = g.swapped ? a : b;
  for (i64 p = 0; p < g.batch; ++p) {
    const T* xb = x + p * g.stride_x;
    const T* yb = y + p * g.stride_y;
    T* cb = d + p * g.stride_c;
    for (i64 j = 0; j < g.n; ++j)
      for (i64 i = 0; i < g.m; ++i) {
        T acc{};
        for (i64 l = 0; l < g.k; ++l) {
          const T xv = g.trans_x ? xb[l + i * g.ldx] : xb[i + l * g.ldx];
          const T yv = g.trans_y ? yb[j + l * g.ldy] : yb[l + j * g.ldy];
          acc += xv * yv;
        }
        cb[i + j * g.ldc] = acc;
      }
  }
}

template void evaluate_gemm<float>(const gemm_form&, const float*, const float*, float*);
template void evaluate_gemm<double>(const gemm_form&, const double*, const double*, double*);
template void evaluate_gemm<std::complex<float>>(const gemm_form&, const std::complex<float>*, const std::complex<float>*, std::complex<float>*);
template void evaluate_gemm<std::complex<double>>(const gemm_form&, const std::complex<double>*, const std::complex<double>*, std::complex<double>*);

}  // namespace tnrt
