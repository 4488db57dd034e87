// Lowering one einsum step to the strided, unique-modes-per-operand form cuTENSOR takes.
//
// The central check: for hundreds of random steps (fixed, logged seeds) in every dtype, with
// diagonals (labels repeated inside an operand), labels summed out of one operand only, batch
// labels, outer products, rank-0 operands, size-1 extents and unary steps, on row-major,
// column-major, permuted/padded and broadcast (stride-0) layouts, evaluate_lowered(lower_step(...))
// must match a naive evaluation written here straight from the einsum definition:
//     out[o] = sum over the labels not in out of lhs[.] * rhs[.]   (repeated label = equal indices)
// Errors are measured per element against the sum of |terms| (so cancellation cannot hide or fake
// an error): |got - ref| <= tol * sum |lhs|*|rhs|, tol = 1e-12 (f64, c128), 1e-4 (f32, c64).
// Output buffers are padded and pre-filled with a sentinel: D must be overwritten (not
// accumulated into) at every element of its extents, and nothing else may be written.
//
// Also checked: the invariants of the lowered form (unique modes per operand; D's modes in A or B;
// for a contraction, A's modes in B or D and B's in A or D; no rank-0 operand; modes numbered
// 0..k-1 in first-appearance order A, B, D; consistent extents; the iteration space is preserved),
// and key(): equal for structurally identical steps with different label ids, different when any
// extent or stride differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/step_lowering.hpp"
#include "support/kernel_random.hpp"
#include "tnrt/dtype.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/network.hpp"

namespace {

using tnrt::label_t;
using tnrt::labelled_layout;
using tnrt::lowered_kind;
using tnrt::lowered_step;
using tnrt::strided_operand;
using i64 = std::int64_t;
using tnrt::kerntest::all_offsets;  // element offsets, row-major over an operand's positions
using tnrt::kerntest::product;
using tnrt::kerntest::type_name;

// ---- a step: labels, extents (by label id), strides ------------------------------------------

enum class layout_kind { row_major, column_major, permuted_padded, broadcast };
const char* name_of(layout_kind k) {
  switch (k) {
    case layout_kind::row_major: return "row";
    case layout_kind::column_major: return "col";
    case layout_kind::permuted_padded: return "perm+pad";
    case layout_kind::broadcast: return "bcast";
  }
  return "?";
}

struct operand_spec {
  std::vector<label_t> labels;
  std::vector<i64> strides;
  layout_kind layout = layout_kind::row_major;
};

struct step_spec {
  bool unary = false;
  operand_spec lhs, rhs, out;  // rhs unused when unary
  std::vector<i64> extents;    // by label id
};

std::string describe(const operand_spec& o, const std::vector<i64>& extents) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < o.labels.size(); ++i)
    os << (i ? " " : "") << "L" << o.labels[i] << "(" << extents[static_cast<std::size_t>(o.labels[i])] << ")";
  os << "] strides {";
  for (std::size_t i = 0; i < o.strides.size(); ++i) os << (i ? "," : "") << o.strides[i];
  os << "} " << name_of(o.layout);
  return os.str();
}

std::string describe(const step_spec& s) {
  std::ostringstream os;
  os << (s.unary ? "unary: " : "binary: ") << describe(s.lhs, s.extents);
  if (!s.unary) os << "  *  " << describe(s.rhs, s.extents);
  os << "  ->  " << describe(s.out, s.extents);
  return os.str();
}

std::string describe(const strided_operand& o) {
  std::ostringstream os;
  os << "modes {";
  for (std::size_t i = 0; i < o.modes.size(); ++i) os << (i ? "," : "") << o.modes[i];
  os << "} extents {";
  for (std::size_t i = 0; i < o.extents.size(); ++i) os << (i ? "," : "") << o.extents[i];
  os << "} strides {";
  for (std::size_t i = 0; i < o.strides.size(); ++i) os << (i ? "," : "") << o.strides[i];
  os << "}";
  return os.str();
}

std::string describe(const lowered_step& l) {
  return std::string(l.kind == lowered_kind::contraction ? "contraction" : "reduction") + "  A " + describe(l.a) + "  B " +
         describe(l.b) + "  D " + describe(l.d);
}

std::vector<i64> extents_of(const operand_spec& o, const std::vector<i64>& extents) {
  std::vector<i64> e;
  for (label_t l : o.labels) e.push_back(extents[static_cast<std::size_t>(l)]);
  return e;
}

// Elements a buffer needs to hold every addressed element (strides non-negative).
std::size_t buffer_elements(const std::vector<i64>& extents, const std::vector<i64>& strides) {
  i64 top = 0;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == 0) return 1;
    top += (extents[i] - 1) * strides[i];
  }
  return static_cast<std::size_t>(top + 1);
}

