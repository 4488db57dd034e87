#pragma once
// Random small networks with random binary trees over them, and seeded random inputs: the shared
// generator of the CPU engine's tests (test_cpu_contract, test_slicing).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::test {

// A random network of 2..n_ops_max operands over up to 8 labels (extents lo..hi; labels shared by
// any number of operands, repeats within one allowed) and a random binary tree over it.
// Intermediates keep the labels still needed later.
inline problem random_problem(std::uint64_t seed, dtype type, int extent_lo = 1, int extent_hi = 4, int n_ops_max = 6) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  problem p;
  p.type = type;
  p.source = "random network seed " + std::to_string(seed);
  const int n_labels = pick(2, 8);
  for (int l = 0; l < n_labels; ++l) {
    p.net.extents.push_back(pick(extent_lo, extent_hi));
    p.net.label_names.push_back(std::string(1, static_cast<char>('a' + l)));
  }
  const int n_ops = pick(2, n_ops_max);
  for (int i = 0; i < n_ops; ++i) {
    std::vector<label_t> ls;
    const int rank = pick(0, 4);
    for (int r = 0; r < rank; ++r) ls.push_back(pick(0, n_labels - 1));
    p.net.inputs.push_back(ls);
  }
  std::vector<label_t> present;
  for (const auto& ls : p.net.inputs)
    for (label_t l : ls)
      if (std::find(present.begin(), present.end(), l) == present.end()) present.push_back(l);
  std::shuffle(present.begin(), present.end(), rng);
  for (label_t l : present)
    if (pick(0, 2) == 0) p.net.output.push_back(l);

  std::vector<int> live(static_cast<std::size_t>(n_ops));
  for (int i = 0; i < n_ops; ++i) live[static_cast<std::size_t>(i)] = i;
  auto labels = operand_labels(p.net, p.tree);
  while (live.size() > 1) {
    std::shuffle(live.begin(), live.end(), rng);
    const int a = live.back();
    live.pop_back();
    const int b = live.back();
    live.pop_back();
    step s{a, b, {}};
    if (live.empty()) {
      s.out = p.net.output;
    } else {
      for (const auto* ls : {&labels[static_cast<std::size_t>(a)], &labels[static_cast<std::size_t>(b)]})
        for (label_t l : *ls) {
          bool needed = std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end();
          for (int other : live)
            for (label_t m : labels[static_cast<std::size_t>(other)]) needed = needed || m == l;
          if (needed && std::find(s.out.begin(), s.out.end(), l) == s.out.end()) s.out.push_back(l);
        }
    }
    p.tree.steps.push_back(s);
    labels.push_back(s.out);
    live.push_back(static_cast<int>(labels.size()) - 1);
  }
  validate(p.net, p.tree);
  return p;
}

inline std::vector<host_tensor> random_inputs(const problem& p, std::uint64_t seed) {
  std::vector<host_tensor> in;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) {
    in.emplace_back(p.type, p.net.shape_of(p.net.inputs[i]));
    fill_random(in.back(), seed, i, 0.5, 1.5);
  }
  return in;
}

// C(a,c) = A(a,b) B(b,c): labels a, b, c (ids 0, 1, 2), one step.
inline problem matmul_problem(std::int64_t a, std::int64_t b, std::int64_t c, dtype t) {
  problem p;
  p.type = t;
  p.source = "matmul";
  p.net.extents = {a, b, c};
  p.net.label_names = {"a", "b", "c"};
  p.net.inputs = {{0, 1}, {1, 2}};
  p.net.output = {0, 2};
  p.tree.steps = {{0, 1, {0, 2}}};
  return p;
}

}  // namespace tnrt::test
