// The CPU engine as a reference in single precision: a long chain of reductions whose exact value
// is known, in f32 and c64, must come out at double-precision accuracy rounded once per step
// (f32 sums accumulated in f32 drifted several times further than NumPy's).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <iomanip>
#include <string>
#include <vector>

#include "tnrt/cpu.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace {

// A rows x cols square lattice: one operand per site, one bond of extent `bond` per pair of
// neighbours, no open legs. The path contracts the upper half site by site in row-major order,
// the lower half likewise from the last site backwards, then joins the halves: rows*cols - 1
// steps, the last one a single reduction over the cols bonds between the halves (bond^cols terms;
// 10^6 for 6x6 of bond 10), the long sum that drifts when accumulated in single precision.
problem lattice(int rows, int cols, std::int64_t bond, dtype type) {
  problem p;
  p.type = type;
  p.source = std::to_string(rows) + "x" + std::to_string(cols) + " lattice, bond " + std::to_string(bond);
  const auto right = [&](int r, int c) { return static_cast<label_t>(r * (cols - 1) + c); };
  const auto down = [&](int r, int c) { return static_cast<label_t>(rows * (cols - 1) + r * cols + c); };
  const int bonds = rows * (cols - 1) + (rows - 1) * cols;
  for (int b = 0; b < bonds; ++b) {
    p.net.extents.push_back(bond);
    p.net.label_names.push_back(std::to_string(b));
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      auto& site = p.net.inputs.emplace_back();
      if (r > 0) site.push_back(down(r - 1, c));
      if (c > 0) site.push_back(right(r, c - 1));
      if (c + 1 < cols) site.push_back(right(r, c));
      if (r + 1 < rows) site.push_back(down(r, c));
    }
  // the pairs as operand ids (inputs 0..n-1, step k's result n+k), then opt_einsum's linear form
  const int n = rows * cols, half = rows / 2 * cols;
  std::vector<std::pair<int, int>> pairs;
  int top = 0, bottom = n - 1, next = n;
  for (int s = 1; s < half; ++s, top = next++) pairs.emplace_back(top, s);
  for (int s = n - 2; s >= half; --s, bottom = next++) pairs.emplace_back(bottom, s);
  pairs.emplace_back(top, bottom);
  std::vector<int> live(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) live[static_cast<std::size_t>(i)] = i;
  std::vector<std::vector<int>> path;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto at = [&](int id) { return static_cast<int>(std::find(live.begin(), live.end(), id) - live.begin()); };
    const int a = at(pairs[k].first), b = at(pairs[k].second);
    path.push_back({a, b});
    live.erase(live.begin() + std::max(a, b));
    live.erase(live.begin() + std::min(a, b));
    live.push_back(n + static_cast<int>(k));
  }
  p.tree = tree_from_linear_path(p.net, path);
  return p;
}

// Every element c with c^sites * bond^bonds = 1; returns the exact value of the network for c as
// stored (c rounded to single precision), computed in double.
double fill_lattice(const problem& p, std::vector<host_tensor>& in) {
  const double sites = static_cast<double>(p.net.inputs.size());
  const double bonds = static_cast<double>(p.net.label_count());
  const double bond = static_cast<double>(p.net.extents.front());
  const auto c = static_cast<float>(std::pow(bond, -bonds / sites));
  for (const auto& labels : p.net.inputs) {
    in.emplace_back(p.type, p.net.shape_of(labels));
    fill_constant(in.back(), c);
  }
  return std::pow(static_cast<double>(c), sites) * std::pow(bond, bonds);
}

double real_scalar(const host_tensor& t) {
  EXPECT_EQ(t.size(), 1);
  return t.type() == dtype::f32 ? static_cast<double>(*t.as<float>()) : static_cast<double>(t.as<std::complex<float>>()->real());
}

TEST(cpu_precision, f32_lattice_of_bond_10_stays_at_one) {
  // 6x6, bond 10: 35 steps, the last a sum of 10^6 terms. Relative errors on this path: summing
  // in f32 (the engine before) 2.3e-5, NumPy in f32 (np.einsum per step) 6.6e-5; in double,
  // rounded once per step, 1.7e-7.
  const problem p = lattice(6, 6, 10, dtype::f32);
  ASSERT_EQ(p.tree.steps.size(), 35u);
  std::vector<host_tensor> in;
  const double exact = fill_lattice(p, in);
  const double got = real_scalar(cpu::contract(p, in));
  std::printf("%s, %s: %.9f (exact %.9f)\n", p.source.c_str(), std::string(name_of(p.type)).c_str(), got, exact);
  EXPECT_NEAR(got / exact, 1.0, 2e-6) << std::setprecision(10) << "got " << got << ", exact " << exact;
}

TEST(cpu_precision, c64_lattice_stays_at_one) {
  // smaller (4x5, bond 10: 19 steps) to keep the test short; same rule in complex (NumPy in c64
  // on this path: 5.6e-5; the engine summing in c64: 8.8e-6; in c128, rounded per step: 2.8e-7)
  const problem p = lattice(4, 5, 10, dtype::c64);
  std::vector<host_tensor> in;
  const double exact = fill_lattice(p, in);
  const double got = real_scalar(cpu::contract(p, in));
  std::printf("%s, %s: %.9f (exact %.9f)\n", p.source.c_str(), std::string(name_of(p.type)).c_str(), got, exact);
  EXPECT_NEAR(got / exact, 1.0, 2e-6) << std::setprecision(10) << "got " << got << ", exact " << exact;
}

TEST(cpu_precision, steps_that_sum_nothing_are_unchanged) {
  // an outer product and a permutation stay in single precision and are exact
  problem p;
  p.type = dtype::f32;
  p.net.extents = {3, 4};
  p.net.label_names = {"a", "b"};
  p.net.inputs = {{0}, {1}};
  p.net.output = {1, 0};
  p.tree = tree_from_linear_path(p.net, {{0, 1}});
  std::vector<host_tensor> in;
  in.emplace_back(dtype::f32, std::vector<std::int64_t>{3});
  in.emplace_back(dtype::f32, std::vector<std::int64_t>{4});
  for (int i = 0; i < 3; ++i) in[0].as<float>()[i] = 0.1f * static_cast<float>(i + 1);
  for (int j = 0; j < 4; ++j) in[1].as<float>()[j] = 0.7f * static_cast<float>(j + 1);
  const host_tensor r = cpu::contract(p, in);
  ASSERT_EQ(r.type(), dtype::f32);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(r.as<float>()[j * 3 + i], in[0].as<float>()[i] * in[1].as<float>()[j]);
}

}  // namespace
}  // namespace tnrt
