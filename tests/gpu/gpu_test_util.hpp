#pragma once
// Shared helpers of the GPU tests (tests/gpu/test_*.cpp): skipping where there is no usable GPU or
// cuTENSOR, host <-> device copies on the engine's stream, host-side strided layouts, random
// networks, and error measures computed in double whatever the dtype.
//
// Every copy here goes through the engine's stream with cudaMemcpyAsync: the engine's stream is
// non-blocking, so plain cudaMemcpy (legacy default stream) would NOT be ordered after its work.
// Downloads end with a raw cudaStreamSynchronize, which the runtime seam does not count: the tests
// that assert "no synchronization" read engine.runtime().counts() around the calls under test only.
// The CUDA and cuTENSOR headers must be on the include path of the GPU tests (tnrt_cuda keeps them
// PRIVATE): tests/CMakeLists.txt adds, in its GPU loop,
//   target_include_directories(${name} SYSTEM PRIVATE ${Cutensor_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
// Without them the build fails here: a misbuilt GPU test must not turn into one that skips.
#if !__has_include(<cuda_runtime_api.h>) || !__has_include(<cutensor.h>)
#error "GPU test built without the CUDA/cuTENSOR headers on its include path (see tests/CMakeLists.txt)"
#endif
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda/engine.hpp"
#include "tnrt/cuda/runner.hpp"
#include "tnrt/dtype.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/path.hpp"
#include "tnrt/tensor.hpp"

// At the start of every GPU test (or its fixture's SetUp).
#define TNRT_SKIP_WITHOUT_GPU()                                                    \
  do {                                                                             \
    if (auto tnrt_why_ = ::tnrt::cuda::unavailable_reason(); !tnrt_why_.empty())   \
      GTEST_SKIP() << "no usable GPU/cuTENSOR: " << tnrt_why_;                     \
  } while (0)

// A CUDA call in a test: a failure is a test failure naming the call.
#define TNRT_TEST_CUDA(call)                                                                  \
  do {                                                                                        \
    const cudaError_t tnrt_test_e_ = (call);                                                  \
    ASSERT_EQ(tnrt_test_e_, cudaSuccess) << #call << ": " << cudaGetErrorString(tnrt_test_e_); \
  } while (0)

namespace tnrt::gputest {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw device_error(std::string("test: ") + what + " failed: " + cudaGetErrorString(e));
}

/// Device memory of the test's own (cudaMalloc; at least one byte), freed with it.
struct device_buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit device_buffer(std::size_t n) : bytes(n) { check_cuda(cudaMalloc(&ptr, n == 0 ? 1 : n), "cudaMalloc"); }
  ~device_buffer() { (void)cudaFree(ptr); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

/// A non-blocking CUDA stream of the test's own, destroyed with it.
struct stream_owner {
  cudaStream_t s = nullptr;
  stream_owner() { check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~stream_owner() { (void)cudaStreamDestroy(s); }
  stream_owner(const stream_owner&) = delete;
  stream_owner& operator=(const stream_owner&) = delete;
};

/// Copies `bytes` host bytes into device memory `dst` on the engine's stream.
inline void upload_bytes(cuda::engine& eng, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, eng.stream()), "cudaMemcpyAsync H2D");
}

/// A pool block holding a copy of `t` (owned by the caller: pool().deallocate(p, stream)).
inline void* upload(cuda::engine& eng, const host_tensor& t) {
  void* p = eng.pool().allocate(t.bytes(), eng.stream_handle());
  upload_bytes(eng, p, t.data(), t.bytes());
  return p;
}

/// Waits for the stream (raw CUDA: not counted by the runtime seam) and copies `bytes` back.
inline void download_bytes(cuda::engine& eng, void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, eng.stream()), "cudaMemcpyAsync D2H");
  check_cuda(cudaStreamSynchronize(eng.stream()), "cudaStreamSynchronize");
}

inline host_tensor download(cuda::engine& eng, const void* src, dtype type, std::vector<std::int64_t> shape) {
  host_tensor h(type, std::move(shape));
  download_bytes(eng, h.data(), src, h.bytes());
  return h;
}

