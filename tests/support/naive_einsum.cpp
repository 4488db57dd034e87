#include "support/naive_einsum.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>

namespace tnrt::test {

namespace {

using wide = std::complex<double>;

std::vector<wide> to_wide(const host_tensor& t) {
  std::vector<wide> r(static_cast<std::size_t>(t.size()));
  visit_dtype(t.type(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.as<T>();
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = wide(p[i]);
  });
  return r;
}

host_tensor from_wide(const std::vector<wide>& v, dtype type, std::vector<std::int64_t> shape) {
  host_tensor r(type, std::move(shape));
  visit_dtype(type, [&](auto zero) {
    using T = decltype(zero);
    T* p = r.as<T>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(v[i].real());
      else p[i] = T(static_cast<typename T::value_type>(v[i].real()), static_cast<typename T::value_type>(v[i].imag()));
    }
  });
  return r;
}

// C(out) = sum over the rest of A(la) B(lb), every label combination visited once.
std::vector<wide> naive_wide(const std::vector<wide>& a, const std::vector<label_t>& la, const std::vector<wide>* b,
                             const std::vector<label_t>& lb, const std::vector<label_t>& out, const std::vector<std::int64_t>& extents) {
  std::vector<label_t> all;
  auto add = [&](const std::vector<label_t>& ls) {
    for (label_t l : ls)
      if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
  };
  add(out);
  add(la);
  if (b) add(lb);
  auto strides_for = [&](const std::vector<label_t>& ls) {
    // stride of each label of `all` in a row-major tensor labelled ls (summed over repeats)
    std::vector<std::int64_t> s(all.size(), 0);
    std::int64_t acc = 1;
    for (std::size_t i = ls.size(); i-- > 0;) {
      const auto pos = static_cast<std::size_t>(std::find(all.begin(), all.end(), ls[i]) - all.begin());
      s[pos] += acc;
      acc *= extents[static_cast<std::size_t>(ls[i])];
    }
    return s;
  };
  const auto sa = strides_for(la), so = strides_for(out);
  const auto sb = b ? strides_for(lb) : std::vector<std::int64_t>(all.size(), 0);
  std::int64_t out_size = 1;
  for (label_t l : out) out_size *= extents[static_cast<std::size_t>(l)];
  std::vector<wide> c(static_cast<std::size_t>(out_size), wide(0));
  for (label_t l : all)
    if (extents[static_cast<std::size_t>(l)] == 0) return c;
  std::vector<std::int64_t> idx(all.size(), 0);
  while (true) {
    std::int64_t oa = 0, ob = 0, oc = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      oa += idx[i] * sa[i];
      ob += idx[i] * sb[i];
      oc += idx[i] * so[i];
    }
    const wide x = a[static_cast<std::size_t>(oa)] * (b ? (*b)[static_cast<std::size_t>(ob)] : wide(1));
    c[static_cast<std::size_t>(oc)] += x;
    std::size_t i = all.size();
    while (i > 0) {
      --i;
      if (++idx[i] < extents[static_cast<std::size_t>(all[i])]) break;
      idx[i] = 0;
      if (i == 0) return c;
    }
    if (all.empty()) return c;
  }
}

std::vector<std::int64_t> shape_for(const std::vector<label_t>& ls, const std::vector<std::int64_t>& extents) {
  std::vector<std::int64_t> s;
  for (label_t l : ls) s.push_back(extents[static_cast<std::size_t>(l)]);
  return s;
}

}  // namespace

host_tensor naive_contract_step(const host_tensor& lhs, const std::vector<label_t>& lhs_labels, const host_tensor* rhs,
                                const std::vector<label_t>& rhs_labels, const std::vector<label_t>& out_labels,
                                const std::vector<std::int64_t>& extents) {
  const auto a = to_wide(lhs);
  std::vector<wide> b;
  if (rhs) b = to_wide(*rhs);
  const auto c = naive_wide(a, lhs_labels, rhs ? &b : nullptr, rhs_labels, out_labels, extents);
  return from_wide(c, lhs.type(), shape_for(out_labels, extents));
}

host_tensor naive_contract(const problem& p, std::span<const host_tensor> inputs) {
  if (inputs.size() != p.net.inputs.size()) throw std::invalid_argument("naive_contract: wrong number of inputs");
  const auto labels = operand_labels(p.net, p.tree);
  std::vector<std::vector<wide>> ops(labels.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) ops[i] = to_wide(inputs[i]);
  const std::size_t n = inputs.size();
  for (std::size_t s = 0; s < p.tree.steps.size(); ++s) {
    const step& st = p.tree.steps[s];
    const auto l = static_cast<std::size_t>(st.lhs);
    const std::vector<wide>* b = st.rhs >= 0 ? &ops[static_cast<std::size_t>(st.rhs)] : nullptr;
    static const std::vector<label_t> none;
    ops[n + s] = naive_wide(ops[l], labels[l], b, st.rhs >= 0 ? labels[static_cast<std::size_t>(st.rhs)] : none, st.out, p.net.extents);
    ops[l].clear();
    if (st.rhs >= 0) ops[static_cast<std::size_t>(st.rhs)].clear();
  }
  const auto id = static_cast<std::size_t>(p.tree.result_id(n));
  std::vector<wide> r = ops[id];
  if (p.tree.steps.empty() && labels[0] != p.net.output) r = naive_wide(ops[0], labels[0], nullptr, {}, p.net.output, p.net.extents);
  return from_wide(r, is_complex(p.type) ? dtype::c128 : dtype::f64, shape_for(p.net.output, p.net.extents));
}

host_tensor convert(const host_tensor& t, dtype type) { return from_wide(to_wide(t), type, t.shape()); }

double relative_error(const host_tensor& got, const host_tensor& want) {
  if (got.shape() != want.shape()) throw std::invalid_argument("relative_error: shapes differ");
  const auto g = to_wide(got), w = to_wide(want);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    num += std::norm(g[i] - w[i]);
    den += std::norm(w[i]);
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

double max_abs(const host_tensor& t) {
  double m = 0;
  for (const wide& x : to_wide(t)) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace tnrt::test
