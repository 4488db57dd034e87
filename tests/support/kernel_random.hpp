#pragma once
// Random material for the tests of tnrt's own kernels (fused small steps, tiled large x small steps):
// nonzero random values, strided layouts, random labelled steps, random trees
// with diagonals, hyperedges, unary steps and one-sided sums, and an error bound computed by
// evaluating the same lowered step on |values| (so cancellation cannot hide or fake an error).
// Header-only; used by tests/unit/test_fusion.cpp, tests/unit/test_tiled.cpp and
// tests/gpu/test_cuda_kernels.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/mode_orders.hpp"
#include "core/step_lowering.hpp"
#include "tnrt/dtype.hpp"
#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::kerntest {

using i64 = std::int64_t;

template <class T>
struct is_complex_t : std::false_type {};
template <class R>
struct is_complex_t<std::complex<R>> : std::true_type {};

/// T's real type (float for complex<float>).
template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, double>) return "f64";
  if constexpr (std::is_same_v<T, std::complex<float>>) return "c64";
  return "c128";
}

/// Machine epsilon of T's real type.
template <class T>
double eps_of() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>)
    return static_cast<double>(std::numeric_limits<float>::epsilon());
  return std::numeric_limits<double>::epsilon();
}

/// Magnitudes in [0.5, 1.5), random signs (both parts for complex): never zero.
template <class T>
T random_value(std::mt19937_64& rng) {
  auto part = [&]() {
    std::uniform_real_distribution<double> u(0.5, 1.5);
    const double v = u(rng);
    return rng() % 2 ? v : -v;
  };
  if constexpr (is_complex_t<T>::value) {
    using R = typename T::value_type;
    const R re = static_cast<R>(part());
    const R im = static_cast<R>(part());
    return T(re, im);
  } else {
    return static_cast<T>(part());
  }
}

/// NaN (both parts): an element that must never be read.
template <class T>
T guard_value() {
  if constexpr (is_complex_t<T>::value) {
    using R = typename T::value_type;
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  } else {
    return std::numeric_limits<T>::quiet_NaN();
  }
}

/// A finite value that must never be overwritten (padding of outputs).
template <class T>
T sentinel_value() {
  if constexpr (is_complex_t<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(-12345.5), static_cast<R>(6789.25));
  } else {
    return static_cast<T>(-12345.5);
  }
}

template <class T>
bool same_bits_value(const T& x, const T& y) {
  if constexpr (is_complex_t<T>::value)
    return x.real() == y.real() && x.imag() == y.imag();
  else
    return x == y;
}

template <class T>
bool is_nan_value(const T& x) {
  if constexpr (is_complex_t<T>::value)
    return std::isnan(x.real()) || std::isnan(x.imag());
  else
    return std::isnan(x);
}

/// |x| as a double, T's magnitude.
template <class T>
double magnitude(const T& x) {
  return static_cast<double>(std::abs(x));
}

inline i64 product(const std::vector<i64>& v) {
  i64 p = 1;
  for (i64 x : v) p *= x;
  return p;
}

/// Elements a buffer needs for every addressed element (strides non-negative): max offset + 1.
inline i64 span_of(const std::vector<i64>& extents, const std::vector<i64>& strides) {
  i64 top = 0;
  for (std::size_t i = 0; i < extents.size(); ++i) top += (extents[i] - 1) * strides[i];
  return top + 1;
}

// ---- layouts ----------------------------------------------------------------------------------

enum class layout_kind { row_major, column_major, permuted, padded };
inline const char* name_of(layout_kind k) {
  switch (k) {
    case layout_kind::row_major: return "row";
    case layout_kind::column_major: return "col";
    case layout_kind::permuted: return "perm";
    case layout_kind::padded: return "perm+pad";
  }
  return "?";
}

inline layout_kind random_layout(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return layout_kind::row_major;
    case 1: return layout_kind::column_major;
    case 2: return layout_kind::permuted;
    default: return layout_kind::padded;
  }
}

/// Strides for `e` under layout `k`: dense row/column-major, a dense random permutation, or a
/// random permutation with gaps between modes (and sometimes no unit-stride mode).
inline std::vector<i64> make_strides(std::mt19937_64& rng, const std::vector<i64>& e, layout_kind k) {
  if (k == layout_kind::row_major) return dense_strides(e, false);
  if (k == layout_kind::column_major) return dense_strides(e, true);
  std::vector<std::size_t> perm(e.size());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<i64> s(e.size());
  const bool pad = k == layout_kind::padded;
  i64 acc = pad ? 1 + static_cast<i64>(rng() % 2) : 1;
  for (std::size_t p : perm) {
    s[p] = acc;
    acc *= e[p] + (pad ? static_cast<i64>(rng() % 3) : 0);
  }
  return s;
}