std::vector<i64> make_strides(std::mt19937_64& rng, const std::vector<i64>& e, layout_kind k) {
  switch (k) {
    case layout_kind::row_major: return tnrt::dense_strides(e, false);
    case layout_kind::column_major: return tnrt::dense_strides(e, true);
    case layout_kind::permuted_padded:
    case layout_kind::broadcast: {
      std::vector<std::size_t> perm(e.size());
      std::iota(perm.begin(), perm.end(), std::size_t{0});
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<i64> s(e.size());
      i64 acc = 1 + static_cast<i64>(rng() % 2);  // sometimes no unit-stride mode at all
      for (std::size_t p : perm) {
        s[p] = acc;
        acc *= e[p] + static_cast<i64>(rng() % 3);  // padding between modes
      }
      if (k == layout_kind::broadcast && !e.empty()) s[rng() % e.size()] = 0;  // read-only stride-0 mode
      return s;
    }
  }
  return {};
}

layout_kind random_layout(std::mt19937_64& rng, bool allow_broadcast) {
  const auto r = rng() % (allow_broadcast ? 8 : 7);
  if (r < 2) return layout_kind::row_major;
  if (r < 4) return layout_kind::column_major;
  if (r < 7) return layout_kind::permuted_padded;
  return layout_kind::broadcast;
}

// Roles of a label in a binary step.
enum class role { batch, free_lhs, free_rhs, contracted, summed_lhs, summed_rhs };
// Scenarios, to be sure each shape of step occurs often.
enum class scenario { general, outer, lhs_scalar, rhs_scalar, both_scalar, out_scalar, one_sided, unary_general, unary_full, unary_keep, count };

std::vector<role> roles_for(scenario sc) {
  switch (sc) {
    case scenario::outer: return {role::free_lhs, role::free_rhs, role::batch};
    case scenario::lhs_scalar: return {role::free_rhs, role::summed_rhs};
    case scenario::rhs_scalar: return {role::free_lhs, role::summed_lhs};
    case scenario::both_scalar: return {};
    case scenario::out_scalar: return {role::contracted, role::summed_lhs, role::summed_rhs};
    case scenario::one_sided: return {role::summed_lhs, role::summed_rhs, role::free_lhs, role::free_rhs};
    default: return {role::batch, role::free_lhs, role::free_rhs, role::contracted, role::summed_lhs, role::summed_rhs};
  }
}

// Occurrences of a label in an input: usually 1, sometimes a diagonal (2 or 3).
int multiplicity(std::mt19937_64& rng) {
  const auto r = rng() % 100;
  if (r < 78) return 1;
  if (r < 96) return 2;
  return 3;
}

step_spec random_step(std::mt19937_64& rng, scenario sc) {
  constexpr i64 max_iteration_space = 3000;
  constexpr i64 max_operand_elements = 1 << 14;
  for (;;) {
    step_spec s;
    s.unary = sc == scenario::unary_general || sc == scenario::unary_full || sc == scenario::unary_keep;
    std::size_t n = sc == scenario::both_scalar ? 0 : static_cast<std::size_t>(rng() % 7);
    if (sc == scenario::unary_full || sc == scenario::unary_keep) n = std::max<std::size_t>(n, 1);
    // Label ids: distinct, sparse and unordered, so renumbering is exercised.
    std::vector<label_t> pool(40);
    std::iota(pool.begin(), pool.end(), label_t{0});
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(n);
    label_t max_id = pool.empty() ? 0 : *std::max_element(pool.begin(), pool.end());
    s.extents.assign(static_cast<std::size_t>(max_id) + 1, 1000);  // unused ids: absurd extents
    std::vector<i64> used_extents;
    for (label_t l : pool) {
      const auto r = rng() % 10;
      const i64 e = r < 3 ? 1 : r < 6 ? 2 : r < 9 ? 3 : 4;
      s.extents[static_cast<std::size_t>(l)] = e;
      used_extents.push_back(e);
    }
    if (product(used_extents) > max_iteration_space) continue;

    std::vector<label_t> out;
    if (s.unary) {
      for (label_t l : pool) {
        const bool keep = sc == scenario::unary_keep ? true : sc == scenario::unary_full ? false : rng() % 2 == 0;
        for (int m = multiplicity(rng); m > 0; --m) s.lhs.labels.push_back(l);
        if (keep) out.push_back(l);
      }
    } else {
      const std::vector<role> roles = roles_for(sc);
      for (label_t l : pool) {
        const role ro = roles[rng() % roles.size()];
        const bool in_l = ro == role::batch || ro == role::free_lhs || ro == role::contracted || ro == role::summed_lhs;
        const bool in_r = ro == role::batch || ro == role::free_rhs || ro == role::contracted || ro == role::summed_rhs;
        const bool in_o = ro == role::batch || ro == role::free_lhs || ro == role::free_rhs;
        if (in_l)
          for (int m = multiplicity(rng); m > 0; --m) s.lhs.labels.push_back(l);
        if (in_r)
          for (int m = multiplicity(rng); m > 0; --m) s.rhs.labels.push_back(l);
        if (in_o) out.push_back(l);
      }
    }
    std::shuffle(s.lhs.labels.begin(), s.lhs.labels.end(), rng);
    std::shuffle(s.rhs.labels.begin(), s.rhs.labels.end(), rng);
    std::shuffle(out.begin(), out.end(), rng);
    s.out.labels = out;

    bool too_big = false;
    for (operand_spec* o : {&s.lhs, &s.rhs, &s.out}) {
      const auto e = extents_of(*o, s.extents);
      if (product(e) > max_operand_elements) too_big = true;
      o->layout = random_layout(rng, o != &s.out);
      o->strides = make_strides(rng, e, o->layout);
    }
    if (too_big) continue;
    return s;
  }
}

