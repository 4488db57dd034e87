#include "core/step_lowering.hpp"

#include <algorithm>
#include <complex>
#include <unordered_map>

#include "tnrt/errors.hpp"

namespace tnrt {

std::vector<std::int64_t> lowered_step::key() const {
  std::vector<std::int64_t> k;
  key_into(k);
  return k;
}

void lowered_step::key_into(std::vector<std::int64_t>& k) const {
  k.clear();
  k.reserve(4 + 3 * (a.modes.size() + b.modes.size() + d.modes.size()) + 3);
  k.push_back(static_cast<std::int64_t>(kind));
  for (const strided_operand* op : {&a, &b, &d}) {
    k.push_back(static_cast<std::int64_t>(op->modes.size()));
    for (std::size_t i = 0; i < op->modes.size(); ++i) {
      k.push_back(op->modes[i]);
      k.push_back(op->extents[i]);
      k.push_back(op->strides[i]);
    }
  }
}

std::vector<std::int64_t> dense_strides(const std::vector<std::int64_t>& extents, bool column_major) {
  std::vector<std::int64_t> s(extents.size());
  std::int64_t acc = 1;
  if (column_major) {
    for (std::size_t i = 0; i < extents.size(); ++i) {
      s[i] = acc;
      acc *= extents[i];
    }
  } else {
    for (std::size_t i = extents.size(); i-- > 0;) {
      s[i] = acc;
      acc *= extents[i];
    }
  }
  return s;
}

std::vector<std::int64_t> choose_result_strides(const std::vector<label_t>& out, const labelled_layout& lhs,
                                                const labelled_layout* rhs, const std::vector<std::int64_t>& extents,
                                                layout_policy policy) {
  std::vector<std::int64_t> shape;
  shape.reserve(out.size());
  for (label_t l : out) shape.push_back(extents.at(static_cast<std::size_t>(l)));
  // `planned` is a whole-tree choice (plan_steps, core/mode_orders): one step alone is column-major.
  if (policy != layout_policy::follow) return dense_strides(shape, policy != layout_policy::row_major);

  auto elements = [&](const labelled_layout& o) {
    std::int64_t e = 1;
    for (label_t l : *o.labels) e *= extents.at(static_cast<std::size_t>(l));
    return e;
  };
  const labelled_layout* big = &lhs;
  const labelled_layout* small = rhs;
  if (rhs != nullptr && elements(*rhs) > elements(lhs)) std::swap(big, small);
  // An operand's labels from its fastest mode to its slowest.
  auto memory_order = [](const labelled_layout& o) {
    std::vector<std::size_t> idx(o.labels->size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return o.strides[x] < o.strides[y]; });
    std::vector<label_t> ls;
    for (std::size_t i : idx) ls.push_back((*o.labels)[i]);
    return ls;
  };
  std::vector<label_t> order;  // fastest first
  auto place = [&](label_t l) {
    if (std::find(out.begin(), out.end(), l) != out.end() && std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  };
  const std::vector<label_t> big_order = memory_order(*big);
  if (small != nullptr)
    for (label_t l : memory_order(*small))
      if (std::find(big_order.begin(), big_order.end(), l) == big_order.end()) place(l);
  for (label_t l : big_order) place(l);
  for (label_t l : out) place(l);  // nothing should be left; kept for safety
  std::vector<std::int64_t> strides(out.size(), 0);
  std::int64_t acc = 1;
  for (label_t l : order) {
    const auto i = static_cast<std::size_t>(std::find(out.begin(), out.end(), l) - out.begin());
    strides[i] = acc;
    acc *= shape[i];
  }
  return strides;
}

namespace {

// One operand with repeated labels folded: label -> (extent, summed stride), first-appearance order.
struct folded {
  std::vector<label_t> labels;
  std::vector<std::int64_t> strides;
};

folded fold(const labelled_layout& op) {
  const auto& ls = *op.labels;
  if (ls.size() != op.strides.size()) throw internal_error("lower_step: operand has " + std::to_string(ls.size()) + " labels but " + std::to_string(op.strides.size()) + " strides");
  folded f;
  for (std::size_t i = 0; i < ls.size(); ++i) {
    auto it = std::find(f.labels.begin(), f.labels.end(), ls[i]);
    if (it == f.labels.end()) {
      f.labels.push_back(ls[i]);
      f.strides.push_back(op.strides[i]);
    } else {
      f.strides[static_cast<std::size_t>(it - f.labels.begin())] += op.strides[i];
    }
  }
  return f;
}

bool contains(const std::vector<label_t>& v, label_t l) { return std::find(v.begin(), v.end(), l) != v.end(); }

}  // namespace

lowered_step lower_step(const labelled_layout& lhs, const labelled_layout* rhs, const labelled_layout& out,
                        const std::vector<std::int64_t>& extents) {
  folded fa = fold(lhs);
  folded fb = rhs != nullptr ? fold(*rhs) : folded{};
  folded fd = fold(out);
  if (fd.labels.size() != out.labels->size()) throw internal_error("lower_step: output labels repeat");

  lowered_step s;
  s.kind = rhs != nullptr ? lowered_kind::contraction : lowered_kind::reduction;
  if (rhs != nullptr) {
    // A label summed out of one operand only: broadcast it in the other (stride 0).
    for (label_t l : std::vector<label_t>(fa.labels))
      if (!contains(fb.labels, l) && !contains(fd.labels, l)) {
        fb.labels.push_back(l);
        fb.strides.push_back(0);
      }
    for (label_t l : std::vector<label_t>(fb.labels))
      if (!contains(fa.labels, l) && !contains(fd.labels, l)) {
        fa.labels.push_back(l);
        fa.strides.push_back(0);
      }
  }
  for (label_t l : fd.labels)
    if (!contains(fa.labels, l) && !contains(fb.labels, l)) throw internal_error("lower_step: output label in neither operand");

  // Rank-0 operands: one shared extent-1 mode (label -1 here, renumbered below).
  const bool any_empty = fa.labels.empty() || fd.labels.empty() || (rhs != nullptr && fb.labels.empty());
  if (any_empty) {
    fa.labels.push_back(-1);
    fa.strides.push_back(0);
    if (rhs != nullptr) {
      fb.labels.push_back(-1);
      fb.strides.push_back(0);
    }
    fd.labels.push_back(-1);
    fd.strides.push_back(1);
  }

  std::unordered_map<label_t, std::int32_t> ids;
  auto emit = [&](const folded& f, strided_operand& o) {
    for (std::size_t i = 0; i < f.labels.size(); ++i) {
      const label_t l = f.labels[i];
      auto [it, fresh] = ids.emplace(l, static_cast<std::int32_t>(ids.size()));
      (void)fresh;
      o.modes.push_back(it->second);
      o.extents.push_back(l < 0 ? 1 : extents.at(static_cast<std::size_t>(l)));
      o.strides.push_back(f.strides[i]);
    }
  };
  emit(fa, s.a);
  if (rhs != nullptr) emit(fb, s.b);
  emit(fd, s.d);
  return s;
}

template <class T>
void evaluate_lowered(const lowered_step& s, const T* a, const T* b, T* d) {
  // All distinct modes, with their extents; iterate every combination.
  std::vector<std::int64_t> extent_of;
  auto note = [&](const strided_operand& o) {
    for (std::size_t i = 0; i < o.modes.size(); ++i) {
      const auto m = static_cast<std::size_t>(o.modes[i]);
      if (extent_of.size() <= m) extent_of.resize(m + 1, 1);
      extent_of[m] = o.extents[i];
    }
  };
  note(s.a);
  note(s.b);
  note(s.d);
  const std::size_t nm = extent_of.size();
  auto offset = [&](const strided_operand& o, const std::vector<std::int64_t>& idx) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < o.modes.size(); ++i) off += idx[static_cast<std::size_t>(o.modes[i])] * o.strides[i];
    return off;
  };
  // zero D
  {
    std::vector<std::int64_t> idx(nm, 0);
    std::int64_t n = 1;
    for (auto e : s.d.extents) n *= e;
    std::vector<std::int64_t> di(s.d.modes.size(), 0);
    for (std::int64_t c = 0; c < n; ++c) {
      std::fill(idx.begin(), idx.end(), 0);
      for (std::size_t i = 0; i < di.size(); ++i) idx[static_cast<std::size_t>(s.d.modes[i])] = di[i];
      d[offset(s.d, idx)] = T{};
      for (std::size_t i = di.size(); i-- > 0;) {
        if (++di[i] < s.d.extents[i]) break;
        di[i] = 0;
      }
    }
  }
  std::vector<std::int64_t> idx(nm, 0);
  std::int64_t total = 1;
  for (auto e : extent_of) total *= e;
  for (std::int64_t c = 0; c < total; ++c) {
    T v = a[offset(s.a, idx)];
    if (s.kind == lowered_kind::contraction) v *= b[offset(s.b, idx)];
    d[offset(s.d, idx)] += v;
    for (std::size_t i = nm; i-- > 0;) {
      if (++idx[i] < extent_of[i]) break;
      idx[i] = 0;
    }
  }
}

template void evaluate_lowered<float>(const lowered_step&, const float*, const float*, float*);
template void evaluate_lowered<double>(const lowered_step&, const double*, const double*, double*);
template void evaluate_lowered<std::complex<float>>(const lowered_step&, const std::complex<float>*, const std::complex<float>*, std::complex<float>*);
template void evaluate_lowered<std::complex<double>>(const lowered_step&, const std::complex<double>*, const std::complex<double>*, std::complex<double>*);

}  // namespace tnrt
