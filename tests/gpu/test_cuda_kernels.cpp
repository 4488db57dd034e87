// tnrt's own CUDA kernels against the host references (they skip without a GPU):
//  - launch_small_steps (device table) and launch_small_steps_from_host (records as kernel
//    parameters, several launches, subtrees split across them): random independent steps grouped
//    into random subtrees, and whole absorbed subtrees of random trees (steps depending on each
//    other inside one block), vs evaluate_lowered.
//  - whole random trees through contract_eager and compiled_program with tiled_min_elements = 1,
//    fuse_max_elements in {1, 64, 1024}, tiled_kernel = always (automatic with 64) and every
//    intermediate layout, vs tnrt::cpu::contract;
//  - compiled with the kernels on (tiled always, fusion) vs off (never, no fusion): the same
//    results to rounding.
// Seeds are fixed and printed.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/fusion.hpp"
#include "core/step_lowering.hpp"
#include "cuda/compiled.hpp"
#include "cuda/eager.hpp"
#include "cuda/small_steps.hpp"
#include "support/kernel_random.hpp"
#include "mirrored.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt {
namespace {

using cuda::engine;
using kerntest::i64;

constexpr dtype all_dtypes[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};
using gputest::guards;
using gputest::mirrored;
using gputest::to_device;
using gputest::from_device;
using gputest::release;
using gputest::compare_d;
using gputest::make_operand;

// ---- launch_small_steps ----------------------------------------------------------------------------

// Launches the records: from a device table (compiled mode's path; uploaded here and freed after),
// or from host memory as kernel parameters (eager mode's path, several launches when there are more
// than small_steps_per_launch records, subtrees split across them).
void launch_records(engine& eng, dtype t, const std::vector<small_step_record>& records, const std::vector<int>& begin, bool from_host) {
  const int subtrees = static_cast<int>(begin.size()) - 1;
  if (from_host) {
    cuda::launch_small_steps_from_host(t, records.data(), begin.data(), subtrees, eng.stream());
    gputest::check_cuda(cudaStreamSynchronize(eng.stream()), "cudaStreamSynchronize after the fused launches");
    return;
  }
  const std::size_t rec_bytes = records.size() * sizeof(small_step_record);
  const std::size_t begin_bytes = begin.size() * sizeof(int);
  void* table = eng.pool().allocate(rec_bytes + begin_bytes + 256, eng.stream_handle());
  void* begin_dev = static_cast<unsigned char*>(table) + (rec_bytes + 255) / 256 * 256;
  gputest::upload_bytes(eng, table, records.data(), rec_bytes);
  gputest::upload_bytes(eng, begin_dev, begin.data(), begin_bytes);
  cuda::launch_small_steps(t, static_cast<const small_step_record*>(table), static_cast<const int*>(begin_dev), subtrees, eng.stream());
  gputest::check_cuda(cudaStreamSynchronize(eng.stream()), "cudaStreamSynchronize after the fused launch");
  eng.pool().deallocate(table, eng.stream_handle());
}

template <class T>
void small_steps_on_device(engine& eng, std::uint64_t seed, int count, bool from_host, int& checked) {
  std::mt19937_64 rng(seed);
  std::vector<kerntest::step_case> cases;
  std::vector<lowered_step> lows;
  std::vector<mirrored<T>> as, bs, ds;
  std::vector<small_step_record> records;
  for (int i = 0; i < count; ++i) {
    cases.push_back(kerntest::random_general_step(rng));
    const kerntest::step_case& sc = cases.back();
    lows.push_back(kerntest::lower(sc));
    as.push_back(make_operand<T>(rng, sc.a, sc.extents));
    bs.push_back(sc.unary ? mirrored<T>{} : make_operand<T>(rng, sc.b, sc.extents));
    mirrored<T> d;
    d.host.assign(static_cast<std::size_t>(kerntest::span_of(sc.d, sc.extents)) + guards, kerntest::sentinel_value<T>());
    ds.push_back(std::move(d));
  }
  for (int i = 0; i < count; ++i) {
    const auto u = static_cast<std::size_t>(i);
    to_device(eng, as[u]);
    if (!cases[u].unary) to_device(eng, bs[u]);
    to_device(eng, ds[u]);
    small_step_record r;
    ASSERT_TRUE(describe_small_step(lows[u], as[u].dev, bs[u].dev, ds[u].dev, r)) << kerntest::describe(cases[u]);
    records.push_back(r);
  }
  // Random subtree sizes 1..6 (the steps are independent; each block walks its list in order).
  std::vector<int> begin{0};
  while (begin.back() < count) begin.push_back(std::min(count, begin.back() + 1 + static_cast<int>(rng() % 6)));
  launch_records(eng, dtype_of<T>::value, records, begin, from_host);
  for (int i = 0; i < count; ++i) {
    const auto u = static_cast<std::size_t>(i);
    SCOPED_TRACE(std::string(kerntest::type_name<T>()) + (from_host ? " from host" : " device table") + " seed " + std::to_string(seed) + " step #" + std::to_string(i) + "\n  " +
                 kerntest::describe(cases[u]));
    from_device(eng, ds[u]);
    compare_d<T>(lows[u], as[u].host, bs[u].host, ds[u].host, 4.0);
    ++checked;
    release(eng, as[u]);
    release(eng, bs[u]);
    release(eng, ds[u]);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CudaKernels, SmallStepsRandomSteps) {
  if (auto why = tnrt::cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  engine eng(cuda::options{});
  const std::uint64_t seed = 80808;
  std::printf("[small steps kernel] seed %llu (+0..3 by dtype)\n", static_cast<unsigned long long>(seed));
  int checked = 0;
  for (bool from_host : {false, true}) {
    small_steps_on_device<float>(eng, seed, 300, from_host, checked);
    small_steps_on_device<double>(eng, seed + 1, 300, from_host, checked);
    small_steps_on_device<std::complex<float>>(eng, seed + 2, 300, from_host, checked);
    small_steps_on_device<std::complex<double>>(eng, seed + 3, 300, from_host, checked);
  }
  std::printf("[small steps kernel] %d steps checked (device table and from host)\n", checked);
  EXPECT_EQ(checked, 2400);
  eng.synchronize();
}

// Whole absorbed subtrees of random trees: steps inside one block depend on each other.
// input_scale multiplies the inputs; normwise > 0 also bounds each result's norm-wise relative
// difference (for long chains, where the |values| bound grows much faster than the values).
// Every stage_every-th record stages its operands in shared memory (and so runs alone, outside any
// group); 0: none does, so the groups are exactly those of group_small_steps on unstaged records.
template <class T>
void absorbed_subtrees_on_device(engine& eng, const problem& p, layout_policy pol, bool from_host,
                                 std::uint64_t data_seed, int& steps_checked, double input_scale = 1.0,
                                 double normwise = 0.0, int stage_every = 3) {
  const std::size_t n = p.net.inputs.size(), steps = p.tree.steps.size();
  const fusion_plan f = plan_fusion(p, fusion_limits{1024, 2});
  if (f.subtrees() == 0) return;
  const kerntest::lowered_tree lt = kerntest::lower_tree(p, pol);
  const auto labels = operand_labels(p.net, p.tree);
  const auto in = kerntest::random_tree_inputs(p, data_seed);
  std::vector<mirrored<T>> buf(n + steps);
  std::vector<std::vector<T>> ref(n + steps);
  std::vector<std::vector<double>> mag(n + steps);
  std::vector<double> factor(n + steps, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    buf[i].host.assign(in[i].as<T>(), in[i].as<T>() + in[i].size());
    for (T& v : buf[i].host) v *= static_cast<typename kerntest::real_of<T>::type>(input_scale);
    ref[i] = buf[i].host;
    for (const T& v : ref[i]) mag[i].push_back(kerntest::magnitude(v));
    to_device(eng, buf[i]);
  }
  std::vector<small_step_record> records;
  for (int k : f.absorbed) {
    const auto ks = static_cast<std::size_t>(k);
    buf[n + ks].host.assign(static_cast<std::size_t>(element_count(p.net.shape_of(labels[n + ks]))), kerntest::guard_value<T>());
    ref[n + ks].assign(buf[n + ks].host.size(), T{});
    mag[n + ks].assign(buf[n + ks].host.size(), 0.0);
    to_device(eng, buf[n + ks]);
    const step& s = p.tree.steps[ks];
    small_step_record r;
    ASSERT_TRUE(describe_small_step(lt.steps[ks], buf[static_cast<std::size_t>(s.lhs)].dev,
                                    s.rhs >= 0 ? buf[static_cast<std::size_t>(s.rhs)].dev : nullptr, buf[n + ks].dev, r,
                                    stage_every > 0 && records.size() % static_cast<std::size_t>(stage_every) == 0));
    records.push_back(r);
  }
  group_small_steps(f, records, true);  // every step has a buffer of its own: any grouping is safe
  launch_records(eng, dtype_of<T>::value, records, f.subtree_begin, from_host);
  for (int k : f.absorbed) {  // host chain, in the same (topological) order
    const auto ks = static_cast<std::size_t>(k);
    const step& s = p.tree.steps[ks];
    SCOPED_TRACE(p.source + " " + kerntest::name_of_policy(pol) + " absorbed step " + std::to_string(k));
    evaluate_lowered<T>(lt.steps[ks], ref[static_cast<std::size_t>(s.lhs)].data(), s.rhs >= 0 ? ref[static_cast<std::size_t>(s.rhs)].data() : nullptr,
                        ref[n + ks].data());
    from_device(eng, buf[n + ks]);
    // Chains of steps: per element within 2 F eps sum|terms| of the chain (mag: the chain on |values|),
    // F accumulating N + 2 over the steps below (errors of operands propagate through the bound).
    evaluate_lowered<double>(lt.steps[ks], mag[static_cast<std::size_t>(s.lhs)].data(), s.rhs >= 0 ? mag[static_cast<std::size_t>(s.rhs)].data() : nullptr,
                             mag[n + ks].data());
    factor[n + ks] = static_cast<double>(kerntest::sum_length(lt.steps[ks]) + 2) + factor[static_cast<std::size_t>(s.lhs)] +
                     (s.rhs >= 0 ? factor[static_cast<std::size_t>(s.rhs)] : 0.0);
    const double tol = 2.0 * factor[n + ks] * kerntest::eps_of<T>();
    int bad = 0;
    for (std::size_t i = 0; i < ref[n + ks].size() && bad < 5; ++i) {
      const double err = static_cast<double>(std::abs(buf[n + ks].host[i] - ref[n + ks][i]));
      if (!(err <= tol * mag[n + ks][i])) {
        ADD_FAILURE() << "element " << i << ": device " << buf[n + ks].host[i] << " host " << ref[n + ks][i] << " (|err| " << err << " > " << tol
                      << " * " << mag[n + ks][i] << ")";
        ++bad;
      }
    }
    if (normwise > 0) {
      double num = 0, den = 0;
      for (std::size_t i = 0; i < ref[n + ks].size(); ++i) {
        num += std::norm(std::complex<double>(buf[n + ks].host[i]) - std::complex<double>(ref[n + ks][i]));
        den += std::norm(std::complex<double>(ref[n + ks][i]));
      }
      EXPECT_LE(std::sqrt(num / den), normwise) << "norm-wise relative difference to the host chain";
    }
    ++steps_checked;
  }
  for (auto& b : buf) release(eng, b);
}

TEST(CudaKernels, SmallStepsAbsorbedSubtrees) {
  if (auto why = tnrt::cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  engine eng(cuda::options{});
  const std::uint64_t base = 31415;
  std::printf("[absorbed subtrees] seeds from %llu\n", static_cast<unsigned long long>(base));
  kerntest::tree_spec spec;
  spec.max_inputs = 14;
  spec.max_labels = 14;
  spec.max_elements = 1 << 14;
  int checked = 0;
  const layout_policy policies[] = {layout_policy::column_major, layout_policy::row_major, layout_policy::follow};
  for (int i = 0; i < 80; ++i) {
    const dtype t = all_dtypes[static_cast<std::size_t>(i) % 4];
    std::uint64_t used = 0;
    const problem p = kerntest::random_tree_problem(spec, base + static_cast<std::uint64_t>(i) * 13, t, &used);
    visit_dtype(t, [&](auto zero) {
      using T = decltype(zero);
      absorbed_subtrees_on_device<T>(eng, p, policies[static_cast<std::size_t>(i) % 3], i % 2 == 1, used + 7, checked);
    });
    if (HasFailure()) break;
  }
  // One long chain (v M1 M2 ... M150, 8 x 8): a single subtree of 150 dependent steps, which the
  // from-host path splits across launches of small_steps_per_launch records.
  for (dtype t : all_dtypes) {
    const int links = 150;
    problem chain = kerntest::labelled_problem(t, "matrix-vector chain", links + 1, 8);
    chain.net.inputs.push_back({0});
    for (int l = 1; l <= links; ++l) chain.net.inputs.push_back({l - 1, l});
    chain.net.output = {links};
    for (int l = 1; l <= links; ++l) chain.tree.steps.push_back(step{l == 1 ? 0 : links + l - 1, l, {l}});
    validate(chain.net, chain.tree);
    ASSERT_EQ(plan_fusion(chain, fusion_limits{1024, 2}).subtrees(), 1U);
    for (bool from_host : {false, true})
      visit_dtype(t, [&](auto zero) {
        using T = decltype(zero);
        // entries scaled by 1/sqrt(8): the values stay near 1 along the chain
        absorbed_subtrees_on_device<T>(eng, chain, layout_policy::column_major, from_host, 4242, checked, 0.3535533905932738,
                                       1e4 * kerntest::eps_of<T>());
      });
  }
  // Balanced trees over the same kind of chain (matrices 4 x 4, pairs first, an odd one out carried
  // up a level): 128 matrices make one subtree of 127 steps on 7 levels, so groups of
  // small_step_group_max records run together; with 80 the from-host path's launches of
  // small_steps_per_launch (72) records split the group of records 70..74 across two launches.
  for (const int mats : {128, 80}) {
    for (dtype t : all_dtypes) {
      const problem tree = kerntest::balanced_matrix_tree(t, mats, 4);
      const fusion_plan f = plan_fusion(tree, fusion_limits{1024, 2});
      ASSERT_EQ(f.subtrees(), 1U);
      ASSERT_EQ(f.absorbed.size(), static_cast<std::size_t>(mats - 1));
      ASSERT_EQ(f.level.back(), 6);
      for (bool from_host : {false, true})
        visit_dtype(t, [&](auto zero) {
          using T = decltype(zero);
          absorbed_subtrees_on_device<T>(eng, tree, layout_policy::column_major, from_host, 4343, checked, 0.5,
                                         1e4 * kerntest::eps_of<T>(), 0);
        });
    }
  }
  std::printf("[absorbed subtrees] %d absorbed steps checked\n", checked);
  EXPECT_GT(checked, 100);
  eng.synchronize();
}

// ---- whole trees --------------------------------------------------------------------------------

host_tensor run_eager(engine& eng, const problem& p, const std::vector<host_tensor>& in) {
  std::vector<void*> d;
  for (const auto& t : in) d.push_back(gputest::upload(eng, t));
  cuda::device_operand r = cuda::contract_eager(eng, p, d);
  host_tensor out = gputest::download(eng, r.ptr, p.type, p.net.shape_of(p.net.output));
  eng.pool().deallocate(r.ptr, eng.stream_handle());
  for (void* x : d) eng.pool().deallocate(x, eng.stream_handle());
  return out;
}

struct compiled_info {
  std::size_t subtrees = 0, absorbed = 0, launches = 0;
  int tiled = 0;
};

host_tensor run_compiled(engine& eng, const problem& p, const std::vector<host_tensor>& in, compiled_info* info = nullptr) {
  cuda::compiled_program prog(eng, p);
  if (info != nullptr) *info = compiled_info{prog.fusion().subtrees(), prog.fusion().absorbed.size(), prog.launches(), prog.tiled_chosen()};
  for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
  prog.run();
  return gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
}

std::vector<problem> test_trees(dtype t) {
  std::vector<problem> trees;
  // greedy trees of random networks (hyperedges, open labels): larger intermediates, large x small steps
  for (int tensors : {4, 7, 10, 13}) {
    gputest::random_network_spec spec;
    spec.tensors = tensors;
    spec.max_extent = 4;
    spec.max_elements = 1 << 16;
    trees.push_back(gputest::random_problem(spec, 4100 + static_cast<std::uint64_t>(tensors), t));
  }
  // random trees with diagonals, unary steps, one-sided sums, scalar results
  kerntest::tree_spec spec;
  spec.max_inputs = 12;
  spec.max_elements = 1 << 14;
  for (std::uint64_t s : {5101u, 5102u, 5103u, 5104u}) trees.push_back(kerntest::random_tree_problem(spec, s, t));
  return trees;
}

TEST(CudaKernels, TreesEagerAndCompiledMatchCpu) {
  if (auto why = tnrt::cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const layout_policy policies[] = {layout_policy::column_major, layout_policy::row_major, layout_policy::follow};
  const std::int64_t fuse_limits[] = {1, 64, 1024};
  int runs = 0, tiled_total = 0;
  std::size_t absorbed_total = 0;
  for (layout_policy pol : policies) {
    for (std::int64_t fuse : fuse_limits) {
      cuda::options opt;
      opt.tiled_min_elements = 1;
      // the kernel wherever it fits; `automatic` (timed choice) once per layout
      opt.tiled_kernel = fuse == 64 ? kernel_choice::automatic : kernel_choice::always;
      opt.fuse_max_elements = fuse;
      // operands staged in shared memory (options::fuse_stage, off by default) under two layouts at
      // the largest limit; read in place everywhere else
      opt.fuse_stage = fuse == 1024 && pol != layout_policy::follow;
      opt.intermediate_layout = pol;
      engine eng(opt);
      for (dtype t : all_dtypes) {
        for (const problem& p : test_trees(t)) {
          // positive data: no cancellation to magnify rounding in the norm-wise error
          const auto in = gputest::random_inputs(p, 991, 0.25, 1.25);
          const host_tensor want = cpu::contract(p, in);
          const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
          compiled_info info;
          const double e_eager = gputest::rel_error(run_eager(eng, p, in), want);
          const double e_comp = gputest::rel_error(run_compiled(eng, p, in, &info), want);
          const int sk = info.tiled;
          tiled_total += sk;
          absorbed_total += info.absorbed;
          ++runs;
          std::printf("[trees] %s %s fuse %lld tiled %s %s: %zu steps, %d tiled, %zu absorbed in %zu subtrees, %zu launches: eager %.2e compiled %.2e (tol %.1e)\n",
                      p.source.c_str(), kerntest::name_of_policy(pol), static_cast<long long>(fuse), fuse == 64 ? "automatic" : "always", std::string(name_of(t)).c_str(), p.tree.steps.size(),
                      sk, info.absorbed, info.subtrees, info.launches, e_eager, e_comp, tol);
          EXPECT_LE(e_eager, tol) << p.source << " eager " << kerntest::name_of_policy(pol) << " fuse " << fuse << " " << name_of(t);
          EXPECT_LE(e_comp, tol) << p.source << " compiled " << kerntest::name_of_policy(pol) << " fuse " << fuse << " " << name_of(t);
        }
      }
      eng.synchronize();
    }
  }
  std::printf("[trees] %d runs, %d tiled steps, %zu absorbed steps\n", runs, tiled_total, absorbed_total);
  EXPECT_GT(tiled_total, 50) << "the trees should exercise the tiled kernel";
  EXPECT_GT(absorbed_total, 50U) << "the trees should exercise the fused kernel";
}

TEST(CudaKernels, CompiledKernelsOnMatchOff) {
  if (auto why = tnrt::cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  for (layout_policy pol : {layout_policy::column_major, layout_policy::follow}) {
    cuda::options on;
    on.tiled_kernel = kernel_choice::always;
    on.tiled_min_elements = 1;
    on.fuse_max_elements = 1024;
    on.intermediate_layout = pol;
    cuda::options off = on;
    off.tiled_kernel = kernel_choice::never;
    off.fuse_small_steps = false;
    engine e_on(on), e_off(off);
    for (dtype t : all_dtypes) {
      for (std::uint64_t seed : {6201u, 6202u, 6203u, 6204u, 6205u}) {
        gputest::random_network_spec spec;
        spec.tensors = 6 + static_cast<int>(seed % 7);
        spec.max_extent = 4;
        spec.max_elements = 1 << 16;
        std::uint64_t used = 0;
        const problem p = gputest::random_problem(spec, seed, t, &used);
        // positive data: no cancellation, so the two summation orders agree to rounding
        const auto in = gputest::random_inputs(p, used, 0.25, 1.25);
        compiled_info i_on, i_off;
        const host_tensor r_on = run_compiled(e_on, p, in, &i_on);
        const host_tensor r_off = run_compiled(e_off, p, in, &i_off);
        const double diff = gputest::rel_error(r_on, r_off);
        const double tol = gputest::tolerance(t, gputest::longest_sum(p), 64.0);
        std::printf("[on vs off] %s %s %s: launches %zu vs %zu, %d tiled: rel difference %.2e (tol %.1e)\n", p.source.c_str(),
                    kerntest::name_of_policy(pol), std::string(name_of(t)).c_str(), i_on.launches, i_off.launches, i_on.tiled, diff, tol);
        EXPECT_LE(diff, tol) << p.source << " " << name_of(t);
        EXPECT_EQ(i_off.absorbed, 0U);
        EXPECT_LE(i_on.launches, i_off.launches);
      }
    }
    e_on.synchronize();
    e_off.synchronize();
  }
}

}  // namespace
}  // namespace tnrt
