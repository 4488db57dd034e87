// The CPU engine: one step is pre-reduce (one-sided sums), then either the direct kernel or
// permute-permute-GEMM-permute, skipping every permutation whose operand already has the layout.
#include <cblas.h>
#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "cpu/strided_kernel.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cpu {

namespace {

std::string labels_text(const std::vector<label_t>& labels) {
  std::string s = "[";
  for (std::size_t i = 0; i < labels.size(); ++i) s += (i ? " " : "") + std::to_string(labels[i]);
  return s + "]";
}

// An operand seen through its labels: each distinct label once, with the sum of the strides of its
// occurrences (a repeated label then walks the diagonal).
struct operand_view {
  const void* data = nullptr;
  std::vector<label_t> labels;       // distinct, first-appearance order
  std::vector<std::int64_t> strides; // by position in `labels`
  bool dense = true;                 // labels distinct and row-major contiguous in this order

  [[nodiscard]] std::int64_t stride_of(label_t l) const {
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == l) return strides[i];
    return 0;
  }
  [[nodiscard]] bool has(label_t l) const { return std::find(labels.begin(), labels.end(), l) != labels.end(); }
};

operand_view view_of(const host_tensor& t, const std::vector<label_t>& labels) {
  operand_view v;
  v.data = t.data();
  const auto rm = row_major_strides(t.shape());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    auto it = std::find(v.labels.begin(), v.labels.end(), labels[i]);
    if (it == v.labels.end()) {
      v.labels.push_back(labels[i]);
      v.strides.push_back(rm[i]);
    } else {
      v.strides[static_cast<std::size_t>(it - v.labels.begin())] += rm[i];
      v.dense = false;
    }
  }
  return v;
}

// Result storage. Large buffers ask for transparent huge pages: a fresh 1 GiB intermediate
// otherwise costs 2^18 page faults (kernel time comparable to the step's arithmetic).
host_tensor make_tensor(dtype type, std::vector<std::int64_t> shape) {
  host_tensor t(type, std::move(shape));
  constexpr std::size_t huge = std::size_t{2} << 20;
  if (t.bytes() >= 2 * huge) {
    const auto begin = (reinterpret_cast<std::uintptr_t>(t.data()) + huge - 1) / huge * huge;
    const auto end = (reinterpret_cast<std::uintptr_t>(t.data()) + t.bytes()) / huge * huge;
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
  }
  return t;
}

bool contains(const std::vector<label_t>& ls, label_t l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

template <class T>
const T* one_ptr() {
  static const T one = T(1);
  return &one;
}

// out(labels) = sum over the view's other labels of x: diagonal, one-sided sum and permutation in
// one pass through the direct kernel (B is a stride-0 scalar one).
template <class T>
host_tensor reduce_to(const operand_view& x, const std::vector<label_t>& labels, const std::vector<std::int64_t>& extents, dtype type) {
  std::vector<std::int64_t> shape;
  for (label_t l : labels) shape.push_back(extents[static_cast<std::size_t>(l)]);
  host_tensor r = make_tensor(type, shape);
  const auto rs = row_major_strides(shape);
  std::vector<loop_mode> out_modes, sum_modes;
  for (std::size_t i = 0; i < labels.size(); ++i) out_modes.push_back({shape[i], rs[i], x.stride_of(labels[i]), 0});
  for (std::size_t i = 0; i < x.labels.size(); ++i)
    if (!contains(labels, x.labels[i])) sum_modes.push_back({extents[static_cast<std::size_t>(x.labels[i])], 0, x.strides[i], 0});
  run_direct<T>(r.as<T>(), static_cast<const T*>(x.data), one_ptr<T>(), std::move(out_modes), std::move(sum_modes));
  return r;
}

template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, const T* b, T* c) {
  const auto ta = trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = trans_b ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const blasint lda = trans_a ? M : K, ldb = trans_b ? K : N, ldc = N;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    const T one(1), zero(0);
    cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &one, a, lda, b, ldb, &zero, c, ldc);
  } else {
    const T one(1), zero(0);
    cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &one, a, lda, b, ldb, &zero, c, ldc);
  }
}

