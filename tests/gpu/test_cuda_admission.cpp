// Memory admission: a compiled program whose arena cannot fit the device is refused before anything
// is launched, with out_of_memory naming what it needs and what is free; the same engine then
// compiles and runs a small network correctly.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cuda/compiled.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace {

problem expression_problem(const std::string& expr, const std::vector<std::vector<std::int64_t>>& shapes, dtype t) {
  problem p;
  p.net = parse_expression(expr, shapes);
  p.tree = tree_from_linear_path(p.net, {{0, 1}});
  p.type = t;
  return p;
}

TEST(Admission, NetworkTooBigForTheDeviceIsRefusedBeforeLaunchThenASmallOneRuns) {
  if (auto why = cuda::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  cuda::options opt;
  cuda::engine eng(opt);
  // C(a,c) = A(a,b) B(b,c) with a = c = 2^19: the result alone is 2^38 f32 elements (1 TiB).
  const problem big = expression_problem("ab,bc->ac", {{1 << 19, 2}, {2, 1 << 19}}, dtype::f32);
  const auto launches_before = eng.runtime().counts();
  try {
    cuda::compiled_program prog(eng, big);
    ADD_FAILURE() << "a 1 TiB network was admitted";
  } catch (const out_of_memory& e) {
    const std::string what = e.what();
    std::printf("[admission] %s\n", what.c_str());
    EXPECT_NE(what.find("needs"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
  }
  // Refused before allocating anything from the driver for it.
  EXPECT_EQ(eng.runtime().counts().driver_allocs, launches_before.driver_allocs);

  // A result of 2^56 elements (a path no device can hold: cotengra's first trial on the QAOA network
  // had such steps): refused before any cuTENSOR plan is built, compiled and predicted alike (this
  // crashed inside the plan's creation before).
  const problem huge = expression_problem("ab,bc->ac", {{1LL << 28, 2}, {2, 1LL << 28}}, dtype::c64);
  EXPECT_THROW(cuda::compiled_program(eng, huge), out_of_memory);
  EXPECT_THROW((void)cuda::compiled_program::predict_bytes(eng, huge), out_of_memory);
  EXPECT_EQ(eng.runtime().counts().driver_allocs, launches_before.driver_allocs);

  const problem small = expression_problem("ab,bc->ac", {{64, 32}, {32, 48}}, dtype::f64);
  const auto inputs = gputest::random_inputs(small, 7);
  cuda::compiled_program prog(eng, small);
  for (std::size_t i = 0; i < inputs.size(); ++i) gputest::upload_bytes(eng, prog.input(i), inputs[i].data(), inputs[i].bytes());
  prog.run();
  const host_tensor got = gputest::download(eng, prog.result(), small.type, small.net.shape_of(small.net.output));
  const host_tensor want = cpu::contract(small, inputs);
  EXPECT_LE(gputest::rel_error(got, want), 1e-12);
}

}  // namespace
}  // namespace tnrt
