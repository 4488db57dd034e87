// Host time of the planners that run on every call or every compile, which the unit tests check
// for correctness only (a wall-clock assert fails on a loaded runner):
//   - plan_memory on 1100 random requests over 550 steps (a contraction tree's worth; O(n^2) per
//     heuristic, a few milliseconds),
//   - describe_tiled on a step with a free mode of extent 2^30 (its cost must not grow with the
//     extents: counting down from the extent for a divisor took seconds).
// Median and maximum over the repetitions; prints a short table. No GPU needed.
//
//   tnrt_planning_bench [repetitions=20]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/step_lowering.hpp"
#include "core/tiled.hpp"
#include "tnrt/memory_plan.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
void report(const char* what, int repetitions, F&& run) {
  run();  // warm up
  std::vector<double> ms;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = clock_type::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s %10.3f %10.3f\n", what, ms[ms.size() / 2], ms.back());
}

std::vector<tnrt::buffer_request> random_requests(std::mt19937_64& rng, std::size_t n, int steps) {
  std::uniform_int_distribution<int> step(0, steps - 1);
  std::uniform_int_distribution<std::size_t> bytes(1, std::size_t{1} << 24);
  std::vector<tnrt::buffer_request> rs(n);
  for (auto& r : rs) {
    const int a = step(rng), b = rng() % 4 == 0 ? a : step(rng);  // many one-step temporaries
    r = {bytes(rng), std::min(a, b), std::max(a, b)};
  }
  return rs;
}

// Big [o, k = 2], Small [m = 2, k], D [m, o] with o = 2^30 (a dry run: no pointers).
tnrt::lowered_step huge_free_mode_step() {
  const std::int64_t o = std::int64_t{1} << 30;
  tnrt::lowered_step l;
  l.a.modes = {0, 1};
  l.a.extents = {o, 2};
  l.a.strides = {1, o};
  l.b.modes = {2, 1};
  l.b.extents = {2, 2};
  l.b.strides = {1, 2};
  l.d.modes = {2, 0};
  l.d.extents = {2, o};
  l.d.strides = {1, 2};
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::printf("%-44s %10s %10s\n", "planner", "median ms", "max ms");

  std::mt19937_64 rng(2026);
  const auto requests = random_requests(rng, 1100, 550);
  report("plan_memory, 1100 requests over 550 steps", repetitions, [&] {
    if (tnrt::plan_memory(requests).arena_bytes == 0) std::abort();
  });

  const tnrt::lowered_step step = huge_free_mode_step();
  report("describe_tiled, free mode of extent 2^30", repetitions, [&] {
    tnrt::tiled_record r;
    if (!tnrt::describe_tiled(step, 4, nullptr, nullptr, nullptr, r)) std::abort();
  });
  return 0;
}
