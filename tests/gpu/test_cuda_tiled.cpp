// The tiled streaming kernel (cuda::launch_tiled, src/cuda/tiled.cu) against the host references
// (it skips without a GPU):
//  - CUDA-graph capture: launch_tiled captured into a graph (the kernel's first use in the
//    process, with its once-only attribute setting and occupancy query inside the capture),
//    replayed twice with D clobbered in between: the same bits both times, matching
//    evaluate_tiled; Big changed in place and replayed again: the new result.
//  - random steps (the generator of tests/unit/test_tiled.cpp: Small lhs or rhs, free, batch,
//    s_free and contracted modes, one-sided sums, diagonals, free modes of large and prime extents,
//    row/column-major, permuted and padded layouts) in all four dtypes under several limit sets,
//    every third step with the operands one element off the pool's alignment (scalar copies where
//    the others may use 16-byte ones), vs evaluate_lowered on the host; operands followed by NaN guards (their padding NaN too), D's
//    padding and guards a sentinel that must survive; errors per element within
//    c (N + 2) eps sum|terms|. Counts that 16-byte copies (vec > 1) and partial last groups of
//    tiles (tile_count not a multiple of group) were among the launches.
//  - steps shaped like the reference network's (extents 2, column-major, Big 2^12 .. 2^16) under
//    the default limits but min_d_elements 1: many tiles per block (the grid-stride loop and the
//    register prefetch of the next tile).
//  - large steps: the reference network's step 303 at Big 2^22 f32 elements (D 2^23) and 2^20 c128
//    elements, element-wise against evaluate_tiled on the host within (k + 2) eps sum|terms|.
// Seeds are fixed and printed.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/step_lowering.hpp"
#include "core/tiled.hpp"
#include "cuda/tiled.hpp"
#include "support/kernel_random.hpp"
#include "support/tiled_random.hpp"
#include "mirrored.hpp"