/// Element i of any dtype as complex<double>.
inline std::complex<double> element(const void* data, dtype t, std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  switch (t) {
    case dtype::f32: return {static_cast<const float*>(data)[k], 0.0};
    case dtype::f64: return {static_cast<const double*>(data)[k], 0.0};
    case dtype::c64: {
      const auto v = static_cast<const std::complex<float>*>(data)[k];
      return {v.real(), v.imag()};
    }
    case dtype::c128: break;
  }
  return static_cast<const std::complex<double>*>(data)[k];
}

inline void set_element(void* data, dtype t, std::int64_t i, std::complex<double> v) {
  const auto k = static_cast<std::size_t>(i);
  switch (t) {
    case dtype::f32: static_cast<float*>(data)[k] = static_cast<float>(v.real()); return;
    case dtype::f64: static_cast<double*>(data)[k] = v.real(); return;
    case dtype::c64: static_cast<std::complex<float>*>(data)[k] = std::complex<float>(static_cast<float>(v.real()), static_cast<float>(v.imag())); return;
    case dtype::c128: break;
  }
  static_cast<std::complex<double>*>(data)[k] = v;
}

/// ||got - want||_2 / ||want||_2 in double (want must not be all zero: the tests never use such data).
/// Returns +inf on a shape mismatch and NaN-safe: any NaN in `got` gives +inf.
inline double rel_error(const host_tensor& got, const host_tensor& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const auto g = element(got.data(), got.type(), i);
    const auto w = element(want.data(), want.type(), i);
    if (std::isnan(g.real()) || std::isnan(g.imag())) return std::numeric_limits<double>::infinity();
    num += std::norm(g - w);
    den += std::norm(w);
  }
  if (den == 0) return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

inline double max_abs(const host_tensor& t) {
  double m = 0;
  for (std::int64_t i = 0; i < t.size(); ++i) m = std::max(m, std::abs(element(t.data(), t.type(), i)));
  return m;
}

/// Unit roundoff of the dtype's real type.
inline double eps_of(dtype t) {
  return is_double(t) ? std::numeric_limits<double>::epsilon() : static_cast<double>(std::numeric_limits<float>::epsilon());
}

/// Norm-wise tolerance for a contraction summing `length` products: c * eps * sqrt(length), floored.
inline double tolerance(dtype t, double length, double c = 64.0) {
  return c * eps_of(t) * std::sqrt(std::max(1.0, length)) + 4 * eps_of(t);
}

// ---------------------------------------------------------------------------------------------
// Host-side strided layouts: a logical (row-major) tensor scattered into a buffer with any strides.

enum class layout : std::uint8_t { row_major, column_major, permuted, padded };
inline const char* name_of(layout l) {
  switch (l) {
    case layout::row_major: return "row";
    case layout::column_major: return "col";
    case layout::permuted: return "perm";
    case layout::padded: return "padded";
  }
  return "?";
}

struct strided_buffer {
  std::vector<std::int64_t> strides;  // in elements, one per logical mode
  std::int64_t span = 1;              // elements the buffer needs (>= 1)
};

/// Strides of a layout for `shape`: dense row/column-major, a dense random permutation of the
/// modes, or a random permutation with every mode padded (a view into a larger buffer).
inline strided_buffer make_layout(const std::vector<std::int64_t>& shape, layout l, std::mt19937_64& rng) {
  const std::size_t r = shape.size();
  std::vector<std::size_t> order(r);  // order[0] = the innermost (contiguous) mode
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (l == layout::row_major) std::reverse(order.begin(), order.end());
  if (l == layout::permuted || l == layout::padded) std::shuffle(order.begin(), order.end(), rng);
  strided_buffer b;
  b.strides.assign(r, 0);
  std::int64_t s = l == layout::padded ? 1 + static_cast<std::int64_t>(rng() % 2) : 1;  // padded: maybe a gap of 1
  for (std::size_t k = 0; k < r; ++k) {
    const std::size_t m = order[k];
    b.strides[m] = s;
    std::int64_t ext = shape[m];
    if (l == layout::padded) ext += 1 + static_cast<std::int64_t>(rng() % 3);
    s *= ext;
  }
  b.span = 1;
  for (std::size_t m = 0; m < r; ++m) b.span += (shape[m] - 1) * b.strides[m];
  if (l == layout::padded) b.span += 3;  // trailing padding too
  return b;
}

