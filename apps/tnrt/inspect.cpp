// `tnrt inspect`: the cost of a problem's tree without contracting it.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "tnrt/context.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"
#include "tnrt/slicing.hpp"

namespace tnrt::cli {

namespace {

constexpr option_spec inspect_specs[] = {
    {"help", false}, {"dtype", true},     {"bond-dim", true}, {"label-size", true},
    {"path", true},  {"optimizer", true}, {"shapes", true},   {"bandwidth", true},
    {"memory-limit", true}, {"slice", true}, {"slice-range", true}, {"device", true},
    {"path-file", true}, {"write-path", true},
};

constexpr const char* inspect_help = R"(usage: tnrt inspect INPUT [options]

Prints the cost of contracting INPUT along its tree: steps, tc (log2 multiply-adds), sc (log2
elements of the largest tensor), rwc (log2 elements read and written), the bytes those mean for the
dtype, the bandwidth floor (bytes / bandwidth): no run can be faster than that, and the time of
tnrt's cost model (per step the larger of flops / 50.7 TFLOP/s and bytes / bandwidth, plus 2 us),
which the path search minimises.

  --dtype f32|f64|c64|c128   element type for the byte counts (default f32, or the einsum JSON's)
  --bond-dim N               extent of every label (default 2)
  --label-size L=N,...       extents of named labels
  --shapes 2x3,3x4           operand shapes of an expression
  --path opt_size|opt_flops  which path of an einsum JSON's "paths" to take
  --optimizer greedy|exhaustive|auto|hyper
                             use the built-in optimizer instead of the file's tree/path (auto:
                             random-greedy trials + subtree reconfiguration scored by the cost model
                             below, seed 0, 16 trials, deterministic; hyper: 64 trials, at most 1 s)
  --path-file FILE.json      take the linear path in FILE ([[0, 1], ...] as json.dump writes a
                             cotengra tree's get_path() or opt_einsum's path, or {"path": [...]})
  --write-path FILE.json     write the tree's linear path and its costs there (atomically), for
                             --path-file, einsum JSON's "path" or cotengra's ContractionTree.from_path
  --bandwidth GBPS           memory bandwidth for the floor (default 4250, the H200's copy bandwidth)
slicing (printed when any of these is given or the file has "slices"; nothing is allocated):
  --memory-limit SIZE|P%     the limit to slice under (40G, 40GB, 40GiB; a share needs --device cuda)
  --slice NAME,...|auto      slice these labels (default: the file's "slices" if they fit, else found
                             under the limit; auto: always found under the limit)
  --device cpu|cuda          cpu (default): the core estimate of one slice's memory (its static memory
                             plan, inputs included, no workspaces); cuda: the one-slice program's own
                             plan on device 0, cuTENSOR workspaces included (builds its plans)
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

  double search_seconds = 0;
  const problem p = load_problem(a.positionals().front(), a, {}, &search_seconds);
  const tree_cost c = cost_of(p.net, p.tree);
  const double elem = static_cast<double>(size_of(p.type));
  const double rw_bytes = c.rw_bytes(p.type);
  const double floor_ms = rw_bytes / (bandwidth_gbps * 1e9) * 1e3;