// ---- one labelled step --------------------------------------------------------------------------

struct operand_case {
  std::vector<label_t> labels;
  std::vector<i64> strides;
  layout_kind layout = layout_kind::row_major;
};

struct step_case {
  bool unary = false;
  operand_case a, b, d;  // b unused when unary
  std::vector<i64> extents;  // by label id
  int small_side = -1;       // large x small cases: 0 when a is the intended small operand, 1 when b is
};

inline std::vector<i64> extents_of(const std::vector<label_t>& labels, const std::vector<i64>& extents) {
  std::vector<i64> e;
  for (label_t l : labels) e.push_back(extents[static_cast<std::size_t>(l)]);
  return e;
}

inline i64 span_of(const operand_case& o, const std::vector<i64>& extents) { return span_of(extents_of(o.labels, extents), o.strides); }

inline std::string describe(const operand_case& o, const std::vector<i64>& extents) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < o.labels.size(); ++i) os << (i ? " " : "") << "L" << o.labels[i] << "(" << extents[static_cast<std::size_t>(o.labels[i])] << ")";
  os << "] strides {";
  for (std::size_t i = 0; i < o.strides.size(); ++i) os << (i ? "," : "") << o.strides[i];
  os << "} " << name_of(o.layout);
  return os.str();
}

inline std::string describe(const step_case& s) {
  std::ostringstream os;
  os << (s.unary ? "unary: " : "binary: ") << describe(s.a, s.extents);
  if (!s.unary) os << "  *  " << describe(s.b, s.extents);
  os << "  ->  " << describe(s.d, s.extents);
  return os.str();
}

inline std::string describe(const strided_operand& o) {
  std::ostringstream os;
  os << "{";
  for (std::size_t i = 0; i < o.modes.size(); ++i) os << (i ? " " : "") << "m" << o.modes[i] << ":" << o.extents[i] << "/" << o.strides[i];
  os << "}";
  return os.str();
}

inline std::string describe(const lowered_step& l) {
  if (l.kind == lowered_kind::reduction) return "reduction A" + describe(l.a) + " -> D" + describe(l.d);
  return "contraction A" + describe(l.a) + " B" + describe(l.b) + " -> D" + describe(l.d);
}

inline lowered_step lower(const step_case& s) {
  const labelled_layout la{&s.a.labels, s.a.strides};
  const labelled_layout lb{&s.b.labels, s.b.strides};
  const labelled_layout ld{&s.d.labels, s.d.strides};
  return lower_step(la, s.unary ? nullptr : &lb, ld, s.extents);
}

inline void assign_layouts(std::mt19937_64& rng, step_case& s) {
  for (operand_case* o : {&s.a, &s.b, &s.d}) {
    o->layout = random_layout(rng);
    o->strides = make_strides(rng, extents_of(o->labels, s.extents), o->layout);
  }
}

/// A big x small step from its label lists: shuffles them, puts Small on a random side (a or b) and
/// assigns random layouts. False when the lowered Small does not have fewer elements than Big (the
/// lowered counts include a one-sided sum's stride-0 mode in the other operand): draw again.
inline bool place_big_small(std::mt19937_64& rng, step_case& s, std::vector<label_t> big, std::vector<label_t> small, std::vector<label_t> d) {
  std::shuffle(big.begin(), big.end(), rng);
  std::shuffle(small.begin(), small.end(), rng);
  std::shuffle(d.begin(), d.end(), rng);
  const bool small_is_a = rng() % 2 == 0;
  s.a.labels = small_is_a ? small : big;
  s.b.labels = small_is_a ? big : small;
  s.d.labels = std::move(d);
  s.small_side = small_is_a ? 0 : 1;
  assign_layouts(rng, s);
  const lowered_step l = lower(s);
  const i64 ea = product(l.a.extents), eb = product(l.b.extents);
  return small_is_a ? ea < eb : eb < ea;
}

/// Occurrences of a label in an operand: usually 1, sometimes a diagonal (2).
inline int multiplicity(std::mt19937_64& rng, int percent_diagonal) { return static_cast<int>(rng() % 100) < percent_diagonal ? 2 : 1; }