namespace tnrt {
namespace {

using cuda::engine;
using kerntest::i64;

using gputest::guards;
using gputest::mirrored;
using gputest::to_device;
using gputest::from_device;
using gputest::release;
using gputest::compare_d;
using gputest::make_operand;
using gputest::make_result;

// evaluate_tiled on the host with the record's pointers replaced by host buffers; and the same on
// the magnitudes (in double) for the error bound.
template <class T>
std::vector<T> host_tiled(const tiled_record& rec, const std::vector<T>& big, const std::vector<T>& small, std::size_t d_size) {
  std::vector<T> d(d_size, kerntest::sentinel_value<T>());
  tiled_record r = rec;
  r.big = big.data();
  r.small = small.data();
  r.d = d.data();
  evaluate_tiled<T>(r);
  return d;
}

template <class T>
std::vector<double> host_tiled_bound(const tiled_record& rec, const std::vector<T>& big, const std::vector<T>& small, std::size_t d_size) {
  auto mag = [](const std::vector<T>& v) {
    std::vector<double> m(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) m[i] = kerntest::is_nan_value(v[i]) ? 0.0 : kerntest::magnitude(v[i]);
    return m;
  };
  return host_tiled<double>(rec, mag(big), mag(small), d_size);
}

// |got - want| <= (k + 2) c eps bound per element of D, everything outside D untouched (kerntest::check_d).
template <class T>
double elementwise_tol(const tiled_record& r, double c) {
  return c * static_cast<double>(r.k_count + 2) * kerntest::eps_of<T>();
}

// ---- the reference network's step 303 (column-major, extent 2) ----------------------------------

const std::vector<label_t> step303_a = {92, 188, 113, 52, 117, 131, 12, 39, 216};
const std::vector<label_t> step303_b = {87, 113, 185, 37, 129, 28, 63, 117, 53, 12, 131, 30, 174, 21,
                                        45, 68, 92, 14, 4, 13, 197, 214, 188, 152, 120, 35, 215};
const std::vector<label_t> step303_y = {52, 39, 216, 87, 185, 37, 129, 28, 63, 53, 30, 174, 21, 45,
                                        68, 14, 4, 13, 197, 214, 152, 120, 35, 215, 92, 113, 131, 12};
// B's free labels, slowest first: dropping the first n leaves Big of rank 27 - n.
const std::vector<label_t> step303_droppable = {215, 35, 120, 152, 214, 197, 13, 4, 14, 68, 45, 21, 174, 30};

kerntest::step_case step303(int drop) {
  const std::vector<label_t> dropped(step303_droppable.begin(), step303_droppable.begin() + drop);
  auto keep = [&](const std::vector<label_t>& ls) {
    std::vector<label_t> out;
    for (label_t l : ls)
      if (std::find(dropped.begin(), dropped.end(), l) == dropped.end()) out.push_back(l);
    return out;
  };
  kerntest::step_case s;
  s.extents.assign(256, 2);
  s.a.labels = keep(step303_a);
  s.b.labels = keep(step303_b);
  s.d.labels = keep(step303_y);
  s.small_side = 0;
  for (kerntest::operand_case* o : {&s.a, &s.b, &s.d}) {
    o->layout = kerntest::layout_kind::column_major;
    o->strides = dense_strides(kerntest::extents_of(o->labels, s.extents), true);
  }
  return s;
}

// ---- graph capture --------------------------------------------------------------------------------

// First in the file: for c64 this is the kernel's first launch in the process, inside the capture.
TEST(CudaTiled, GraphCaptureReplaysTheSameResult) {
  TNRT_SKIP_WITHOUT_GPU();
  engine eng(cuda::options{});
  using T = std::complex<float>;
  const kerntest::step_case sc = step303(27 - 16);  // Big 2^16, D 2^17
  SCOPED_TRACE(kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  std::mt19937_64 rng(4711);
  mirrored<T> a = make_operand<T>(rng, sc.a, sc.extents), b = make_operand<T>(rng, sc.b, sc.extents);
  mirrored<T> d = make_result<T>(sc.d, sc.extents);
  to_device(eng, a);
  to_device(eng, b);
  to_device(eng, d);
  tiled_record r;
  ASSERT_TRUE(describe_tiled(l, sizeof(T), a.dev, b.dev, d.dev, r));
  ASSERT_EQ(r.small, a.dev);
  ASSERT_GT(r.tile_count, 1);
  gputest::check_cuda(cudaStreamSynchronize(eng.stream()), "cudaStreamSynchronize before the capture");

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  TNRT_TEST_CUDA(cudaStreamBeginCapture(eng.stream(), cudaStreamCaptureModeThreadLocal));
  bool launched = true;
  try {
    cuda::launch_tiled(dtype::c64, r, eng.stream());
  } catch (const std::exception& e) {
    launched = false;
    ADD_FAILURE() << "launch_tiled under capture threw: " << e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(eng.stream(), &graph);
  ASSERT_TRUE(launched);
  TNRT_TEST_CUDA(end);
  ASSERT_NE(graph, nullptr);
  TNRT_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));

  // Capture must not have run anything: D still holds the sentinel.
  mirrored<T> untouched = d;
  from_device(eng, untouched);
  EXPECT_TRUE(kerntest::same_bits_value(untouched.host[0], kerntest::sentinel_value<T>())) << "the capture ran the kernel";

  const std::vector<T> want = host_tiled<T>(r, b.host, a.host, d.host.size());
  const std::vector<double> bound = host_tiled_bound<T>(r, b.host, a.host, d.host.size());
  TNRT_TEST_CUDA(cudaGraphLaunch(exec, eng.stream()));
  from_device(eng, d);
  const std::vector<T> first = d.host;
  EXPECT_EQ(kerntest::check_d(l, first, want, bound, elementwise_tol<T>(r, 4.0)), 0);
  // Clobber D (NaN bytes), replay: the same bits.
  TNRT_TEST_CUDA(cudaMemsetAsync(d.dev, 0xFF, d.host.size() * sizeof(T), eng.stream()));
  TNRT_TEST_CUDA(cudaGraphLaunch(exec, eng.stream()));
  from_device(eng, d);
  int diff = 0;
  for (std::size_t i = 0; i + guards < first.size(); ++i)
    if (!kerntest::same_bits_value(d.host[i], first[i])) ++diff;
  EXPECT_EQ(diff, 0) << "the second replay differs from the first";
  // New values in Big, in place: the replay reads them.
  for (std::size_t i = 0; i + guards < b.host.size(); ++i) b.host[i] = kerntest::random_value<T>(rng);
  gputest::upload_bytes(eng, b.dev, b.host.data(), b.host.size() * sizeof(T));
  TNRT_TEST_CUDA(cudaGraphLaunch(exec, eng.stream()));
  from_device(eng, d);
  const std::vector<T> want2 = host_tiled<T>(r, b.host, a.host, d.host.size());
  const std::vector<double> bound2 = host_tiled_bound<T>(r, b.host, a.host, d.host.size());
  // D's guards hold NaN bytes now (the memset); compare D's elements only.
  std::vector<T> got2(d.host.begin(), d.host.end() - static_cast<std::ptrdiff_t>(guards));
  std::vector<T> w2(want2.begin(), want2.end() - static_cast<std::ptrdiff_t>(guards));
  EXPECT_EQ(kerntest::check_d(l, got2, w2, bound2, elementwise_tol<T>(r, 4.0)), 0);

  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  release(eng, a);
  release(eng, b);
  release(eng, d);
  eng.synchronize();
}

// ---- random steps ---------------------------------------------------------------------------------

const tiled_limits device_limit_sets[] = {
    tiled_limits{48 * 1024, 1, 256, 64, 4096, 96 * 1024},
    tiled_limits{48 * 1024, 1, 4, 1, 4096, 96 * 1024},
    tiled_limits{48 * 1024, 1, 4096, 4096, 4096, 96 * 1024},
    tiled_limits{8 * 1024, 1, 64, 1, 256, 12 * 1024},
    // contracted modes staged first (vector loads of a result's values)
    tiled_limits{48 * 1024, 1, 256, 64, 4096, 96 * 1024, 16 * 1024, true},
    tiled_limits{48 * 1024, 1, 4, 1, 4096, 96 * 1024, 2 * 1024, true},
    // the default caps (larger tiles for results in vectors sharing coefficients), and scalar results
    tiled_limits{48 * 1024, 1},
    tiled_limits{48 * 1024, 1, 256, 64, 4096, 96 * 1024, 16 * 1024, false, false},
    // D's leading modes staged first
    tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, false, true, true},
    // coefficients from a table in shared memory (run_table), Big's order and contracted modes first
    tiled_limits{48 * 1024, 1, 256, 64, 8192, 96 * 1024, 16 * 1024, false, true, false, true},
    tiled_limits{48 * 1024, 1, 4, 1, 8192, 96 * 1024, 2 * 1024, true, true, false, true},
};

struct device_counts {
  int launched = 0, plans = 0, vectorized = 0, partial = 0, run_values = 0, run_coefs = 0, unaligned_d = 0, d_first = 0, run_table = 0;
};

template <class T>
void tiled_steps_on_device(engine& eng, std::uint64_t seed, int count, device_counts& c, const kerntest::tiled_gen& g = {}) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    kerntest::tiled_expectation ex;
    const kerntest::step_case sc = kerntest::random_tiled_step(rng, ex, g);
    const std::string where = std::string(kerntest::type_name<T>()) + " seed " + std::to_string(seed) + " step #" + std::to_string(i);
    SCOPED_TRACE(where + "\n  " + kerntest::describe(sc));
    const lowered_step l = kerntest::lower(sc);
    mirrored<T> a = make_operand<T>(rng, sc.a, sc.extents), b = make_operand<T>(rng, sc.b, sc.extents);
    // Every third step: the operands one element off the pool's alignment (no vector copies).
    const std::size_t shift = i % 3 == 2 ? 1 : 0;
    to_device(eng, a, shift);
    to_device(eng, b, shift);
    const std::size_t d_size = static_cast<std::size_t>(kerntest::span_of(sc.d, sc.extents)) + guards;
    std::vector<T> want(d_size, kerntest::sentinel_value<T>());
    evaluate_lowered<T>(l, a.host.data(), b.host.data(), want.data());
    const std::vector<double> bound = kerntest::magnitude_bound<T>(l, a.host, b.host, d_size);
    const double tol = 4.0 * static_cast<double>(kerntest::sum_length(l) + 2) * kerntest::eps_of<T>();  // the GPU may use FMAs
    for (const tiled_limits& lim : device_limit_sets) {
      ++c.plans;
      mirrored<T> d = make_result<T>(sc.d, sc.extents);
      // Every fourth step: D one element off too (vector layouts store result by result).
      to_device(eng, d, i % 4 == 3 ? 1 : 0);
      tiled_record r;
      if (describe_tiled(l, sizeof(T), a.dev, b.dev, d.dev, r, lim)) {
        SCOPED_TRACE("record: " + kerntest::describe(r));
        cuda::launch_tiled(dtype_of<T>::value, r, eng.stream());
        from_device(eng, d);
        ++c.launched;
        if (r.vec > 1) ++c.vectorized;
        if (r.group > 1 && r.tile_count % r.group != 0) ++c.partial;
        if (r.vec_kind == tiled_run_values) ++c.run_values;
        if (r.vec_kind == tiled_run_coefs) ++c.run_coefs;
        if (r.vec_kind == tiled_run_coefs && r.d_first != 0) ++c.d_first;
        if (r.vec_kind == tiled_run_table) ++c.run_table;
        if (r.vec_kind != tiled_scalar && r.vec_store == 0) ++c.unaligned_d;
        kerntest::check_d<T>(l, d.host, want, bound, tol);
      }
      release(eng, d);
      if (::testing::Test::HasFailure()) break;
    }
    release(eng, a);
    release(eng, b);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CudaTiled, RandomStepsMatchEvaluateLowered) {
  TNRT_SKIP_WITHOUT_GPU();
  engine eng(cuda::options{});
  const std::uint64_t seed = 70707;
  const int per_dtype = 150;
  std::printf("[tiled kernel] seed %llu (+0..3 by dtype), %d steps per dtype, %zu limit sets\n", static_cast<unsigned long long>(seed), per_dtype,
              std::size(device_limit_sets));
  device_counts c;
  tiled_steps_on_device<float>(eng, seed, per_dtype, c);
  tiled_steps_on_device<double>(eng, seed + 1, per_dtype, c);
  tiled_steps_on_device<std::complex<float>>(eng, seed + 2, per_dtype, c);
  tiled_steps_on_device<std::complex<double>>(eng, seed + 3, per_dtype, c);
  std::printf("[tiled kernel] %d of %d plans launched and checked (%d with vector copies, %d with a partial last group of tiles, results in runs "
              "by value offsets %d / sharing coefficients %d (%d with D's modes first) / from a table %d, %d of those to an unaligned D)\n",
              c.launched, c.plans, c.vectorized, c.partial, c.run_values, c.run_coefs, c.d_first, c.run_table, c.unaligned_d);
  EXPECT_GT(c.launched, c.plans / 2);
  EXPECT_GT(c.vectorized, 20);
  EXPECT_GT(c.partial, 20);
  EXPECT_GT(c.run_values, 20);
  EXPECT_GT(c.run_coefs, 20);
  EXPECT_GT(c.unaligned_d, 5);
  EXPECT_GT(c.d_first, 5);
  eng.synchronize();
}