  std::printf("problem: %s\n", p.source.c_str());
  std::printf("inputs: %zu\n", p.net.inputs.size());
  std::printf("labels: %zu\n", p.net.label_count());
  std::printf("output rank: %zu\n", p.net.output.size());
  std::printf("dtype: %s\n", std::string(name_of(p.type)).c_str());
  if (a.has("optimizer") || search_seconds > 0) std::printf("search: %.3f s (the path search's wall time)\n", search_seconds);
  std::printf("steps: %zu\n", c.steps);
  std::printf("tc: %.2f (log2 of %.6g multiply-adds)\n", c.log2_tc, c.flops);
  std::printf("sc: %.2f (log2 of %.6g elements in the largest tensor)\n", c.log2_sc, c.max_elements);
  std::printf("rwc: %.2f (log2 of %.6g elements read and written)\n", c.log2_rwc, c.rw_elements);
  std::printf("largest tensor: %s\n", format_bytes(c.max_elements * elem).c_str());
  std::printf("bytes read+written: %.6g (%s)\n", rw_bytes, format_bytes(rw_bytes).c_str());
  std::printf("floor: %.3f ms at %g GB/s%s\n", floor_ms, bandwidth_gbps, bandwidth_note(a.has("bandwidth")));
  cost_model model = cost_model::for_dtype(p.type);
  model.bandwidth_gbps = bandwidth_gbps;
  const double model_ms = predicted_seconds(p.net, p.tree, model) * 1e3;
  std::printf("model: %.3f ms (per step max(c, m) + %g min(c, m), c = flops / %g TFLOP/s, m = bytes / %g GB/s / %g, over a "
              "small-result factor, + %g us; calibrated, include/tnrt/search.hpp)\n",
              model_ms, model.overlap, model.peak_tflops, model.bandwidth_gbps, model.memory_efficiency, model.step_overhead_us);
  std::printf("roofline: %.3f ms (per step max(flops / %g TFLOP/s, bytes / %g GB/s) + %g us)\n",
              predicted_seconds(p.net, p.tree, model.roofline()) * 1e3,
              model.peak_tflops, model.bandwidth_gbps, model.step_overhead_us);
  if (const auto out = a.value("write-path")) {
    nlohmann::json j;
    j["path"] = linear_path_of(p.net, p.tree);
    j["source"] = p.source;
    j["inputs"] = p.net.inputs.size();
    j["log2_flops"] = c.log2_tc;
    j["log2_size"] = c.log2_sc;
    j["model_ms"] = model_ms;
    write_file_atomically(*out, j.dump(1) + "\n");
  }
  const std::string device = a.choice_or("device", "cpu", {"cpu", "cuda"});
  if (!wants_slicing(a, p)) return 0;
  const slice_args sa = parse_slice_args(a, p);
  problem sliced = p;
  if (sa.search) sliced.slices.clear();
  options opt;
  opt.device = device == "cuda" ? 0 : cpu_device;
  if (sa.limit.fraction > 0) {
    if (device != "cuda") throw usage_error("--memory-limit as a share of free device memory needs --device cuda; give a size");
    opt.memory_limit_fraction = sa.limit.fraction;
  }
  context ctx(opt);
  slice_request req;
  req.labels = sa.labels;
  req.memory_limit_bytes = sa.limit.bytes;
  const slice_report r = ctx.plan_sliced(sliced, req);
  const double sliced_floor_ms = r.cost.bytes / (bandwidth_gbps * 1e9) * 1e3;
  std::printf("slicing: %lld slices over %s, %d at once\n", static_cast<long long>(r.plan.slices), p.net.describe(r.plan.labels).c_str(), r.parallel);
  std::printf("memory limit: %s\n", r.limit_bytes == std::numeric_limits<std::size_t>::max() ? "none"
                                                                                               : format_bytes(static_cast<double>(r.limit_bytes)).c_str());
  std::printf("predicted peak: %s (%s)\n", format_bytes(static_cast<double>(r.predicted_bytes)).c_str(),
              r.predicted_exactly ? "the one-slice program's plan, workspaces and result included" : "core estimate: one slice's memory plan and the result, no workspaces");
  std::printf("unsliced peak: %s (core estimate)\n", format_bytes(static_cast<double>(r.plan.peak_bytes_unsliced)).c_str());
  std::printf("sliced flops: %.6g multiply-adds (x%.3f the unsliced %.6g)\n", r.plan.flops_sliced,
              r.plan.flops_unsliced > 0 ? r.plan.flops_sliced / r.plan.flops_unsliced : 1.0, r.plan.flops_unsliced);
  std::printf("sliced bytes read+written: %.6g (%s)\n", r.cost.bytes, format_bytes(r.cost.bytes).c_str());
  std::printf("sliced floor: %.3f ms at %g GB/s%s\n", sliced_floor_ms, bandwidth_gbps, bandwidth_note(a.has("bandwidth")));
  return 0;
}

}  // namespace tnrt::cli