// ---- values -----------------------------------------------------------------------------------

// magnitudes in [0.5, 1.5), random signs: never zero, no trivial values
using tnrt::kerntest::is_complex_t;
using tnrt::kerntest::random_value;

template <class T>
std::vector<T> random_buffer(std::mt19937_64& rng, std::size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T>(rng);
  return v;
}

template <class T>
T sentinel() {
  if constexpr (is_complex_t<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(-12345.5), static_cast<R>(6789.25));
  } else {
    return static_cast<T>(-12345.5);
  }
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>)
    return 1e-12;
  else
    return 1e-4;
}

// ---- the naive reference, straight from the einsum definition ---------------------------------

template <class T>
struct naive_result {
  std::vector<T> value;       // indexed like the output buffer
  std::vector<double> bound;  // sum of |terms| per output element
};

template <class T>
naive_result<T> naive_einsum(const step_spec& s, const std::vector<T>& a, const std::vector<T>& b, std::size_t out_elements) {
  // every distinct label of the step, each with one index
  std::vector<label_t> all;
  for (const operand_spec* o : {&s.lhs, &s.rhs, &s.out})
    for (label_t l : o->labels)
      if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
  std::map<label_t, std::size_t> slot;
  std::vector<i64> ext;
  for (std::size_t i = 0; i < all.size(); ++i) {
    slot[all[i]] = i;
    ext.push_back(s.extents[static_cast<std::size_t>(all[i])]);
  }
  auto offset = [&](const operand_spec& o, const std::vector<i64>& idx) {
    i64 off = 0;
    for (std::size_t i = 0; i < o.labels.size(); ++i) off += idx[slot.at(o.labels[i])] * o.strides[i];
    return static_cast<std::size_t>(off);
  };
  naive_result<T> r{std::vector<T>(out_elements, T{}), std::vector<double>(out_elements, 0.0)};
  std::vector<i64> idx(all.size(), 0);
  const i64 total = product(ext);
  for (i64 c = 0; c < total; ++c) {
    T term = a[offset(s.lhs, idx)];
    double mag = static_cast<double>(std::abs(term));
    if (!s.unary) {
      const T rv = b[offset(s.rhs, idx)];
      term *= rv;
      mag *= static_cast<double>(std::abs(rv));
    }
    const std::size_t o = offset(s.out, idx);
    r.value[o] += term;
    r.bound[o] += mag;
    for (std::size_t i = idx.size(); i-- > 0;) {
      if (++idx[i] < ext[i]) break;
      idx[i] = 0;
    }
  }
  return r;
}

// ---- lowering and invariants --------------------------------------------------------------------

lowered_step lower(const step_spec& s) {
  labelled_layout lhs{&s.lhs.labels, s.lhs.strides};
  labelled_layout rhs{&s.rhs.labels, s.rhs.strides};
  labelled_layout out{&s.out.labels, s.out.strides};
  return tnrt::lower_step(lhs, s.unary ? nullptr : &rhs, out, s.extents);
}

bool has_mode(const strided_operand& o, std::int32_t m) { return std::find(o.modes.begin(), o.modes.end(), m) != o.modes.end(); }

