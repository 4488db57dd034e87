#pragma once
// Host buffers mirrored on the device for the kernel tests (test_cuda_kernels, test_cuda_tiled):
// operands of a random step case with NaN guards behind them, results with a sentinel.
// Include after gpu_test_util.hpp.
#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "core/step_lowering.hpp"
#include "cuda/engine.hpp"
#include "support/kernel_random.hpp"

namespace tnrt::gputest {

inline constexpr std::size_t guards = 8;

// A host buffer and its device copy (a pool block, `dev` = its start + `shift` elements), released
// by the owner.
template <class T>
struct mirrored {
  std::vector<T> host;
  void* dev = nullptr;
  void* block = nullptr;
};

template <class T>
void to_device(cuda::engine& eng, mirrored<T>& m, std::size_t shift = 0) {
  m.block = eng.pool().allocate((std::max<std::size_t>(1, m.host.size()) + shift) * sizeof(T), eng.stream_handle());
  m.dev = static_cast<T*>(m.block) + shift;
  gputest::upload_bytes(eng, m.dev, m.host.data(), m.host.size() * sizeof(T));
}

template <class T>
void from_device(cuda::engine& eng, mirrored<T>& m) {
  gputest::download_bytes(eng, m.host.data(), m.dev, m.host.size() * sizeof(T));
}

template <class T>
void release(cuda::engine& eng, mirrored<T>& m) {
  if (m.block != nullptr) eng.pool().deallocate(m.block, eng.stream_handle());
  m.block = nullptr;
  m.dev = nullptr;
}

// An operand of a step case filled with random values at its elements, NaN elsewhere (padding and guards).
template <class T>
mirrored<T> make_operand(std::mt19937_64& rng, const kerntest::operand_case& o, const std::vector<kerntest::i64>& extents) {
  mirrored<T> m;
  m.host = kerntest::random_operand<T>(rng, o, extents, guards);
  return m;
}

template <class T>
mirrored<T> make_result(const kerntest::operand_case& o, const std::vector<kerntest::i64>& extents) {
  mirrored<T> m;
  m.host.assign(static_cast<std::size_t>(kerntest::span_of(o, extents)) + guards, kerntest::sentinel_value<T>());
  return m;
}

// Compares D (device result downloaded into `got`) with evaluate_lowered; returns the number of bad
// elements. The GPU sums in another order and may contract a*b+c into an FMA: tolerance c (N + 2) eps.
template <class T>
int compare_d(const lowered_step& l, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& got, double c) {
  std::vector<T> want(got.size(), kerntest::sentinel_value<T>());
  evaluate_lowered<T>(l, a.data(), l.kind == lowered_kind::contraction ? b.data() : nullptr, want.data());
  const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a, b, got.size());
  const double tol = c * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();
  return kerntest::check_d<T>(l, got, want, bound, tol);
}

}  // namespace tnrt::gputest