std::vector<label_t> concat(std::initializer_list<const std::vector<label_t>*> parts) {
  std::vector<label_t> r;
  for (const auto* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

std::int64_t extent_product(const std::vector<label_t>& ls, const std::vector<std::int64_t>& extents) {
  std::int64_t n = 1;
  for (label_t l : ls) n *= extents[static_cast<std::size_t>(l)];
  return n;
}

// The labels of `group` in the order they appear in `order`.
std::vector<label_t> ordered_as(const std::vector<label_t>& group, const std::vector<label_t>& order) {
  std::vector<label_t> r;
  for (label_t l : order)
    if (contains(group, l)) r.push_back(l);
  return r;
}

// C(batch, I, J) = A(batch, I, K) B(batch, K, J), labels classified by where they occur.
struct step_classes {
  std::vector<label_t> batch, contracted, free_a, free_b;
};

// Which GEMM-ready layout (if any) a dense operand already has: [batch, X, K] (plain) or
// [batch, K, X] (transposed), with K in its own order returned through k_order.
enum class layout { none, plain, transposed };

layout layout_of(const operand_view& v, const std::vector<label_t>& batch, const std::vector<label_t>& free,
                 const std::vector<label_t>& k_set, std::vector<label_t>* k_order) {
  if (!v.dense) return layout::none;
  const std::size_t nb = batch.size(), nf = free.size(), nk = k_set.size();
  if (v.labels.size() != nb + nf + nk) return layout::none;
  if (!std::equal(batch.begin(), batch.end(), v.labels.begin())) return layout::none;
  const auto rest = v.labels.begin() + static_cast<std::ptrdiff_t>(nb);
  const std::vector<label_t> k_here = ordered_as(k_set, v.labels);
  if (std::equal(free.begin(), free.end(), rest) && (k_order->empty() || *k_order == k_here)) {
    *k_order = k_here;
    return layout::plain;
  }
  if (std::equal(free.begin(), free.end(), rest + static_cast<std::ptrdiff_t>(nk)) && (k_order->empty() || *k_order == k_here)) {
    *k_order = k_here;
    return layout::transposed;
  }
  return layout::none;
}

template <class T>
host_tensor gemm_step(const operand_view& a, const operand_view& b, const step_classes& c, const std::vector<label_t>& out,
                      const std::vector<std::int64_t>& extents, dtype type) {
  // Orders: taken from out when out is [batch, I, J] or [batch, J, I] (no output permutation), else
  // from the operands (so that they, at least, need none).
  std::vector<label_t> batch = ordered_as(c.batch, out), fa = ordered_as(c.free_a, out), fb = ordered_as(c.free_b, out);
  bool out_ij = out == concat({&batch, &fa, &fb});
  bool out_ji = !out_ij && out == concat({&batch, &fb, &fa});
  if (!out_ij && !out_ji) {
    batch = ordered_as(c.batch, a.labels);
    fa = ordered_as(c.free_a, a.labels);
    fb = ordered_as(c.free_b, b.labels);
  }
  std::vector<label_t> k_order;
  layout la = layout_of(a, batch, fa, c.contracted, &k_order);
  layout lb = layout_of(b, batch, fb, c.contracted, &k_order);
  if (la == layout::none && lb == layout::none) k_order = ordered_as(c.contracted, a.labels);
  if (la == layout::none && lb != layout::none) la = layout_of(a, batch, fa, c.contracted, &k_order);

  host_tensor a_tmp, b_tmp;
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  if (la == layout::none) {
    a_tmp = reduce_to<T>(a, concat({&batch, &fa, &k_order}), extents, type);  // A(batch, I, K)
    pa = a_tmp.as<T>();
    la = layout::plain;
  }
  if (lb == layout::none) {
    b_tmp = reduce_to<T>(b, concat({&batch, &k_order, &fb}), extents, type);  // B(batch, K, J)
    pb = b_tmp.as<T>();
    lb = layout::transposed;  // [batch, K, J] is B's "free after K" form, i.e. no transpose in GEMM
  }
  // In the [batch, X, K] vocabulary above, A plain = A(I,K) = no transpose, B plain = B(J,K) = B^T.
  const bool trans_a = la == layout::transposed;
  const bool trans_b = lb == layout::plain;

  const std::int64_t nbatch = extent_product(batch, extents), m = extent_product(fa, extents),
                     n = extent_product(fb, extents), k = extent_product(k_order, extents);
  const std::vector<label_t> c_labels = out_ji ? concat({&batch, &fb, &fa}) : concat({&batch, &fa, &fb});
  std::vector<std::int64_t> c_shape;
  for (label_t l : c_labels) c_shape.push_back(extents[static_cast<std::size_t>(l)]);
  host_tensor cm = make_tensor(type, c_shape);
  T* pc = cm.as<T>();
  for (std::int64_t i = 0; i < nbatch; ++i) {
    const T* ai = pa + i * m * k;
    const T* bi = pb + i * k * n;
    T* ci = pc + i * m * n;
    if (out_ji) gemm<T>(!trans_b, !trans_a, n, m, k, bi, ai, ci);  // C^T(J,I) = B^T(J,K) A^T(K,I)
    else gemm<T>(trans_a, trans_b, m, n, k, ai, bi, ci);            // C(I,J) = A(I,K) B(K,J)
  }
  if (out_ij || out_ji) return cm;
  operand_view cv = view_of(cm, c_labels);
  return reduce_to<T>(cv, out, extents, type);
}

template <class T>
host_tensor step_typed(const host_tensor& lhs, const std::vector<label_t>& lhs_labels, const host_tensor* rhs,
                       const std::vector<label_t>& rhs_labels, const std::vector<label_t>& out, const std::vector<std::int64_t>& extents) {
  const dtype type = lhs.type();
  operand_view a = view_of(lhs, lhs_labels);
  operand_view b;
  if (rhs != nullptr) {
    b = view_of(*rhs, rhs_labels);
  } else {
    b.data = one_ptr<T>();
  }

  // One-sided sums first: sum(k) A(i,k) B(i) does the sum once, not once per B element.
  host_tensor a_red, b_red;
  auto pre_reduce = [&](operand_view& x, const operand_view& other, host_tensor& keep) {
    std::vector<label_t> kept;
    for (label_t l : x.labels)
      if (other.has(l) || contains(out, l)) kept.push_back(l);
    if (kept.size() == x.labels.size() || rhs == nullptr) return;
    keep = reduce_to<T>(x, kept, extents, type);
    x = view_of(keep, kept);
  };
  pre_reduce(a, b, a_red);
  pre_reduce(b, a, b_red);

  step_classes c;
  for (label_t l : a.labels) {
    const bool in_b = b.has(l), in_out = contains(out, l);
    if (in_b && in_out) c.batch.push_back(l);
    else if (in_b) c.contracted.push_back(l);
    else c.free_a.push_back(l);
  }
  for (label_t l : b.labels)
    if (!a.has(l)) c.free_b.push_back(l);

  const std::int64_t nbatch = extent_product(c.batch, extents), m = extent_product(c.free_a, extents),
                     n = extent_product(c.free_b, extents), k = extent_product(c.contracted, extents);
  // GEMM pays when each product does real work per element moved: K and both free sizes long
  // enough, few enough batches. Otherwise the direct kernel does it in one pass over memory.
  const bool fits = m < INT_MAX && n < INT_MAX && k < INT_MAX && m * k < INT_MAX && k * n < INT_MAX && m * n < INT_MAX;
  const double per_gemm = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool use_gemm = rhs != nullptr && fits && nbatch > 0 && k >= 16 && m >= 4 && n >= 4 && per_gemm >= 4096.0;
  if (use_gemm) return gemm_step<T>(a, b, c, out, extents, type);

  std::vector<std::int64_t> shape;
  for (label_t l : out) shape.push_back(extents[static_cast<std::size_t>(l)]);
  host_tensor r = make_tensor(type, shape);
  const auto rs = row_major_strides(shape);
  std::vector<loop_mode> out_modes, sum_modes;
  for (std::size_t i = 0; i < out.size(); ++i) out_modes.push_back({shape[i], rs[i], a.stride_of(out[i]), b.stride_of(out[i])});
  for (label_t l : a.labels)
    if (!contains(out, l)) sum_modes.push_back({extents[static_cast<std::size_t>(l)], 0, a.stride_of(l), b.stride_of(l)});
  for (label_t l : b.labels)
    if (!contains(out, l) && !a.has(l)) sum_modes.push_back({extents[static_cast<std::size_t>(l)], 0, 0, b.stride_of(l)});
  run_direct<T>(r.as<T>(), static_cast<const T*>(a.data), static_cast<const T*>(b.data), std::move(out_modes), std::move(sum_modes));
  return r;
}

void check_operand(const host_tensor& t, const std::vector<label_t>& labels, const std::vector<std::int64_t>& extents, const char* which) {
  if (t.rank() != labels.size())
    throw shape_error(std::string(which) + " has rank " + std::to_string(t.rank()) + " but " + std::to_string(labels.size()) + " labels " + labels_text(labels));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const label_t l = labels[i];
    if (l < 0 || static_cast<std::size_t>(l) >= extents.size())
      throw shape_error(std::string(which) + ": label id " + std::to_string(l) + " has no extent");
    if (t.shape()[i] != extents[static_cast<std::size_t>(l)])
      throw shape_error(std::string(which) + ": mode " + std::to_string(i) + " (label " + std::to_string(l) + ") has extent " +
                        std::to_string(t.shape()[i]) + " but the label's extent is " + std::to_string(extents[static_cast<std::size_t>(l)]));
  }
}

// glibc serves every large block with a fresh mmap and unmaps it on free, so each step's result
// arrives as untouched pages the kernel must fault in and zero (clear_page was half of one large
// step's profile on the development VM). TNRT_CPU_REUSE_HEAP=1 serves large blocks from the heap
// and keeps freed memory, so later steps reuse mapped pages: measured 7% faster on the reference
// network at 25% more peak memory (aligned_alloc over-asks, so freed blocks are reused only in
// part). Opt-in because it changes malloc for the whole process.
void maybe_reuse_heap() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("TNRT_CPU_REUSE_HEAP") == nullptr) return;
    (void)mallopt(M_MMAP_MAX, 0);
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
  });
}

