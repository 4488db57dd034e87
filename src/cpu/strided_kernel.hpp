#pragma once
// The direct kernel: out[o] = sum over summed modes of A[..] * B[..] over strided views, with no
// GEMM. It serves elementwise/broadcast products, small contractions, diagonals, one-sided sums and
// permutations (a unary step is a product with a stride-0 scalar one).
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace tnrt::cpu {

/// One loop of the nest: extent and the element strides in out, A and B (0 where the mode is
/// absent; a label repeated in an operand contributes the sum of its strides, i.e. the diagonal).
struct loop_mode {
  std::int64_t extent = 1;
  std::int64_t out_stride = 0;
  std::int64_t a_stride = 0;
  std::int64_t b_stride = 0;
};

/// Runs out = sum_k a*b for T in {float, double, complex<float>, complex<double>}.
/// `out_modes` are the result's modes outermost first, and `out` must be the dense row-major tensor
/// they describe (size-1 modes are allowed anywhere). `sum_modes` carry out_stride 0. `b` may point
/// to a single element with all b strides 0.
template <class T>
void run_direct(T* out, const T* a, const T* b, std::vector<loop_mode> out_modes, std::vector<loop_mode> sum_modes);

/// Threads the direct kernels use (set_threads; 0 or less: all cores).
int thread_count() noexcept;
void set_direct_threads(int n) noexcept;

/// Runs body(lo, hi) over [0, n) split into one contiguous chunk per thread; inline when `work`
/// (a rough count of elements touched) is too small for threads to pay for their start-up.
template <class F>
void parallel_for(std::int64_t n, std::int64_t work, F&& body) {
  constexpr std::int64_t min_work_per_thread = std::int64_t{1} << 15;
  const std::int64_t want = std::min<std::int64_t>({thread_count(), n, std::max<std::int64_t>(1, work / min_work_per_thread)});
  if (want <= 1) {
    if (n > 0) body(std::int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(want - 1));
  const std::int64_t chunk = (n + want - 1) / want;
  for (std::int64_t t = 1; t < want; ++t) {
    const std::int64_t lo = t * chunk;
    const std::int64_t hi = std::min(n, lo + chunk);
    if (lo < hi) pool.emplace_back([&body, lo, hi] { body(lo, hi); });
  }
  body(std::int64_t{0}, std::min(n, chunk));
  for (auto& th : pool) th.join();
}

}  // namespace tnrt::cpu
