// The reference network (550 tensors, bond dimension 2, 549 binary steps, largest intermediate
// 2^28 elements) through cpu::contract: with every element 0.5^0.4 the exact result is 1; with
// random entries the f32 and f64 runs must agree. Prints the time of each run (the CPU figure in
// bench/results/cpu-*). TNRT_BENCH_REPEATS=n repeats the f32 constant run n times and prints the
// median.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

std::string source_dir() {
  const char* d = std::getenv("TNRT_SOURCE_DIR");
  return d ? d : ".";
}

// A private reader for the tree JSON (the library's loader lives in formats; this keeps the engine's
// acceptance test independent of it): integer labels, 1-based tensorindex, each internal node one
// step whose output is its iy.
problem load_reference(const std::string& path, dtype type) {
  std::ifstream in(path);
  if (!in) throw io_error("cannot open " + path);
  const nlohmann::json j = nlohmann::json::parse(in);
  problem p;
  p.type = type;
  p.source = path;
  std::map<std::int64_t, label_t> ids;
  auto id_of = [&](std::int64_t raw) {
    auto [it, fresh] = ids.try_emplace(raw, static_cast<label_t>(ids.size()));
    if (fresh) {
      p.net.extents.push_back(2);
      p.net.label_names.push_back(std::to_string(raw));
    }
    return it->second;
  };
  for (const auto& ls : j.at("inputs")) {
    std::vector<label_t> v;
    for (const auto& l : ls) v.push_back(id_of(l.get<std::int64_t>()));
    p.net.inputs.push_back(v);
  }
  for (const auto& l : j.at("output")) p.net.output.push_back(id_of(l.get<std::int64_t>()));
  const int n_inputs = static_cast<int>(p.net.inputs.size());
  std::function<int(const nlohmann::json&)> walk = [&](const nlohmann::json& node) -> int {
    if (node.at("isleaf").get<bool>()) return node.at("tensorindex").get<int>() - 1;
    const auto& args = node.at("args");
    if (args.size() != 2) throw parse_error("reference reader: expected binary nodes");
    step s;
    s.lhs = walk(args[0]);
    s.rhs = walk(args[1]);
    for (const auto& l : node.at("eins").at("iy")) s.out.push_back(id_of(l.get<std::int64_t>()));
    p.tree.steps.push_back(s);
    return n_inputs + static_cast<int>(p.tree.steps.size()) - 1;
  };
  walk(j.at("tree"));
  validate(p.net, p.tree);
  return p;
}

std::vector<host_tensor> make_inputs(const problem& p, bool random) {
  std::vector<host_tensor> in;
  const double v = std::pow(0.5, 0.4);
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) {
    in.emplace_back(p.type, p.net.shape_of(p.net.inputs[i]));
    if (random) fill_random(in.back(), 2026, i, 0.9 * v, 1.1 * v);
    else fill_constant(in.back(), v);
  }
  return in;
}

struct timed_result {
  double value = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system of all threads: steadier than wall time on a shared machine
};

// TNRT_PROFILE_STEPS=n prints the n slowest steps (time, step, labels) after a run.
void print_slowest(const problem& p, const std::vector<double>& step_seconds) {
  const char* env = std::getenv("TNRT_PROFILE_STEPS");
  if (!env) return;
  const auto labels = operand_labels(p.net, p.tree);
  std::vector<std::size_t> order(step_seconds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return step_seconds[x] > step_seconds[y]; });
  const std::size_t n = std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(1, std::atoi(env))));
  for (std::size_t i = 0; i < n; ++i) {
    const step& st = p.tree.steps[order[i]];
    std::printf("  %8.4f s  step %3zu  %s,%s->%s\n", step_seconds[order[i]], order[i],
                p.net.describe(labels[static_cast<std::size_t>(st.lhs)]).c_str(), p.net.describe(labels[static_cast<std::size_t>(st.rhs)]).c_str(),
                p.net.describe(st.out).c_str());
  }
}

timed_result run(const problem& p, const std::vector<host_tensor>& in) {
  std::vector<double> step_seconds;
  auto last = std::chrono::steady_clock::now();
  const auto t0 = last;
  const std::clock_t c0 = std::clock();
  const host_tensor r = cpu::contract(p, in, [&](std::size_t, std::size_t) {
    const auto now = std::chrono::steady_clock::now();
    step_seconds.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  });
  const auto t1 = std::chrono::steady_clock::now();
  const std::clock_t c1 = std::clock();
  print_slowest(p, step_seconds);
  EXPECT_EQ(r.size(), 1);
  timed_result t;
  t.seconds = std::chrono::duration<double>(t1 - t0).count();
  t.cpu_seconds = static_cast<double>(c1 - c0) / CLOCKS_PER_SEC;
  t.value = visit_dtype(r.type(), [&](auto zero) { return static_cast<double>(std::real(r.as<decltype(zero)>()[0])); });
  return t;
}

const std::string reference_path() { return source_dir() + "/data/tensornetwork_permutation_optimized.json"; }

TEST(cpu_reference, f32_constant_is_one) {
  const problem p = load_reference(reference_path(), dtype::f32);
  ASSERT_EQ(p.net.inputs.size(), 550u);
  ASSERT_EQ(p.tree.steps.size(), 549u);
  const auto in = make_inputs(p, false);
  int repeats = 1;
  if (const char* r = std::getenv("TNRT_BENCH_REPEATS")) repeats = std::max(1, std::atoi(r));
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const timed_result t = run(p, in);
    std::printf("reference f32 constant: result %.9f in %.3f s (cpu %.3f s)\n", t.value, t.seconds, t.cpu_seconds);
    EXPECT_NEAR(t.value, 1.0, 1e-4);
    times.push_back(t.seconds);
  }
  std::sort(times.begin(), times.end());
  std::printf("reference f32 constant: median %.3f s, min %.3f s, max %.3f s over %d runs\n", times[times.size() / 2], times.front(),
              times.back(), repeats);
}

TEST(cpu_reference, f64_constant_is_one) {
  const problem p = load_reference(reference_path(), dtype::f64);
  const timed_result t = run(p, make_inputs(p, false));
  std::printf("reference f64 constant: result %.15f in %.3f s\n", t.value, t.seconds);
  EXPECT_NEAR(t.value, 1.0, 1e-10);
}

TEST(cpu_reference, f32_and_f64_agree_on_random_entries) {
  const problem p32 = load_reference(reference_path(), dtype::f32);
  const problem p64 = load_reference(reference_path(), dtype::f64);
  const timed_result r32 = run(p32, make_inputs(p32, true));
  const timed_result r64 = run(p64, make_inputs(p64, true));
  std::printf("reference random: f32 %.9g (%.3f s), f64 %.15g (%.3f s)\n", r32.value, r32.seconds, r64.value, r64.seconds);
  EXPECT_NEAR(r32.value / r64.value, 1.0, 1e-4);
}

}  // namespace
}  // namespace tnrt