/// A random general step over up to 6 labels (extents 1..4): batch, free, contracted, one-sided
/// sums, diagonals, outer products, scalars; unary about one time in five. Operands and the result
/// at most `max_elements` elements, the iteration space at most `max_space`.
inline step_case random_general_step(std::mt19937_64& rng, i64 max_elements = 1024, i64 max_space = 4096) {
  enum class role { batch, free_a, free_b, contracted, summed_a, summed_b };
  for (;;) {
    step_case s;
    s.unary = rng() % 5 == 0;
    const std::size_t n = static_cast<std::size_t>(rng() % 7);
    std::vector<label_t> pool(24);
    std::iota(pool.begin(), pool.end(), label_t{0});
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(n);
    const label_t max_id = pool.empty() ? 0 : *std::max_element(pool.begin(), pool.end());
    s.extents.assign(static_cast<std::size_t>(max_id) + 1, 1000);  // unused ids: absurd extents
    std::vector<i64> used;
    for (label_t l : pool) {
      const auto r = rng() % 10;
      const i64 e = r < 2 ? 1 : r < 5 ? 2 : r < 8 ? 3 : 4;
      s.extents[static_cast<std::size_t>(l)] = e;
      used.push_back(e);
    }
    if (product(used) > max_space) continue;
    // scenario: 0 general, 1 outer product, 2 scalar result
    const auto scenario = rng() % 6;
    for (label_t l : pool) {
      if (s.unary) {
        for (int m = multiplicity(rng, 15); m > 0; --m) s.a.labels.push_back(l);
        if (scenario != 2 && rng() % 2 == 0) s.d.labels.push_back(l);
        continue;
      }
      role ro = static_cast<role>(rng() % 6);
      if (scenario == 1) ro = static_cast<role>(rng() % 3);                                   // batch / free only
      if (scenario == 2) ro = static_cast<role>(3 + rng() % 3);                               // nothing kept
      const bool in_a = ro == role::batch || ro == role::free_a || ro == role::contracted || ro == role::summed_a;
      const bool in_b = ro == role::batch || ro == role::free_b || ro == role::contracted || ro == role::summed_b;
      const bool in_d = ro == role::batch || ro == role::free_a || ro == role::free_b;
      if (in_a)
        for (int m = multiplicity(rng, 15); m > 0; --m) s.a.labels.push_back(l);
      if (in_b)
        for (int m = multiplicity(rng, 15); m > 0; --m) s.b.labels.push_back(l);
      if (in_d) s.d.labels.push_back(l);
    }
    std::shuffle(s.a.labels.begin(), s.a.labels.end(), rng);
    std::shuffle(s.b.labels.begin(), s.b.labels.end(), rng);
    std::shuffle(s.d.labels.begin(), s.d.labels.end(), rng);
    bool too_big = false;
    for (const operand_case* o : {&s.a, &s.b, &s.d})
      if (product(extents_of(o->labels, s.extents)) > max_elements) too_big = true;
    if (too_big) continue;
    assign_layouts(rng, s);
    return s;
  }
}

// ---- error bound -------------------------------------------------------------------------------

/// The lowered step on |a|, |b| in double: per element of D, the sum of |terms|.
template <class T>
std::vector<double> magnitude_bound(const lowered_step& l, const std::vector<T>& a, const std::vector<T>& b, std::size_t d_elements) {
  std::vector<double> ma(a.size()), mb(b.size()), md(d_elements, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) ma[i] = is_nan_value(a[i]) ? 0.0 : magnitude(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) mb[i] = is_nan_value(b[i]) ? 0.0 : magnitude(b[i]);
  evaluate_lowered<double>(l, ma.data(), mb.empty() ? nullptr : mb.data(), md.data());
  return md;
}

/// Number of terms summed into one element of D (the product of the extents of modes not in D).
inline i64 sum_length(const lowered_step& l) {
  i64 len = 1;
  std::vector<std::int32_t> seen;
  for (const strided_operand* o : {&l.a, &l.b})
    for (std::size_t i = 0; i < o->modes.size(); ++i) {
      const std::int32_t m = o->modes[i];
      if (std::find(seen.begin(), seen.end(), m) != seen.end()) continue;
      seen.push_back(m);
      if (std::find(l.d.modes.begin(), l.d.modes.end(), m) == l.d.modes.end()) len *= o->extents[i];
    }
  return len;
}

