// `tnrt inspect`: the cost of a problem's tree without contracting it.
#include <cmath>
#include <cstdio>

#include "cli.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/path.hpp"

namespace tnrt::cli {

namespace {

constexpr option_spec inspect_specs[] = {
    {"help", false}, {"dtype", true},     {"bond-dim", true}, {"label-size", true},
    {"path", true},  {"optimizer", true}, {"shapes", true},   {"bandwidth", true},
};

constexpr const char* inspect_help = R"(usage: tnrt inspect INPUT [options]

Prints the cost of contracting INPUT along its tree: steps, tc (log2 multiply-adds), sc (log2
elements of the largest tensor), rwc (log2 elements read and written), the bytes those mean for the
dtype, and the bandwidth floor (bytes / bandwidth): no run can be faster than that.

  --dtype f32|f64|c64|c128   element type for the byte counts (default f32, or the einsum JSON's)
  --bond-dim N               extent of every label (default 2)
  --label-size L=N,...       extents of named labels
  --shapes 2x3,3x4           operand shapes of an expression
  --path opt_size|opt_flops  which path of an einsum JSON's "paths" to take
  --optimizer greedy|exhaustive|auto|hyper
                             use the built-in optimizer instead of the file's tree/path (hyper:
                             random-greedy trials + subtree reconfiguration, seed 0, at most 1 s)
  --bandwidth GBPS           memory bandwidth for the floor (default 4250, the H200's copy bandwidth)
)";

}  // namespace

int run_inspect(std::span<char* const> argv) {
  const parsed_args a("inspect", argv, inspect_specs);
  if (a.has("help")) {
    std::fputs(inspect_help, stdout);
    return 0;
  }
  if (a.positionals().size() != 1) {
    throw usage_error(std::string(a.positionals().empty() ? "missing INPUT" : "more than one INPUT") +
                      " (usage: tnrt inspect INPUT [options]; see 'tnrt inspect --help')");
  }
  const double bandwidth_gbps = a.double_or("bandwidth", default_bandwidth_gbps);
  if (bandwidth_gbps <= 0) throw usage_error("--bandwidth must be positive");

  const problem p = load_problem(a.positionals().front(), a);
  const tree_cost c = cost_of(p.net, p.tree);
  const double elem = static_cast<double>(size_of(p.type));
  const double rw_bytes = c.rw_bytes(p.type);
  const double floor_ms = rw_bytes / (bandwidth_gbps * 1e9) * 1e3;

  std::printf("problem: %s\n", p.source.c_str());
  std::printf("inputs: %zu\n", p.net.inputs.size());
  std::printf("labels: %zu\n", p.net.label_count());
  std::printf("output rank: %zu\n", p.net.output.size());
  std::printf("dtype: %s\n", std::string(name_of(p.type)).c_str());
  std::printf("steps: %zu\n", c.steps);
  std::printf("tc: %.2f (log2 of %.6g multiply-adds)\n", c.log2_tc, c.flops);
  std::printf("sc: %.2f (log2 of %.6g elements in the largest tensor)\n", c.log2_sc, c.max_elements);
  std::printf("rwc: %.2f (log2 of %.6g elements read and written)\n", c.log2_rwc, c.rw_elements);
  std::printf("largest tensor: %s\n", format_bytes(c.max_elements * elem).c_str());
  std::printf("bytes read+written: %.6g (%s)\n", rw_bytes, format_bytes(rw_bytes).c_str());
  std::printf("floor: %.3f ms at %g GB/s\n", floor_ms, bandwidth_gbps);
  return 0;
}

}  // namespace tnrt::cli