void expect_invariants(const step_spec& s, const lowered_step& l) {
  const bool contraction = !s.unary;
  EXPECT_EQ(l.kind, contraction ? lowered_kind::contraction : lowered_kind::reduction);
  std::vector<const strided_operand*> ops = {&l.a, &l.d};
  if (contraction) ops.insert(ops.begin() + 1, &l.b);
  if (!contraction) {
    EXPECT_TRUE(l.b.modes.empty() && l.b.extents.empty() && l.b.strides.empty()) << "reduction has no B";
  }
  std::map<std::int32_t, i64> extent_of_mode;
  for (const strided_operand* o : ops) {
    ASSERT_EQ(o->modes.size(), o->extents.size());
    ASSERT_EQ(o->modes.size(), o->strides.size());
    EXPECT_FALSE(o->modes.empty()) << "no rank-0 operand in the lowered form";
    std::set<std::int32_t> seen(o->modes.begin(), o->modes.end());
    EXPECT_EQ(seen.size(), o->modes.size()) << "a mode repeats within an operand";
    for (std::size_t i = 0; i < o->modes.size(); ++i) {
      EXPECT_GE(o->extents[i], 1);
      EXPECT_GE(o->strides[i], 0);
      auto [it, fresh] = extent_of_mode.emplace(o->modes[i], o->extents[i]);
      if (!fresh) {
        EXPECT_EQ(it->second, o->extents[i]) << "mode " << o->modes[i] << " has two extents";
      }
    }
  }
  for (std::int32_t m : l.d.modes) EXPECT_TRUE(has_mode(l.a, m) || (contraction && has_mode(l.b, m))) << "D mode " << m << " in neither A nor B";
  if (contraction) {
    for (std::int32_t m : l.a.modes) EXPECT_TRUE(has_mode(l.b, m) || has_mode(l.d, m)) << "A mode " << m << " in neither B nor D";
    for (std::int32_t m : l.b.modes) EXPECT_TRUE(has_mode(l.a, m) || has_mode(l.d, m)) << "B mode " << m << " in neither A nor D";
  }
  // 0..k-1 in first-appearance order (A, then B, then D)
  std::int32_t next = 0;
  std::set<std::int32_t> seen;
  for (const strided_operand* o : ops)
    for (std::int32_t m : o->modes)
      if (seen.insert(m).second) {
        EXPECT_EQ(m, next) << "modes not numbered in first-appearance order";
        ++next;
      }
  // The iteration space is preserved: distinct labels' extents, times at most one extent-1 mode.
  std::set<label_t> labels;
  for (const operand_spec* o : {&s.lhs, &s.rhs, &s.out})
    if (o != &s.rhs || contraction) labels.insert(o->labels.begin(), o->labels.end());
  i64 label_space = 1, mode_space = 1;
  for (label_t lb : labels) label_space *= s.extents[static_cast<std::size_t>(lb)];
  for (const auto& [m, e] : extent_of_mode) mode_space *= e;
  EXPECT_EQ(mode_space, label_space);
  EXPECT_GE(extent_of_mode.size(), labels.size());
  EXPECT_LE(extent_of_mode.size(), labels.size() + 1);
  // D addresses exactly the output's elements (same offsets, same count).
  auto d_offs = all_offsets(l.d.extents, l.d.strides);
  auto o_offs = all_offsets(extents_of(s.out, s.extents), s.out.strides);
  std::sort(d_offs.begin(), d_offs.end());
  std::sort(o_offs.begin(), o_offs.end());
  EXPECT_EQ(d_offs, o_offs) << "D does not address the output's elements";
}

struct coverage {
  int steps = 0, diagonal = 0, one_sided = 0, batch = 0, outer = 0, lhs_rank0 = 0, rhs_rank0 = 0, out_rank0 = 0, size1 = 0,
      unary = 0, unary_reduce = 0, broadcast_layout = 0, padded = 0, col = 0, row = 0;
  std::string str() const {
    std::ostringstream os;
    os << steps << " steps: diagonal " << diagonal << ", one-sided sum " << one_sided << ", batch " << batch << ", outer " << outer
       << ", rank-0 lhs/rhs/out " << lhs_rank0 << "/" << rhs_rank0 << "/" << out_rank0 << ", size-1 " << size1 << ", unary "
       << unary << " (reducing " << unary_reduce << "), layouts row " << row << " col " << col << " perm+pad " << padded
       << " bcast " << broadcast_layout;
    return os.str();
  }
};