// run_table on the device: f32 steps with 8 to 64 contracted combinations and s_free modes (the
// generator's table_like shapes) under every limit set, against evaluate_lowered.
TEST(CudaTiled, TableLikeStepsMatchEvaluateLowered) {
  TNRT_SKIP_WITHOUT_GPU();
  engine eng(cuda::options{});
  const std::uint64_t seed = 616161;
  kerntest::tiled_gen g;
  g.table_like = true;
  g.max_small = 1 << 12;
  device_counts c;
  tiled_steps_on_device<float>(eng, seed, 150, c, g);
  std::printf("[tiled table] seed %llu, 150 f32 steps: %d of %d plans launched and checked, %d from a table (%d with vector copies)\n",
              static_cast<unsigned long long>(seed), c.launched, c.plans, c.run_table, c.vectorized);
  EXPECT_GT(c.run_table, 10) << "too few table plans: the test would pass vacuously";
  eng.synchronize();
}

template <class T>
void reference_shaped_on_device(engine& eng, std::mt19937_64& rng, int i, int& launched) {
  const int big_rank = 12 + static_cast<int>(rng() % 5);   // 12..16
  const int small_rank = 4 + static_cast<int>(rng() % 6);  // 4..9
  kerntest::tiled_expectation ex;
  const kerntest::step_case sc = kerntest::reference_like_step(rng, big_rank, small_rank, static_cast<int>(rng() % 2), ex);
  SCOPED_TRACE(std::string(kerntest::type_name<T>()) + " reference-shaped step #" + std::to_string(i) + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  mirrored<T> a = make_operand<T>(rng, sc.a, sc.extents), b = make_operand<T>(rng, sc.b, sc.extents);
  mirrored<T> d = make_result<T>(sc.d, sc.extents);
  to_device(eng, a);
  to_device(eng, b);
  to_device(eng, d);
  tiled_limits lim;
  lim.min_d_elements = 1;
  tiled_record r;
  if (describe_tiled(l, sizeof(T), a.dev, b.dev, d.dev, r, lim)) {
    SCOPED_TRACE("record: " + kerntest::describe(r));
    cuda::launch_tiled(dtype_of<T>::value, r, eng.stream());
    from_device(eng, d);
    ++launched;
    compare_d<T>(l, a.host, b.host, d.host, 4.0);
  }
  release(eng, a);
  release(eng, b);
  release(eng, d);
}

TEST(CudaTiled, ReferenceShapedStepsMatchEvaluateLowered) {
  TNRT_SKIP_WITHOUT_GPU();
  engine eng(cuda::options{});
  const std::uint64_t seed = 80808;
  std::printf("[tiled kernel reference-shaped] seed %llu, 25 steps per dtype\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  int launched = 0;
  for (int i = 0; i < 25 && !::testing::Test::HasFailure(); ++i) reference_shaped_on_device<float>(eng, rng, i, launched);
  for (int i = 0; i < 25 && !::testing::Test::HasFailure(); ++i) reference_shaped_on_device<double>(eng, rng, i, launched);
  for (int i = 0; i < 25 && !::testing::Test::HasFailure(); ++i) reference_shaped_on_device<std::complex<float>>(eng, rng, i, launched);
  for (int i = 0; i < 25 && !::testing::Test::HasFailure(); ++i) reference_shaped_on_device<std::complex<double>>(eng, rng, i, launched);
  std::printf("[tiled kernel reference-shaped] %d launched and checked\n", launched);
  EXPECT_GT(launched, 80);
  eng.synchronize();
}

// ---- large steps ----------------------------------------------------------------------------------

template <class T>
void large_step303(int big_rank) {
  engine eng(cuda::options{});
  const kerntest::step_case sc = step303(27 - big_rank);
  ASSERT_EQ(static_cast<int>(sc.b.labels.size()), big_rank);
  SCOPED_TRACE(std::string(kerntest::type_name<T>()) + " step 303 at Big rank " + std::to_string(big_rank) + "\n  " + kerntest::describe(sc));
  const lowered_step l = kerntest::lower(sc);
  std::mt19937_64 rng(303 + static_cast<std::uint64_t>(big_rank));
  mirrored<T> a, b;
  a.host.assign(std::size_t{1} << sc.a.labels.size(), T{});
  b.host.assign(std::size_t{1} << sc.b.labels.size(), T{});
  for (T& x : a.host) x = kerntest::random_value<T>(rng);
  for (T& x : b.host) x = kerntest::random_value<T>(rng);
  a.host.resize(a.host.size() + guards, kerntest::guard_value<T>());
  b.host.resize(b.host.size() + guards, kerntest::guard_value<T>());
  mirrored<T> d;
  d.host.assign((std::size_t{1} << sc.d.labels.size()) + guards, kerntest::sentinel_value<T>());
  to_device(eng, a);
  to_device(eng, b);
  to_device(eng, d);
  tiled_record r;
  ASSERT_TRUE(describe_tiled(l, sizeof(T), a.dev, b.dev, d.dev, r)) << "the default limits";
  ASSERT_EQ(r.small, a.dev);
  SCOPED_TRACE("record: " + kerntest::describe(r));
  std::printf("[tiled kernel large] %s Big 2^%d: %lld tiles of %d Big / %d D elements, %zu B shared\n", kerntest::type_name<T>(), big_rank,
              static_cast<long long>(r.tile_count), r.tile_big, r.tile_d, r.shared_bytes(sizeof(T)));
  cuda::launch_tiled(dtype_of<T>::value, r, eng.stream());
  from_device(eng, d);
  const std::vector<T> want = host_tiled<T>(r, b.host, a.host, d.host.size());
  const std::vector<double> bound = host_tiled_bound<T>(r, b.host, a.host, d.host.size());
  EXPECT_EQ(kerntest::check_d(l, d.host, want, bound, elementwise_tol<T>(r, 4.0)), 0);
  release(eng, a);
  release(eng, b);
  release(eng, d);
  eng.synchronize();
}

TEST(CudaTiled, LargeReferenceStepF32) {
  TNRT_SKIP_WITHOUT_GPU();
  large_step303<float>(22);
}

TEST(CudaTiled, LargeReferenceStepC128) {
  TNRT_SKIP_WITHOUT_GPU();
  large_step303<std::complex<double>>(20);
}

}  // namespace
}  // namespace tnrt
