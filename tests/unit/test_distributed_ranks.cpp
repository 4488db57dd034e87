// Ranks as processes (include/tnrt/distributed.hpp): the rank's identity from the launchers'
// variables, the rendezvous protocol (atomic files, waits bounded by the timeout, a failed rank's
// error seen by the others), and the file collective with the ranks as real processes: this test
// binary started N times by launch_ranks, each child running one rank of a sliced contraction
// (the child test `rank_child.run`, which does nothing unless TNRT_TEST_CHILD is set).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/random_problem.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"
#include "support/temp_dir.hpp"
#include "tnrt/npy.hpp"

namespace tnrt {
namespace {

environment_lookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

using tnrt::testing::temp_dir;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(rank_environment, each_launcher_in_its_order) {
  EXPECT_FALSE(rank_from_environment(env_of({})).has_value());
  auto id = rank_from_environment(env_of({{"TNRT_RANK", "2"}, {"TNRT_WORLD_SIZE", "4"}, {"RANK", "0"}, {"WORLD_SIZE", "8"}}));
  ASSERT_TRUE(id);
  EXPECT_EQ(id->rank, 2);
  EXPECT_EQ(id->size, 4);
  EXPECT_EQ(id->local_rank, 2);  // none given: the rank
  EXPECT_EQ(id->source, "TNRT_RANK/TNRT_WORLD_SIZE");
  id = rank_from_environment(env_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                     {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  ASSERT_TRUE(id);
  EXPECT_EQ((rank_identity{5, 8, 1, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"}), *id);
  id = rank_from_environment(env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}}));
  ASSERT_TRUE(id);
  EXPECT_EQ((rank_identity{1, 2, 0, "PMI_RANK/PMI_SIZE"}), *id);
  id = rank_from_environment(env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"}}));  // torchrun
  ASSERT_TRUE(id);
  EXPECT_EQ((rank_identity{3, 4, 3, "RANK/WORLD_SIZE"}), *id);
  EXPECT_EQ(device_of(*id, 2), 1);
  EXPECT_EQ(device_of(*id, 8), 3);
  EXPECT_THROW((void)device_of(*id, 0), usage_error);
}

TEST(rank_environment, malformed_values_are_usage_errors) {
  EXPECT_THROW((void)rank_from_environment(env_of({{"TNRT_RANK", "1"}})), usage_error);  // half a pair
  EXPECT_THROW((void)rank_from_environment(env_of({{"WORLD_SIZE", "2"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "-1"}, {"WORLD_SIZE", "2"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1.5"}})), usage_error);
  EXPECT_THROW((void)rank_from_environment(env_of({{"RANK", "1 "}, {"WORLD_SIZE", "2"}})), usage_error);
}

TEST(rendezvous, publish_is_atomic_and_wait_sees_it) {
  temp_dir d;
  const rendezvous r0(d.path, 0, 2, 5), r1(d.path, 1, 2, 5);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r1.publish("hello", std::string(1 << 20, 'x'));
  });
  r0.wait_for("hello", 1);
  EXPECT_EQ(r0.read("hello").size(), std::size_t{1} << 20);  // never half of it
  writer.join();
  for (const auto& e : std::filesystem::directory_iterator(d.path))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  EXPECT_THROW(rendezvous(d.path + "/missing", 0, 2), io_error);
  EXPECT_THROW(rendezvous(d.path, 2, 2), usage_error);
  EXPECT_THROW(rendezvous(d.path, 0, 2, 0), usage_error);
}

TEST(rendezvous, a_wait_ends_at_the_timeout_naming_the_rank) {
  temp_dir d;
  const rendezvous r(d.path, 0, 3, 0.2);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r.wait_for("never", 2);
    FAIL() << "no timeout";
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rank 2 of 3: nothing from it within 0.2 s", 0), 0u) << e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 2.0);
}

TEST(rendezvous, a_failed_rank_stops_the_others_with_its_error) {
  temp_dir d;
  const rendezvous r0(d.path, 0, 3, 30), r2(d.path, 2, 3, 30);
  r2.report_failure(out_of_memory("slice program needs 9 GiB, 4 GiB free"));
  EXPECT_TRUE(std::filesystem::exists(d.path + "/status.2"));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r0.wait_for("partial.0.1.npy", 1);  // waits for rank 1, but rank 2's failure ends it at once
    FAIL() << "no error";
  } catch (const out_of_memory& e) {
    EXPECT_STREQ(e.what(), "rank 2 of 3: slice program needs 9 GiB, 4 GiB free");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_NO_THROW(r2.check_peers());  // a rank does not stop on its own status
  // an error relayed by another rank keeps the first rank's name
  const rendezvous r1(d.path, 1, 3, 30);
  EXPECT_THROW(r1.check_peers(), out_of_memory);
  try {
    rethrow_for_rank(device_error("rank 2 of 3: x"), 1, 3);
  } catch (const device_error& e) {
    EXPECT_STREQ(e.what(), "rank 2 of 3: x");
  }
  try {
    rethrow_for_rank(shape_error("bad"), 1, 3);
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "rank 1 of 3: bad");
  }
}

// ---- ranks as processes ----------------------------------------------------------------------

// C(a,c) = A(a,b) B(b,c) sliced over a (an output label: blocks) and b (summed): 6 x 8 = 48 slices.
problem child_problem() { return test::matmul_problem(6, 8, 5, dtype::f64); }
const std::vector<label_t> child_labels = {1, 0};

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// Runs `ranks` copies of this binary's rank_child.run in `mode`; returns launch_ranks' code.
int launch_children(const std::string& dir, int ranks, const std::string& mode, double timeout = 20) {
  ::setenv("TNRT_TEST_CHILD", mode.c_str(), 1);
  ::setenv("TNRT_TEST_TIMEOUT", std::to_string(timeout).c_str(), 1);
  const int rc = launch_ranks({self_exe(), "--gtest_filter=rank_child.run"}, ranks, dir, 5);
  ::unsetenv("TNRT_TEST_CHILD");
  return rc;
}

TEST(rank_child, run) {
  const char* mode_env = std::getenv("TNRT_TEST_CHILD");
  if (mode_env == nullptr) GTEST_SKIP() << "a rank of the process tests below, started by them";
  const std::string mode = mode_env;
  const auto id = rank_from_environment();
  const char* dir = std::getenv("TNRT_RENDEZVOUS");
  if (!id || dir == nullptr) std::_Exit(90);
  const problem p = child_problem();
  const auto inputs = test::random_inputs(p, 11);
  const slice_schedule how = mode.find("round-robin") != std::string::npos ? slice_schedule::round_robin : slice_schedule::contiguous;
  const slice_contractor contract_one = [&](const problem& q, std::span<const host_tensor> in) {
    if (mode == "fail1" && id->rank == 1) throw shape_error("a slice that does not fit");
    if (mode == "die1" && id->rank == 1) std::_Exit(9);
    if (mode == "hang1" && id->rank == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
    return cpu::contract(q, in);
  };
  try {
    auto coll = make_file_collective(rendezvous(dir, id->rank, id->size, std::atof(std::getenv("TNRT_TEST_TIMEOUT"))));
    for (int run = 0; run < 2; ++run) {  // two calls: the collective's files are per call
      const host_tensor r = contract_sliced_rank(p, inputs, child_labels, how, contract_one, *coll);
      if (id->rank == 0) write_npy(std::string(dir) + "/result." + std::to_string(run) + ".npy", r);
    }
  } catch (const error& e) {
    std::ofstream(std::string(dir) + "/err." + std::to_string(id->rank)) << e.kind() << "\t" << e.what();
    std::_Exit(3);
  }
  std::_Exit(0);
}

double max_diff(const host_tensor& a, const host_tensor& b) {
  double d = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a.as<double>()[i] - b.as<double>()[i]));
  return d;
}

TEST(file_collective, processes_give_the_unsliced_result) {
  const problem p = child_problem();
  const host_tensor whole = cpu::contract(p, test::random_inputs(p, 11));
  for (const std::string how : {"contiguous", "round-robin"}) {
    for (int ranks : {1, 2, 3, 7}) {
      temp_dir d;
      ASSERT_EQ(launch_children(d.path, ranks, how), 0) << how << " " << ranks << " ranks";
      for (int run = 0; run < 2; ++run) {
        const host_tensor r = read_npy(d.path + "/result." + std::to_string(run) + ".npy");
        ASSERT_EQ(r.shape(), whole.shape());
        EXPECT_LT(max_diff(r, whole), 1e-12) << how << " " << ranks << " ranks, run " << run;
      }
      for (const auto& e : std::filesystem::directory_iterator(d.path))  // partials removed once combined
        EXPECT_EQ(e.path().filename().string().rfind("partial.", 0), std::string::npos) << e.path();
    }
  }
}

TEST(file_collective, a_failing_rank_gives_every_rank_its_error) {
  temp_dir d;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(launch_children(d.path, 3, "fail1"), 3);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 15.0);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(slurp(d.path + "/err." + std::to_string(r)), "shape error\trank 1 of 3: a slice that does not fit") << "rank " << r;
  EXPECT_FALSE(std::filesystem::exists(d.path + "/result.0.npy"));
}

TEST(file_collective, a_dead_rank_stops_the_others_through_the_launcher) {
  temp_dir d;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(launch_children(d.path, 3, "die1"), 9);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 15.0);
  for (int r : {0, 2}) {
    const std::string err = slurp(d.path + "/err." + std::to_string(r));
    EXPECT_EQ(err.rfind("internal error\trank 1 of 3: ", 0), 0u) << "rank " << r << ": " << err;
  }
  EXPECT_FALSE(std::filesystem::exists(d.path + "/result.0.npy"));
}

TEST(file_collective, a_hanging_rank_ends_at_the_timeout) {
  temp_dir d;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = launch_children(d.path, 2, "hang1", 1.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(rc, 0);
  EXPECT_LT(took, 15.0);  // rank 0 times out after 1 s; the launcher kills rank 1 within its grace
  const std::string err = slurp(d.path + "/err.0");
  EXPECT_EQ(err.rfind("i/o error\trank 1 of 2: nothing from it within 1 s", 0), 0u) << err;
}

}  // namespace
}  // namespace tnrt