void count(coverage& c, const step_spec& s) {
  ++c.steps;
  auto in = [](const std::vector<label_t>& v, label_t l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  auto repeats = [](std::vector<label_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) != v.end();
  };
  if (repeats(s.lhs.labels) || (!s.unary && repeats(s.rhs.labels))) ++c.diagonal;
  bool one_sided = false, batch = false, contracted = false, size1 = false;
  for (label_t l : s.lhs.labels) {
    if (!s.unary && !in(s.rhs.labels, l) && !in(s.out.labels, l)) one_sided = true;
    if (!s.unary && in(s.rhs.labels, l) && in(s.out.labels, l)) batch = true;
    if (!s.unary && in(s.rhs.labels, l) && !in(s.out.labels, l)) contracted = true;
    if (s.extents[static_cast<std::size_t>(l)] == 1) size1 = true;
  }
  for (label_t l : s.rhs.labels)
    if (!s.unary && !in(s.lhs.labels, l) && !in(s.out.labels, l)) one_sided = true;
  c.one_sided += one_sided;
  c.batch += batch;
  c.size1 += size1;
  if (!s.unary && !contracted && !s.lhs.labels.empty() && !s.rhs.labels.empty()) ++c.outer;
  if (s.lhs.labels.empty()) ++c.lhs_rank0;
  if (!s.unary && s.rhs.labels.empty()) ++c.rhs_rank0;
  if (s.out.labels.empty()) ++c.out_rank0;
  if (s.unary) {
    ++c.unary;
    for (label_t l : s.lhs.labels)
      if (!in(s.out.labels, l)) {
        ++c.unary_reduce;
        break;
      }
  }
  for (const operand_spec* o : {&s.lhs, &s.rhs, &s.out}) {
    if (o == &s.rhs && s.unary) continue;
    switch (o->layout) {
      case layout_kind::row_major: ++c.row; break;
      case layout_kind::column_major: ++c.col; break;
      case layout_kind::permuted_padded: ++c.padded; break;
      case layout_kind::broadcast: ++c.broadcast_layout; break;
    }
  }
}

// Evaluates one step both ways and compares; returns false on a fatal mismatch.
template <class T>
void check_step(std::mt19937_64& rng, const step_spec& s) {
  const lowered_step l = lower(s);
  SCOPED_TRACE("lowered: " + describe(l));
  expect_invariants(s, l);
  if (::testing::Test::HasFailure()) return;

  const auto a = random_buffer<T>(rng, buffer_elements(extents_of(s.lhs, s.extents), s.lhs.strides));
  const auto b = s.unary ? std::vector<T>{} : random_buffer<T>(rng, buffer_elements(extents_of(s.rhs, s.extents), s.rhs.strides));
  const std::size_t out_elements = buffer_elements(extents_of(s.out, s.extents), s.out.strides);
  std::vector<T> d(out_elements, sentinel<T>());
  tnrt::evaluate_lowered<T>(l, a.data(), s.unary ? nullptr : b.data(), d.data());

  const auto ref = naive_einsum<T>(s, a, b, out_elements);
  std::vector<char> addressed(out_elements, 0);
  for (i64 off : all_offsets(extents_of(s.out, s.extents), s.out.strides)) addressed[static_cast<std::size_t>(off)] = 1;
  const double tol = tolerance<T>();
  for (std::size_t i = 0; i < out_elements; ++i) {
    if (!addressed[i]) {
      ASSERT_EQ(d[i], sentinel<T>()) << "padding element " << i << " of D was written";
      continue;
    }
    const double err = static_cast<double>(std::abs(d[i] - ref.value[i]));
    ASSERT_TRUE(std::isfinite(err)) << "element " << i;
    ASSERT_LE(err, tol * ref.bound[i] + std::numeric_limits<double>::min())
        << "element " << i << ": lowered " << d[i] << " vs naive " << ref.value[i] << " (sum |terms| " << ref.bound[i] << ")";
  }
}

template <class T>
void run_random_steps(std::uint64_t base_seed, int steps) {
  coverage cov;
  for (int i = 0; i < steps; ++i) {
    const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(i);
    std::mt19937_64 rng(seed);
    const auto sc = static_cast<scenario>(static_cast<int>(rng() % static_cast<std::uint64_t>(scenario::count)));
    const step_spec s = random_step(rng, sc);
    count(cov, s);
    SCOPED_TRACE(std::string(type_name<T>()) + " seed " + std::to_string(seed) + " scenario " + std::to_string(static_cast<int>(sc)) +
                 ": " + describe(s));
    check_step<T>(rng, s);
    if (::testing::Test::HasFailure()) return;
  }
  std::printf("[ %s ] base seed %llu, %s\n", type_name<T>(), static_cast<unsigned long long>(base_seed), cov.str().c_str());
  if (steps >= 200) {
    // the generator really exercised every feature
    EXPECT_GT(cov.diagonal, 0);
    EXPECT_GT(cov.one_sided, 0);
    EXPECT_GT(cov.batch, 0);
    EXPECT_GT(cov.outer, 0);
    EXPECT_GT(cov.lhs_rank0, 0);
    EXPECT_GT(cov.rhs_rank0, 0);
    EXPECT_GT(cov.out_rank0, 0);
    EXPECT_GT(cov.size1, 0);
    EXPECT_GT(cov.unary, 0);
    EXPECT_GT(cov.unary_reduce, 0);
    EXPECT_GT(cov.row, 0);
    EXPECT_GT(cov.col, 0);
    EXPECT_GT(cov.padded, 0);
    EXPECT_GT(cov.broadcast_layout, 0);
  }
}