// Single precision in double: OpenBLAS's sgemm and the direct kernel accumulate in the element
// type, so a long reduction in f32 drifts (the 6x6 lattice of bond 10 in tests/unit/
// test_cpu_precision.cpp, exact value 1: relative error 2.3e-5 before, 1.7e-7 now; NumPy in f32
// along the same path 6.6e-5). A reference must be the most accurate party in a comparison,
// not merely as good as the code under test, so every f32/c64 step that sums converts its
// operands to f64/c128, runs there (dgemm/zgemm, double accumulators) and rounds its result once:
// each step then costs one rounding, whatever its contraction length. Simple, and as accurate as
// per-step f32 storage allows; the price is time (a double GEMM is about half the sgemm rate) and
// memory (both operands and the result in double while the step runs, about 3x the step's f32
// footprint). Blocked or pairwise accumulation in f32 would keep the memory but not the accuracy,
// and would touch every kernel path. Steps that sum nothing (products, permutations, diagonals
// without a trace) are exact up to the one rounding anyway and stay in single precision.
template <class T> struct wide { using type = T; };
template <> struct wide<float> { using type = double; };
template <> struct wide<std::complex<float>> { using type = std::complex<double>; };

template <class To, class From>
host_tensor converted(const host_tensor& t, dtype type) {
  host_tensor r = make_tensor(type, t.shape());
  const From* src = t.as<From>();
  To* dst = r.as<To>();
  parallel_for(t.size(), t.size(), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) dst[i] = static_cast<To>(src[i]);
  });
  return r;
}

