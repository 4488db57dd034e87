#pragma once
// Shared helpers of the libFuzzer targets (fuzz/build.sh). A target calls a parser on the input
// bytes; tnrt::error is an expected outcome, anything else (another exception, a crash, a hang, a
// leak, a sanitizer report) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <vector>

#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/network.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt_fuzz {

/// Largest tensor a parse may describe before the target skips contraction entirely.
inline constexpr std::int64_t max_any_elements = std::int64_t{1} << 20;
/// Limits under which the target also runs cpu::contract (per operand, per step's label union).
inline constexpr std::int64_t max_contract_elements = std::int64_t{1} << 12;
inline constexpr std::int64_t max_step_elements = std::int64_t{1} << 16;
inline constexpr std::size_t max_contract_steps = 64;

/// Product of the extents of `labels`, saturating at `cap + 1` (no overflow on odd extents).
inline std::int64_t capped_count(const tnrt::network& net, const std::vector<tnrt::label_t>& labels, std::int64_t cap) {
  std::int64_t n = 1;
  for (tnrt::label_t l : labels) {
    if (l < 0 || static_cast<std::size_t>(l) >= net.extents.size()) return cap + 1;
    const std::int64_t e = net.extents[static_cast<std::size_t>(l)];
    if (e <= 0) return 0;
    if (n > cap / e) return cap + 1;
    n *= e;
  }
  return n;
}

[[noreturn]] inline void finding(const char* what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}

/// validate, then (when small) contract on the CPU with constant inputs. Loader output that fails
/// validate is itself a finding: the loaders promise a valid problem.
inline void exercise_problem(const tnrt::problem& p) {
  try {
    tnrt::validate(p.net, p.tree);
  } catch (const tnrt::error& e) {
    std::fprintf(stderr, "validate rejected a loaded problem: %s\n", e.what());
    finding("loader returned a problem that validate rejects");
  }
  if (p.tree.steps.size() > max_contract_steps) return;
  const auto labels = tnrt::operand_labels(p.net, p.tree);
  for (const auto& l : labels) {
    if (capped_count(p.net, l, max_contract_elements) > max_contract_elements) return;
  }
  const std::size_t n_inputs = p.net.inputs.size();
  for (const auto& s : p.tree.steps) {
    std::vector<tnrt::label_t> all = labels[static_cast<std::size_t>(s.lhs)];
    if (s.rhs >= 0) {
      const auto& r = labels[static_cast<std::size_t>(s.rhs)];
      all.insert(all.end(), r.begin(), r.end());
    }
    // distinct labels only
    std::vector<tnrt::label_t> distinct;
    for (tnrt::label_t l : all) {
      bool seen = false;
      for (tnrt::label_t d : distinct) seen = seen || d == l;
      if (!seen) distinct.push_back(l);
    }
    if (capped_count(p.net, distinct, max_step_elements) > max_step_elements) return;
  }
  std::vector<tnrt::host_tensor> inputs;
  inputs.reserve(n_inputs);
  for (const auto& in : p.net.inputs) {
    inputs.emplace_back(p.type, p.net.shape_of(in));
    tnrt::fill_constant(inputs.back(), 0.5);
  }
  tnrt::host_tensor r = tnrt::cpu::contract(p, inputs);
  if (r.shape() != p.net.shape_of(p.net.output)) finding("cpu::contract result shape differs from the output's");
}

/// Runs `body`; tnrt::error is fine, any other exception is a finding.
template <class F>
int guarded(F&& body) {
  try {
    body();
  } catch (const tnrt::error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "non-tnrt exception: %s\n", e.what());
    finding("exception other than tnrt::error");
  } catch (...) {
    finding("non-std exception");
  }
  return 0;
}

}  // namespace tnrt_fuzz