TEST(step_lowering, random_steps_f64) { run_random_steps<double>(1000, 2000); }
TEST(step_lowering, random_steps_c128) { run_random_steps<std::complex<double>>(5000, 2000); }
TEST(step_lowering, random_steps_f32) { run_random_steps<float>(9000, 300); }
TEST(step_lowering, random_steps_c64) { run_random_steps<std::complex<float>>(12000, 300); }

// ---- keys ---------------------------------------------------------------------------------------

TEST(step_lowering, key_is_label_independent_and_structure_sensitive) {
  int perturbed_extent = 0, perturbed_stride = 0;
  for (std::uint64_t seed = 20000; seed < 20400; ++seed) {
    std::mt19937_64 rng(seed);
    const auto sc = static_cast<scenario>(static_cast<int>(rng() % static_cast<std::uint64_t>(scenario::count)));
    const step_spec s = random_step(rng, sc);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + describe(s));
    const lowered_step l = lower(s);
    const auto k0 = l.key();

    // Same structure, other label ids (an injective relabelling into a larger id range).
    std::vector<label_t> fresh(100);
    std::iota(fresh.begin(), fresh.end(), label_t{0});
    std::shuffle(fresh.begin(), fresh.end(), rng);
    step_spec r = s;
    r.extents.assign(100, 777);
    for (operand_spec* o : {&r.lhs, &r.rhs, &r.out})
      for (label_t& lb : o->labels) {
        const label_t old = lb;
        lb = fresh[static_cast<std::size_t>(old)];
        r.extents[static_cast<std::size_t>(lb)] = s.extents[static_cast<std::size_t>(old)];
      }
    const lowered_step lr = lower(r);
    ASSERT_EQ(lr.key(), k0) << "relabelled: " << describe(r) << "\n lowered " << describe(l) << "\n relabelled lowered " << describe(lr);
    EXPECT_EQ(lr.a.modes, l.a.modes);
    EXPECT_EQ(lr.b.strides, l.b.strides);
    EXPECT_EQ(lr.d.extents, l.d.extents);
    EXPECT_EQ(lower(s).key(), k0) << "deterministic";

    // Any extent change changes the key.
    std::vector<label_t> used;
    for (const operand_spec* o : {&s.lhs, &s.rhs, &s.out})
      for (label_t lb : o->labels) used.push_back(lb);
    if (!used.empty()) {
      step_spec e = s;
      const label_t lb = used[rng() % used.size()];
      e.extents[static_cast<std::size_t>(lb)] += 1 + static_cast<i64>(rng() % 3);
      EXPECT_NE(lower(e).key(), k0) << "extent of L" << lb << " changed";
      ++perturbed_extent;
    }
    // Any stride change changes the key.
    std::vector<operand_spec step_spec::*> members = {&step_spec::lhs, &step_spec::out};
    if (!s.unary) members.push_back(&step_spec::rhs);
    const auto member = members[rng() % members.size()];
    if (!(s.*member).strides.empty()) {
      step_spec t = s;
      auto& st = (t.*member).strides;
      st[rng() % st.size()] += 1 + static_cast<i64>(rng() % 5);
      EXPECT_NE(lower(t).key(), k0) << "stride changed: " << describe(t);
      ++perturbed_stride;
    }
  }
  EXPECT_GT(perturbed_extent, 100);
  EXPECT_GT(perturbed_stride, 100);
}

TEST(step_lowering, key_distinguishes_kind_and_order) {
  // i,i->i (binary, Hadamard) vs i->i (unary copy): same A and D, different kind
  const std::vector<label_t> i = {0};
  const std::vector<i64> ext = {3};
  labelled_layout a{&i, {1}}, d{&i, {1}};
  const auto unary = tnrt::lower_step(a, nullptr, d, ext);
  const auto binary = tnrt::lower_step(a, &a, d, ext);
  EXPECT_NE(unary.key(), binary.key());
  // ij->ij vs ij->ji (same strides on D position-wise, different mode order)
  const std::vector<label_t> ij = {0, 1}, ji = {1, 0};
  const std::vector<i64> ext2 = {2, 2};
  labelled_layout x{&ij, {2, 1}};
  labelled_layout y1{&ij, {2, 1}}, y2{&ji, {2, 1}};
  EXPECT_NE(tnrt::lower_step(x, nullptr, y1, ext2).key(), tnrt::lower_step(x, nullptr, y2, ext2).key());
}