/// Calls f(row_major_index, strided_offset) for every element of `shape`.
template <class F>
void for_each_index(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides, F&& f) {
  const std::int64_t n = element_count(shape);
  std::vector<std::int64_t> idx(shape.size(), 0);
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) {
        off += strides[k];
        break;
      }
      off -= (shape[k] - 1) * strides[k];
      idx[k] = 0;
    }
  }
}

/// A buffer of `b.span` elements: the padding holds NaN (so reading outside the view shows up), the
/// view holds `logical`'s elements.
inline std::vector<unsigned char> scatter(const host_tensor& logical, const strided_buffer& b) {
  const std::size_t es = size_of(logical.type());
  std::vector<unsigned char> out(static_cast<std::size_t>(b.span) * es);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t i = 0; i < b.span; ++i) set_element(out.data(), logical.type(), i, {nan, nan});
  for_each_index(logical.shape(), b.strides, [&](std::int64_t i, std::int64_t off) {
    std::memcpy(out.data() + static_cast<std::size_t>(off) * es, static_cast<const unsigned char*>(logical.data()) + static_cast<std::size_t>(i) * es, es);
  });
  return out;
}

/// The logical (row-major) tensor viewed by `b` in `buffer`.
inline host_tensor gather(const std::vector<unsigned char>& buffer, dtype t, const std::vector<std::int64_t>& shape, const strided_buffer& b) {
  host_tensor h(t, shape);
  const std::size_t es = size_of(t);
  for_each_index(shape, b.strides, [&](std::int64_t i, std::int64_t off) {
    std::memcpy(static_cast<unsigned char*>(h.data()) + static_cast<std::size_t>(i) * es, buffer.data() + static_cast<std::size_t>(off) * es, es);
  });
  return h;
}

// ---------------------------------------------------------------------------------------------
// Random networks and trees.

struct random_network_spec {
  int tensors = 6;
  std::int64_t min_extent = 2, max_extent = 3;
  int max_rank = 4;
  int open_labels = 2;      // labels that appear once and stay in the output
  int hyperedges = 1;       // labels shared by three tensors
  double max_elements = 1 << 20;  // largest intermediate allowed (else the seed is bumped)
};