bool sums_something(const std::vector<label_t>& lhs_labels, const host_tensor* rhs, const std::vector<label_t>& rhs_labels,
                    const std::vector<label_t>& out) {
  for (label_t l : lhs_labels)
    if (!contains(out, l)) return true;
  if (rhs != nullptr)
    for (label_t l : rhs_labels)
      if (!contains(out, l)) return true;
  return false;
}

host_tensor copy_of(const host_tensor& t) {
  host_tensor r(t.type(), t.shape());
  std::memcpy(r.data(), t.data(), t.bytes());
  return r;
}

}  // namespace

host_tensor contract_step(const host_tensor& lhs, const std::vector<label_t>& lhs_labels, const host_tensor* rhs,
                          const std::vector<label_t>& rhs_labels, const std::vector<label_t>& out_labels, const std::vector<std::int64_t>& extents) {
  check_operand(lhs, lhs_labels, extents, "lhs");
  if (rhs != nullptr) {
    check_operand(*rhs, rhs_labels, extents, "rhs");
    if (rhs->type() != lhs.type())
      throw dtype_error("step operands differ in dtype: lhs " + std::string(name_of(lhs.type())) + ", rhs " + std::string(name_of(rhs->type())));
  }
  for (std::size_t i = 0; i < out_labels.size(); ++i) {
    const label_t l = out_labels[i];
    if (std::find(out_labels.begin(), out_labels.begin() + static_cast<std::ptrdiff_t>(i), l) != out_labels.begin() + static_cast<std::ptrdiff_t>(i))
      throw shape_error("output labels " + labels_text(out_labels) + " repeat label " + std::to_string(l));
    if (!contains(lhs_labels, l) && (rhs == nullptr || !contains(rhs_labels, l)))
      throw shape_error("output label " + std::to_string(l) + " occurs in no operand");
  }
  return visit_dtype(lhs.type(), [&](auto zero) {
    using T = decltype(zero);
    using W = typename wide<T>::type;
    if constexpr (!std::is_same_v<T, W>) {
      if (sums_something(lhs_labels, rhs, rhs_labels, out_labels)) {
        const dtype narrow = lhs.type(), wide_type = narrow == dtype::f32 ? dtype::f64 : dtype::c128;
        host_tensor l = converted<W, T>(lhs, wide_type), r;
        if (rhs != nullptr) r = converted<W, T>(*rhs, wide_type);
        host_tensor result = step_typed<W>(l, lhs_labels, rhs != nullptr ? &r : nullptr, rhs_labels, out_labels, extents);
        l = host_tensor{};  // released before the narrow copy is made
        r = host_tensor{};
        return converted<T, W>(result, narrow);
      }
    }
    return step_typed<T>(lhs, lhs_labels, rhs, rhs_labels, out_labels, extents);
  });
}