// ---- hand-checked lowerings ---------------------------------------------------------------------

TEST(step_lowering, matmul) {
  const std::vector<label_t> ij = {5, 9}, jk = {9, 2}, ik = {5, 2};
  std::vector<i64> ext(10, 0);
  ext[5] = 2;
  ext[9] = 3;
  ext[2] = 4;
  labelled_layout a{&ij, {3, 1}}, b{&jk, {1, 3}}, d{&ik, {4, 1}};
  const auto l = tnrt::lower_step(a, &b, d, ext);
  EXPECT_EQ(l.kind, lowered_kind::contraction);
  EXPECT_EQ(l.a.modes, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(l.b.modes, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(l.d.modes, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(l.a.extents, (std::vector<i64>{2, 3}));
  EXPECT_EQ(l.b.extents, (std::vector<i64>{3, 4}));
  EXPECT_EQ(l.d.extents, (std::vector<i64>{2, 4}));
  EXPECT_EQ(l.b.strides, (std::vector<i64>{1, 3}));
  // values: A = [[1,2,3],[4,5,6]], B (col-major 3x4) = 1..12
  const std::vector<double> av = {1, 2, 3, 4, 5, 6};
  std::vector<double> bv(12);
  std::iota(bv.begin(), bv.end(), 1.0);
  std::vector<double> dv(8, 99.0);
  tnrt::evaluate_lowered<double>(l, av.data(), bv.data(), dv.data());
  // B[j][k] = bv[j + 3k]; D[i][k] = sum_j A[i][j] B[j][k]
  const std::vector<double> expect = {14, 32, 50, 68, 32, 77, 122, 167};
  EXPECT_EQ(dv, expect);
}

TEST(step_lowering, trace_and_diagonal) {
  const std::vector<label_t> ii = {3, 3}, i = {3}, none = {};
  std::vector<i64> ext(4, 1);
  ext[3] = 3;
  labelled_layout a{&ii, {3, 1}};
  // ii->i: one mode, stride 3+1
  labelled_layout di{&i, {1}};
  const auto diag = tnrt::lower_step(a, nullptr, di, ext);
  EXPECT_EQ(diag.kind, lowered_kind::reduction);
  EXPECT_EQ(diag.a.modes, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(diag.a.strides, (std::vector<i64>{4}));
  EXPECT_EQ(diag.d.modes, (std::vector<std::int32_t>{0}));
  const std::vector<double> m = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> dv(3, -1.0);
  tnrt::evaluate_lowered<double>(diag, m.data(), nullptr, dv.data());
  EXPECT_EQ(dv, (std::vector<double>{1, 5, 9}));
  // ii->: trace; rank-0 output gets an extent-1 mode shared with A (stride 0 there)
  labelled_layout scalar{&none, {}};
  const auto tr = tnrt::lower_step(a, nullptr, scalar, ext);
  EXPECT_EQ(tr.a.modes, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(tr.a.extents, (std::vector<i64>{3, 1}));
  EXPECT_EQ(tr.a.strides, (std::vector<i64>{4, 0}));
  EXPECT_EQ(tr.d.modes, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(tr.d.extents, (std::vector<i64>{1}));
  double t = -1.0;
  tnrt::evaluate_lowered<double>(tr, m.data(), nullptr, &t);
  EXPECT_EQ(t, 15.0);
}

TEST(step_lowering, one_sided_sum_becomes_broadcast_mode) {
  // ij,jk->i: k is summed out of rhs only, so A gets a stride-0 mode for k.
  const std::vector<label_t> ij = {0, 1}, jk = {1, 2}, i = {0};
  const std::vector<i64> ext = {2, 3, 4};
  labelled_layout a{&ij, {3, 1}}, b{&jk, {4, 1}}, d{&i, {1}};
  const auto l = tnrt::lower_step(a, &b, d, ext);
  EXPECT_EQ(l.a.modes, (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(l.a.strides, (std::vector<i64>{3, 1, 0}));
  EXPECT_EQ(l.a.extents, (std::vector<i64>{2, 3, 4}));
  EXPECT_EQ(l.b.modes, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(l.d.modes, (std::vector<std::int32_t>{0}));
  // sum_j A[i][j] * sum_k B[j][k]
  std::vector<double> av(6), bv(12);
  std::iota(av.begin(), av.end(), 1.0);
  std::iota(bv.begin(), bv.end(), 1.0);
  std::vector<double> dv(2, 7.0);
  tnrt::evaluate_lowered<double>(l, av.data(), bv.data(), dv.data());
  // row sums of B: 10, 26, 42
  EXPECT_EQ(dv, (std::vector<double>{1 * 10 + 2 * 26 + 3 * 42, 4 * 10 + 5 * 26 + 6 * 42}));
}

TEST(step_lowering, scalars) {
  const std::vector<label_t> none = {}, i = {0};
  const std::vector<i64> ext = {3};
  labelled_layout s{&none, {}}, v{&i, {1}};
  // ,-> : all three get one shared extent-1 mode
  const auto l = tnrt::lower_step(s, &s, s, ext);
  EXPECT_EQ(l.a.modes, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(l.b.modes, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(l.d.modes, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(l.d.extents, (std::vector<i64>{1}));
  const std::complex<double> x(1.5, -2.0), y(0.5, 3.0);
  std::complex<double> z(99.0, 99.0);
  tnrt::evaluate_lowered<std::complex<double>>(l, &x, &y, &z);
  EXPECT_EQ(z, x * y);
  // ,i->i : scalar times vector
  const auto sv = tnrt::lower_step(s, &v, v, ext);
  const double a = 2.5;
  const std::vector<double> vb = {1, -2, 3};
  std::vector<double> vd(3, 0.0);
  tnrt::evaluate_lowered<double>(sv, &a, vb.data(), vd.data());
  EXPECT_EQ(vd, (std::vector<double>{2.5, -5, 7.5}));
  // i,-> : sum of a vector times a scalar (i summed out of lhs only)
  const auto vs = tnrt::lower_step(v, &s, s, ext);
  double r = 0.0;
  tnrt::evaluate_lowered<double>(vs, vb.data(), &a, &r);
  EXPECT_EQ(r, 5.0);
  // -> (unary scalar copy)
  const auto copy = tnrt::lower_step(s, nullptr, s, ext);
  double c = 0.0;
  tnrt::evaluate_lowered<double>(copy, &a, nullptr, &c);
  EXPECT_EQ(c, 2.5);
}

TEST(step_lowering, zero_extent_sum_writes_zeros) {
  // ij,jk->ik with j of extent 0: D is all zeros (an empty sum), written over garbage.
  const std::vector<label_t> ij = {0, 1}, jk = {1, 2}, ik = {0, 2};
  const std::vector<i64> ext = {2, 0, 3};
  labelled_layout a{&ij, {0, 1}}, b{&jk, {3, 1}}, d{&ik, {3, 1}};
  const auto l = tnrt::lower_step(a, &b, d, ext);
  std::vector<double> dv(6, 42.0);
  const double dummy = 1.0;
  tnrt::evaluate_lowered<double>(l, &dummy, &dummy, dv.data());
  EXPECT_EQ(dv, std::vector<double>(6, 0.0));
}

TEST(step_lowering, dense_strides) {
  EXPECT_EQ(tnrt::dense_strides({2, 3, 4}, false), (std::vector<i64>{12, 4, 1}));
  EXPECT_EQ(tnrt::dense_strides({2, 3, 4}, true), (std::vector<i64>{1, 2, 6}));
  EXPECT_TRUE(tnrt::dense_strides({}, false).empty());
  EXPECT_EQ(tnrt::dense_strides({5}, true), (std::vector<i64>{1}));
  EXPECT_EQ(tnrt::dense_strides({1, 1}, false), (std::vector<i64>{1, 1}));
}

TEST(step_lowering, malformed_steps_throw) {
  const std::vector<label_t> ij = {0, 1}, ii = {0, 0}, k = {2}, i = {0};
  const std::vector<i64> ext = {2, 2, 2};
  labelled_layout a{&ij, {2, 1}};
  // output label repeats
  labelled_layout d_rep{&ii, {2, 1}};
  EXPECT_THROW(tnrt::lower_step(a, nullptr, d_rep, ext), tnrt::internal_error);
  // output label in neither operand
  labelled_layout d_k{&k, {1}};
  EXPECT_THROW(tnrt::lower_step(a, nullptr, d_k, ext), tnrt::internal_error);
  EXPECT_THROW(tnrt::lower_step(a, &a, d_k, ext), tnrt::internal_error);
  // labels and strides disagree in count
  labelled_layout bad{&ij, {1}};
  labelled_layout d_i{&i, {1}};
  EXPECT_THROW(tnrt::lower_step(bad, nullptr, d_i, ext), tnrt::internal_error);
  EXPECT_THROW(tnrt::lower_step(a, &bad, d_i, ext), tnrt::internal_error);
  labelled_layout d_bad{&i, {}};
  EXPECT_THROW(tnrt::lower_step(a, nullptr, d_bad, ext), tnrt::internal_error);
}

}  // namespace
