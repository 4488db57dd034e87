// Slices over ranks on the GPU through NCCL (tnrt/distributed.hpp, src/cuda/nccl_collective.cpp),
// as far as one GPU allows: NCCL refuses two ranks on one GPU, so the NCCL path runs with one rank
// (a world of size 1 through a real communicator, ncclReduce and all). The result of the rank's
// share reduced through NCCL equals the unsliced contraction of the same context; the one-rank
// collective (no NCCL) gives the same; round-robin shares are refused with not_supported.
// Skips with a reason without a GPU or without libnccl.so.2.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "support/random_problem.hpp"
#include "tnrt/context.hpp"
#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"
#include "support/temp_dir.hpp"

namespace tnrt {
namespace {

using tnrt::testing::temp_dir;

double rel_error(const host_tensor& got, const host_tensor& ref) {
  double d = 0, n = 0;
  visit_dtype(ref.type(), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t i = 0; i < ref.size(); ++i) {
      d += std::norm(std::complex<double>(got.as<T>()[i]) - std::complex<double>(ref.as<T>()[i]));
      n += std::norm(std::complex<double>(ref.as<T>()[i]));
    }
  });
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

// C(a,c) = A(a,b) B(b,c), sliced over a (output: blocks) and b (summed): 8 x 16 slices.
problem test_problem(dtype t) { return test::matmul_problem(8, 16, 24, t); }

// The collective alone (no cuTENSOR needed): one rank's device buffer through a real communicator
// and ncclReduce comes back unchanged (the sum over one rank), in every dtype, twice.
TEST(cuda_distributed, nccl_reduce_of_one_rank_keeps_the_partial) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) GTEST_SKIP() << "no CUDA device";
  if (const std::string why = cuda::nccl_unavailable_reason(); !why.empty()) GTEST_SKIP() << "no NCCL: " << why;
  std::printf("[nccl] %s\n", cuda::nccl_library().c_str());
  temp_dir d;
  auto coll = cuda::make_nccl_collective(rendezvous(d.path, 0, 1, 60), 0, /*nccl_for_one_rank=*/true);
  EXPECT_EQ(coll->name().rfind("nccl ", 0), 0u) << coll->name();
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    const problem p = test_problem(t);
    host_tensor h(t, p.net.shape_of(p.net.output));
    fill_random(h, 3, 0, 0.5, 1.5);
    void* buf = nullptr;
    ASSERT_EQ(cudaMalloc(&buf, h.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(buf, h.data(), h.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    tensor_view v;
    v.data = buf;
    v.type = t;
    v.shape = h.shape();
    v.device = 0;
    for (int k = 0; k < 2; ++k) coll->reduce(p, reduction_plan{}, v, s);
    host_tensor back(t, h.shape());
    ASSERT_EQ(cudaMemcpy(back.data(), buf, back.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(back.data(), h.data(), h.bytes()), 0) << name_of(t);
    (void)cudaStreamDestroy(s);
    (void)cudaFree(buf);
  }
}

TEST(cuda_distributed, one_rank_through_nccl_equals_the_unsliced_result) {
  TNRT_SKIP_WITHOUT_GPU();
  if (const std::string why = cuda::nccl_unavailable_reason(); !why.empty()) GTEST_SKIP() << "no NCCL: " << why;
  std::printf("[nccl] %s\n", cuda::nccl_library().c_str());
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    const problem p = test_problem(t);
    const auto inputs = test::random_inputs(p, 5);
    context ctx;
    const host_tensor whole = ctx.contract(p, inputs);
    slice_request req;
    req.labels = {0, 1};
    sliced_program sp = ctx.compile_sliced(p, req);
    ASSERT_EQ(sp.slices(), 8 * 16);
    temp_dir d;
    auto coll = cuda::make_nccl_collective(rendezvous(d.path, 0, 1, 60), 0, /*nccl_for_one_rank=*/true);
    EXPECT_EQ(coll->name().rfind("nccl ", 0), 0u) << coll->name();
    EXPECT_TRUE(std::filesystem::exists(d.path + "/nccl-id"));  // rank 0 published the id
    const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
    ASSERT_NE(nvls, nullptr);
    distributed_report rep;
    for (int run = 0; run < 2; ++run) {
      const host_tensor r = cuda::contract_sliced_rank(sp, inputs, 0, slice_schedule::contiguous, *coll, &rep);
      ASSERT_EQ(r.shape(), whole.shape());
      const double tol = is_double(t) ? 1e-12 : 1e-5;
      EXPECT_LT(rel_error(r, whole), tol) << name_of(t) << " run " << run;
    }
    ASSERT_EQ(rep.per_rank.size(), 1u);
    EXPECT_EQ(rep.per_rank[0].share.count, 8 * 16);
    std::printf("[nccl] %s: contract %.3f ms, reduce %.3f ms\n", std::string(name_of(t)).c_str(), rep.contract_seconds * 1e3,
                rep.reduce_seconds * 1e3);
  }
}

TEST(cuda_distributed, one_rank_without_nccl_and_round_robin_refused) {
  TNRT_SKIP_WITHOUT_GPU();
  const problem p = test_problem(dtype::f64);
  const auto inputs = test::random_inputs(p, 6);
  context ctx;
  const host_tensor whole = ctx.contract(p, inputs);
  slice_request req;
  req.labels = {1};
  sliced_program sp = ctx.compile_sliced(p, req);
  temp_dir d;
  auto coll = cuda::make_nccl_collective(rendezvous(d.path, 0, 1, 60), 0);  // one rank: no NCCL
  EXPECT_EQ(coll->name(), "none (one rank)");
  const host_tensor r = cuda::contract_sliced_rank(sp, inputs, 0, slice_schedule::contiguous, *coll);
  EXPECT_LT(rel_error(r, whole), 1e-12);
  EXPECT_THROW((void)cuda::contract_sliced_rank(sp, inputs, 0, slice_schedule::round_robin, *coll), not_supported);
}

}  // namespace
}  // namespace tnrt