/// Offsets of every element of an operand (row-major over its positions).
inline std::vector<i64> all_offsets(const std::vector<i64>& extents, const std::vector<i64>& strides) {
  std::vector<i64> offs;
  const i64 n = product(extents);
  std::vector<i64> idx(extents.size(), 0);
  for (i64 c = 0; c < n; ++c) {
    i64 off = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
    offs.push_back(off);
    for (std::size_t i = idx.size(); i-- > 0;) {
      if (++idx[i] < extents[i]) break;
      idx[i] = 0;
    }
  }
  return offs;
}

/// An operand's host buffer: its span followed by `guards` elements, random values at its elements
/// and NaN (guard_value) everywhere else, so that a read of padding or past the end shows up.
template <class T>
std::vector<T> random_operand(std::mt19937_64& rng, const operand_case& o, const std::vector<i64>& extents, std::size_t guards) {
  std::vector<T> v(static_cast<std::size_t>(span_of(o, extents)) + guards, guard_value<T>());
  for (i64 off : all_offsets(extents_of(o.labels, extents), o.strides)) v[static_cast<std::size_t>(off)] = random_value<T>(rng);
  return v;
}

/// A step case's operands on the host (random_operand: lhs first, then rhs, from `rng`) and the
/// reference D (evaluate_lowered of `l` into D's span plus `guards`, sentinel elsewhere), with the
/// spans, and which buffer is the small / big operand (step_case::small_side).
template <class T>
struct step_data {
  std::vector<T> a, b, want;
  std::size_t span_a = 0, span_b = 0, span_d = 0;
  const void* small = nullptr;
  const void* big = nullptr;
};

template <class T>
step_data<T> make_step_data(std::mt19937_64& rng, const step_case& sc, const lowered_step& l, std::size_t guards) {
  step_data<T> s;
  s.a = random_operand<T>(rng, sc.a, sc.extents, guards);
  s.b = random_operand<T>(rng, sc.b, sc.extents, guards);
  s.span_a = s.a.size() - guards;
  s.span_b = s.b.size() - guards;
  s.span_d = static_cast<std::size_t>(span_of(sc.d, sc.extents));
  s.want.assign(s.span_d + guards, sentinel_value<T>());
  evaluate_lowered<T>(l, s.a.data(), s.b.data(), s.want.data());
  s.small = sc.small_side == 0 ? static_cast<const void*>(s.a.data()) : static_cast<const void*>(s.b.data());
  s.big = sc.small_side == 0 ? static_cast<const void*>(s.b.data()) : static_cast<const void*>(s.a.data());
  return s;
}

/// Checks a kernel's D buffer `got` against `want`: elements outside D (by l.d's extents and strides)
/// must still hold the sentinel, elements of D must be within tol * bound[i] of want. Reports the
/// first 5 bad elements through ADD_FAILURE and returns how many it reported.
template <class T>
int check_d(const lowered_step& l, const std::vector<T>& got, const std::vector<T>& want, const std::vector<double>& bound, double tol) {
  std::vector<char> in_d(got.size(), 0);
  for (i64 off : all_offsets(l.d.extents, l.d.strides)) in_d[static_cast<std::size_t>(off)] = 1;
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (in_d[i] == 0) {
      if (!same_bits_value(got[i], sentinel_value<T>())) {
        ADD_FAILURE() << "element " << i << " outside D was written";
        ++bad;
      }
      continue;
    }
    const double err = static_cast<double>(std::abs(got[i] - want[i]));
    if (!(err <= tol * bound[i])) {
      ADD_FAILURE() << "D offset " << i << ": got " << got[i] << " want " << want[i] << " (|err| " << err << " > " << tol << " * " << bound[i] << ")";
      ++bad;
    }
  }
  return bad;
}

// ---- random trees ------------------------------------------------------------------------------

struct tree_spec {
  int min_inputs = 2, max_inputs = 9;
  int max_labels = 12;
  i64 max_extent = 4;
  int max_rank = 5;
  int percent_unary = 10;       // a unary step on one live operand
  int percent_keep_extra = 10;  // a step keeps a label nobody needs later (a one-sided sum later)
  int percent_diagonal = 8;     // an input repeats a label
  i64 max_elements = 1 << 14;   // largest operand of the tree
};