host_tensor contract(const problem& p, std::span<const host_tensor> inputs, const progress_fn& progress) {
  const network& net = p.net;
  validate(net, p.tree);
  maybe_reuse_heap();
  if (inputs.size() != net.inputs.size())
    throw shape_error(p.source + ": the network has " + std::to_string(net.inputs.size()) + " inputs but " + std::to_string(inputs.size()) + " tensors were given");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string which = "input " + std::to_string(i) + " " + net.describe(net.inputs[i]);
    if (inputs[i].type() != p.type)
      throw dtype_error(p.source + ": " + which + " has dtype " + std::string(name_of(inputs[i].type())) + " but the problem is " + std::string(name_of(p.type)));
    const auto want = net.shape_of(net.inputs[i]);
    if (inputs[i].shape() != want) {
      auto text = [](const std::vector<std::int64_t>& s) {
        std::string r = "(";
        for (std::size_t j = 0; j < s.size(); ++j) r += (j ? "," : "") + std::to_string(s[j]);
        return r + ")";
      };
      throw shape_error(p.source + ": " + which + " has shape " + text(inputs[i].shape()) + " but its labels need " + text(want));
    }
  }

  const std::size_t n_in = inputs.size();
  const auto labels = operand_labels(net, p.tree);
  if (p.tree.steps.empty()) {
    if (net.inputs[0] == net.output) return copy_of(inputs[0]);
    return contract_step(inputs[0], net.inputs[0], nullptr, {}, net.output, net.extents);
  }
  // Intermediates live in `made` until their one consumer has run.
  std::vector<host_tensor> made(p.tree.steps.size());
  auto operand = [&](int id) -> const host_tensor& {
    const auto u = static_cast<std::size_t>(id);
    return u < n_in ? inputs[u] : made[u - n_in];
  };
  auto release = [&](int id) {
    const auto u = static_cast<std::size_t>(id);
    if (id >= 0 && u >= n_in) made[u - n_in] = host_tensor{};
  };
  const std::size_t total = p.tree.steps.size();
  for (std::size_t s = 0; s < total; ++s) {
    const step& st = p.tree.steps[s];
    const host_tensor* rhs = st.rhs >= 0 ? &operand(st.rhs) : nullptr;
    static const std::vector<label_t> none;
    made[s] = contract_step(operand(st.lhs), labels[static_cast<std::size_t>(st.lhs)], rhs,
                            st.rhs >= 0 ? labels[static_cast<std::size_t>(st.rhs)] : none, st.out, net.extents);
    release(st.lhs);
    release(st.rhs);
    if (progress) progress(s + 1, total);
  }
  return std::move(made.back());
}

void set_threads(int n) {
  set_direct_threads(n);
  openblas_set_num_threads(thread_count());
}

}  // namespace tnrt::cpu