inline std::vector<label_t> sorted_unique(std::vector<label_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

/// A connected random network (a random spanning tree of bonds plus extra bonds, a few hyperedges
/// and open labels) with a greedy tree; seeds are tried from `seed` upward until the tree's largest
/// tensor fits `max_elements`. `used_seed` tells which one was taken.
inline problem random_problem(const random_network_spec& spec, std::uint64_t seed, dtype type, std::uint64_t* used_seed = nullptr) {
  for (std::uint64_t attempt = 0;; ++attempt) {
    if (attempt == 10000) throw internal_error("random_problem: no network within the size limit from seed " + std::to_string(seed));
    std::mt19937_64 rng(seed + attempt);
    const int n = spec.tensors;
    network net;
    net.inputs.resize(static_cast<std::size_t>(n));
    auto new_label = [&]() {
      const auto id = static_cast<label_t>(net.extents.size());
      net.extents.push_back(spec.min_extent + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(spec.max_extent - spec.min_extent + 1)));
      std::string name(1, 'l');
      name += std::to_string(id);
      net.label_names.push_back(std::move(name));
      return id;
    };
    auto rank_of = [&](int t) { return static_cast<int>(net.inputs[static_cast<std::size_t>(t)].size()); };
    auto pick = [&](int below) { return static_cast<int>(rng() % static_cast<std::uint64_t>(below)); };
    for (int t = 1; t < n; ++t) {  // spanning tree
      int u = pick(t);
      for (int k = 0; k < 8 && rank_of(u) >= spec.max_rank; ++k) u = pick(t);
      const label_t l = new_label();
      net.inputs[static_cast<std::size_t>(t)].push_back(l);
      net.inputs[static_cast<std::size_t>(u)].push_back(l);
    }
    for (int e = 0; e < n / 2; ++e) {  // extra bonds (cycles)
      const int u = pick(n), v = pick(n);
      if (u == v || rank_of(u) >= spec.max_rank || rank_of(v) >= spec.max_rank) continue;
      const label_t l = new_label();
      net.inputs[static_cast<std::size_t>(u)].push_back(l);
      net.inputs[static_cast<std::size_t>(v)].push_back(l);
    }
    for (int h = 0; h < spec.hyperedges && n >= 3; ++h) {
      int u = pick(n), v = pick(n), w = pick(n);
      if (u == v || v == w || u == w) continue;
      const label_t l = new_label();
      for (int t : {u, v, w}) net.inputs[static_cast<std::size_t>(t)].push_back(l);
    }
    for (int o = 0; o < spec.open_labels; ++o) {
      const label_t l = new_label();
      net.inputs[static_cast<std::size_t>(pick(n))].push_back(l);
      net.output.push_back(l);
    }
    for (auto& in : net.inputs) std::shuffle(in.begin(), in.end(), rng);
    std::shuffle(net.output.begin(), net.output.end(), rng);
    problem p;
    p.net = std::move(net);
    p.type = type;
    p.source = "random seed " + std::to_string(seed + attempt);
    p.tree = tree_from_linear_path(p.net, optimize_path(p.net, path_optimizer::greedy));
    validate(p.net, p.tree);
    if (cost_of(p.net, p.tree).max_elements > spec.max_elements) continue;
    if (used_seed != nullptr) *used_seed = seed + attempt;
    return p;
  }
}

/// Random inputs in [lo, hi) (both parts for complex), one stream per input.
inline std::vector<host_tensor> random_inputs(const problem& p, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<host_tensor> in;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) {
    in.emplace_back(p.type, p.net.shape_of(p.net.inputs[i]));
    fill_random(in.back(), seed, i, lo, hi);
  }
  return in;
}

/// Largest number of products summed into one element over the tree's steps (for tolerances).
inline double longest_sum(const problem& p) {
  const auto labels = operand_labels(p.net, p.tree);
  double longest = 1;
  for (const step& s : p.tree.steps) {
    std::vector<label_t> all = labels[static_cast<std::size_t>(s.lhs)];
    if (s.rhs >= 0) all.insert(all.end(), labels[static_cast<std::size_t>(s.rhs)].begin(), labels[static_cast<std::size_t>(s.rhs)].end());
    double len = 1;
    for (label_t l : sorted_unique(all))
      if (std::find(s.out.begin(), s.out.end(), l) == s.out.end()) len *= static_cast<double>(p.net.extents[static_cast<std::size_t>(l)]);
    longest = std::max(longest, len);
  }
  return longest;
}

/// The repository's source directory: $TNRT_SOURCE_DIR, else the first directory at or above the
/// current one (or the executable's) holding data/tensornetwork_permutation_optimized.json.
inline std::filesystem::path source_dir() {
  namespace fs = std::filesystem;
  const char* marker = "data/tensornetwork_permutation_optimized.json";
  if (const char* env = std::getenv("TNRT_SOURCE_DIR"); env != nullptr && *env != '\0' && fs::exists(fs::path(env) / marker)) return env;
  std::error_code ec;
  for (fs::path start : {fs::current_path(ec), fs::read_symlink("/proc/self/exe", ec).parent_path()}) {
    for (fs::path d = start; !d.empty(); d = d.parent_path()) {
      if (fs::exists(d / marker, ec)) return d;
      if (d == d.parent_path()) break;
    }
  }
  return {};
}

}  // namespace tnrt::gputest