/// A problem of `labels` labels l0, l1, ... of one extent, no inputs or steps yet.
inline problem labelled_problem(dtype t, const char* source, int labels, i64 extent) {
  problem p;
  p.type = t;
  p.source = source;
  for (int l = 0; l < labels; ++l) {
    p.net.extents.push_back(extent);
    std::string name = std::to_string(l);
    name.insert(name.begin(), 'l');  // (not "l" + ...: g++ 12 -Wrestrict false positive)
    p.net.label_names.push_back(std::move(name));
  }
  return p;
}

/// The product of `mats` matrices extent x extent (M_i over labels i, i+1) as a balanced tree:
/// neighbours in pairs, round after round, an odd one out carried up to the next round. Its steps
/// are numbered round by round, so step ids and levels do not agree where an odd one is carried.
inline problem balanced_matrix_tree(dtype t, int mats, i64 extent) {
  problem p = labelled_problem(t, "balanced matrix tree", mats + 1, extent);
  for (int l = 0; l < mats; ++l) p.net.inputs.push_back({l, l + 1});
  p.net.output = {0, mats};
  std::vector<std::pair<int, std::pair<int, int>>> round;  // operand id, the labels (lo, hi) it spans
  for (int l = 0; l < mats; ++l) round.push_back({l, {l, l + 1}});
  int next_id = mats;
  while (round.size() > 1) {
    std::vector<std::pair<int, std::pair<int, int>>> up;
    for (std::size_t i = 0; i + 1 < round.size(); i += 2) {
      const int lo = round[i].second.first, hi = round[i + 1].second.second;
      p.tree.steps.push_back(step{round[i].first, round[i + 1].first, {lo, hi}});
      up.push_back({next_id++, {lo, hi}});
    }
    if (round.size() % 2 == 1) up.push_back(round.back());
    round = std::move(up);
  }
  validate(p.net, p.tree);
  return p;
}

/// A random network and a random tree over it (hyperedges, diagonals, size-1 extents, unary steps,
/// one-sided sums, scalar results possible). Seeds are tried from `seed` upward until every
/// operand fits `max_elements`; `used_seed` tells which one was taken.
inline problem random_tree_problem(const tree_spec& spec, std::uint64_t seed, dtype type, std::uint64_t* used_seed = nullptr) {
  for (std::uint64_t attempt = 0;; ++attempt) {
    std::mt19937_64 rng(seed + attempt);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    problem p;
    p.type = type;
    p.source = std::string("random tree seed ").append(std::to_string(seed + attempt));
    const int n_labels = pick(2, spec.max_labels);
    for (int l = 0; l < n_labels; ++l) {
      p.net.extents.push_back(pick(0, 9) == 0 ? 1 : pick(2, static_cast<int>(spec.max_extent)));
      std::string name = std::to_string(l);
      name.insert(name.begin(), 'l');
      p.net.label_names.push_back(std::move(name));
    }
    const int n_ops = pick(spec.min_inputs, spec.max_inputs);
    for (int i = 0; i < n_ops; ++i) {
      std::vector<label_t> ls;
      const int rank = pick(0, spec.max_rank);
      for (int r = 0; r < rank; ++r) {
        const label_t l = pick(0, n_labels - 1);
        if (std::find(ls.begin(), ls.end(), l) != ls.end() && pick(0, 99) >= spec.percent_diagonal) continue;
        ls.push_back(l);
      }
      p.net.inputs.push_back(ls);
    }
    std::vector<label_t> present;
    for (const auto& ls : p.net.inputs)
      for (label_t l : ls)
        if (std::find(present.begin(), present.end(), l) == present.end()) present.push_back(l);
    std::shuffle(present.begin(), present.end(), rng);
    for (label_t l : present)
      if (pick(0, 3) == 0) p.net.output.push_back(l);

    struct live_op {
      int id;
      std::vector<label_t> labels;
    };
    std::vector<live_op> live;
    for (int i = 0; i < n_ops; ++i) live.push_back({i, p.net.inputs[static_cast<std::size_t>(i)]});
    auto needed_elsewhere = [&](label_t l, std::size_t skip1, std::size_t skip2) {
      if (std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end()) return true;
      for (std::size_t j = 0; j < live.size(); ++j)
        if (j != skip1 && j != skip2 && std::find(live[j].labels.begin(), live[j].labels.end(), l) != live[j].labels.end()) return true;
      return false;
    };
    int next_id = n_ops;
    auto make_out = [&](const std::vector<label_t>& all, std::size_t i, std::size_t j) {
      std::vector<label_t> out;
      for (label_t l : all) {
        if (std::find(out.begin(), out.end(), l) != out.end()) continue;
        if (needed_elsewhere(l, i, j) || pick(0, 99) < spec.percent_keep_extra) out.push_back(l);
      }
      std::shuffle(out.begin(), out.end(), rng);
      return out;
    };
    while (live.size() > 1) {
      if (pick(0, 99) < spec.percent_unary) {
        const auto i = static_cast<std::size_t>(pick(0, static_cast<int>(live.size()) - 1));
        step s{live[i].id, -1, make_out(live[i].labels, i, i)};
        p.tree.steps.push_back(s);
        live[i] = {next_id++, s.out};
        continue;
      }
      std::shuffle(live.begin(), live.end(), rng);
      const std::size_t i = live.size() - 1, j = live.size() - 2;
      std::vector<label_t> all = live[i].labels;
      all.insert(all.end(), live[j].labels.begin(), live[j].labels.end());
      step s{live[i].id, live[j].id, live.size() == 2 ? p.net.output : make_out(all, i, j)};
      p.tree.steps.push_back(s);
      live.pop_back();
      live.back() = {next_id++, s.out};
    }
    if (p.tree.steps.empty() || live.front().labels != p.net.output) {
      p.tree.steps.push_back(step{live.front().id, -1, p.net.output});
    }
    validate(p.net, p.tree);
    bool fits = true;
    for (const auto& ls : operand_labels(p.net, p.tree))
      if (element_count(p.net.shape_of(ls)) > spec.max_elements) fits = false;
    if (!fits) continue;
    if (used_seed != nullptr) *used_seed = seed + attempt;
    return p;
  }
}

/// Inputs with random nonzero values (magnitudes in [0.5, 1.5), random signs).
inline std::vector<host_tensor> random_tree_inputs(const problem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<host_tensor> in;
  for (const auto& ls : p.net.inputs) {
    in.emplace_back(p.type, p.net.shape_of(ls));
    host_tensor& t = in.back();
    visit_dtype(p.type, [&](auto zero) {
      using T = decltype(zero);
      for (i64 i = 0; i < t.size(); ++i) t.as<T>()[i] = random_value<T>(rng);
    });
  }
  return in;
}

/// Layouts and lowered forms of every step as the CUDA backend picks them: inputs row-major,
/// intermediates by `policy` (`planned`: core's planned_strides, a choice over the whole tree), the
/// last step's result row-major.
struct lowered_tree {
  std::vector<std::vector<i64>> strides;  // by operand id
  std::vector<lowered_step> steps;
};

inline lowered_tree lower_tree(const problem& p, layout_policy policy) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size(), steps = p.tree.steps.size();
  const auto labels = operand_labels(net, p.tree);
  lowered_tree t;
  t.strides.resize(n + steps);
  t.steps.resize(steps);
  for (std::size_t i = 0; i < n; ++i) t.strides[i] = row_major_strides(net.shape_of(net.inputs[i]));
  const std::vector<std::vector<i64>> planned = policy == layout_policy::planned ? planned_strides(p) : std::vector<std::vector<i64>>{};
  for (std::size_t k = 0; k < steps; ++k) {
    const step& s = p.tree.steps[k];
    const labelled_layout la{&labels[static_cast<std::size_t>(s.lhs)], t.strides[static_cast<std::size_t>(s.lhs)]};
    labelled_layout lb;
    if (s.rhs >= 0) lb = labelled_layout{&labels[static_cast<std::size_t>(s.rhs)], t.strides[static_cast<std::size_t>(s.rhs)]};
    t.strides[n + k] = !planned.empty() ? planned[n + k]
                                         : choose_result_strides(s.out, la, s.rhs >= 0 ? &lb : nullptr, net.extents,
                                                                 k + 1 == steps ? layout_policy::row_major : policy);
    const labelled_layout ld{&s.out, t.strides[n + k]};
    t.steps[k] = lower_step(la, s.rhs >= 0 ? &lb : nullptr, ld, net.extents);
  }
  return t;
}

inline const char* name_of_policy(layout_policy p) {
  switch (p) {
    case layout_policy::row_major: return "row_major";
    case layout_policy::column_major: return "column_major";
    case layout_policy::follow: return "follow";
    case layout_policy::planned: return "planned";
  }
  return "?";
}

}  // namespace tnrt::kerntest
