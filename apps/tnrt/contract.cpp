// `tnrt contract`: load a problem, make or read its inputs, run it on the CPU engine or the GPU with
// warm-ups and timed repeats, optionally check the GPU result against the CPU engine, then report.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tnrt/context.hpp"
#include "tnrt/distributed.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/npy.hpp"
#include "tnrt/path.hpp"
#include "tnrt/profile_stats.hpp"
#include "tnrt/tensor.hpp"
#ifdef TNRT_HAVE_CUDA
#include "tnrt/cuda/runner.hpp"
#endif

namespace tnrt::cli {

namespace {

/// 0.5^0.4, the TensorNetworkBenchmarks value: the reference network has 550 tensors over 220
/// labels of extent 2, so with every element at 0.5^0.4 its result is 2^220 * 0.5^(0.4*550) = 1.
/// (0.8408964152537145, quoted beside "0.5^0.4" in some notes, is 0.5^0.25 and gives 2^82.5.)
constexpr double default_fill = 0.757858283255199;

constexpr option_spec contract_specs[] = {
    {"help", false},         {"dtype", true},     {"bond-dim", true},
    {"label-size", true},    {"path", true},      {"optimizer", true},    {"path-file", true},
    {"shapes", true},        {"device", true},    {"mode", true},
    {"fill", true},          {"random", true},    {"inputs", true},
    {"out", true},           {"verify", false},   {"warmup", true},
    {"repeat", true},        {"threads", true},   {"plan-cache", true},
    {"step-profile", true},  {"static-inputs", false},  {"retire", true},    {"retire-capacity", true},
    {"workspace-cap", true}, {"no-graph", false}, {"jit", false}, {"jit-steps", true}, {"kernel-ranks", true}, {"gemm-algos", true}, {"gemm-algo-min-ms", true},
    {"autotune", false},     {"json", true},      {"quiet", false},
    {"bandwidth", true},     {"layout", true},    {"no-fuse", false},
    {"tiled", true},         {"dot", true},       {"chains", true},       {"fuse-stage", true},
    {"fuse-levels", true},
    {"tiled-table", true},
    {"algo", true},        {"fuse-max", true},    {"profile", false},
    {"memory-limit", true}, {"slice", true},      {"slice-range", true}, {"no-slice", false},
    {"ranks", true},        {"schedule", true},
    {"distributed", false}, {"launch", true},     {"rendezvous", true},  {"collective-timeout", true},
    {"parallel-slices", true}, {"algo-timing", true}, {"step-timing", true}, {"gemm", true}, {"gemm-copies", true}, {"gemm-check", true}, {"grid-steps", true}, {"grid-max-outputs", true}, {"grid-max-sum", true}, {"grid-blocks", true}, {"gemm-workspace", true}, {"precision", true}, {"branches", true}, {"split-sums", true},
};

constexpr const char* contract_help = R"(usage: tnrt contract INPUT [options]

Contracts a tensor network and prints the result and the time.
INPUT: a tree JSON (TensorNetworkBenchmarks) or einsum JSON file, decided by its content, or an
einsum expression such as "ab,bc->ac" (with --shapes 2x3,3x4, or extents from --label-size/--bond-dim).

problem:
  --dtype f32|f64|c64|c128   element type (default f32, or the einsum JSON's dtype)
  --bond-dim N               extent of every label of a tree JSON or shapeless expression (default 2)
  --label-size L=N,...       extents of named labels
  --shapes 2x3,3x4           operand shapes of an expression ("" or - for a scalar operand)
  --path opt_size|opt_flops  which path of an einsum JSON's "paths" to take
  --optimizer greedy|exhaustive|auto|hyper
                             find the path with the built-in optimizer (replaces a file's tree/path;
                             auto, an expression's default: the search scored by tnrt's cost model,
                             16 trials, deterministic; hyper: 64 trials, at most 1 s; see tnrt inspect)
  --path-file FILE.json      the linear path in FILE ([[0, 1], ...] or {"path": [...]}; replaces the
                             file's tree/path; tnrt inspect --write-path writes one)
data (never all zeros):
  --fill VALUE               every input element = VALUE (default 0.5^0.4 = 0.757858283255199)
  --random SEED              uniform in [0.9*fill, 1.1*fill), one stream per input
  --inputs a.npy,b.npy,...   one .npy per operand (shape and dtype checked)
  --out FILE.npy             write the result (atomically; only on success)
execution:
  --device cpu|cuda|auto     auto (default): cuda when usable here, else cpu
  --mode eager|compiled|trace  GPU execution mode (trace = compiled; default eager)
  --warmup N --repeat N      untimed and timed runs (default 3 and 10 on the GPU, 0 and 1 on the CPU)
  --threads N                CPU engine threads (default: all cores)
  --verify                   GPU: also run the CPU engine and compare (exit 11 when outside tolerance)
GPU knobs:
  --plan-cache N  --retire deferred|barrier  --retire-capacity N
  --workspace-cap BYTES (K/M/G)  --no-graph  --jit  --autotune
  --jit-steps N              compiled: the N slowest library steps also get a cuTENSOR JIT kernel, timed and
                             kept when faster (default 0; each costs a JIT compile of a second or more)
  --layout auto|column|follow|row|planned   intermediates' layout (default auto: compiled mode builds the
                             program under each of the four, times a few replays and keeps the fastest; eager
                             runs a network's first eight calls under each layout twice (a warm call, then a
                             timed call), then keeps the fastest (and learns its cuBLAS route, --gemm); column: the tree's label order, first
                             contiguous; planned: each intermediate in a mode order of its own, so that heavy
                             steps are GEMMs as their operands lie)
  --no-fuse                  run every step through cuTENSOR (default: small subtrees in one fused launch)
  --tiled auto|on|off        large x small steps via tnrt's tiled streaming kernel (default auto: compiled
                             mode times it (both layouts) against cuTENSOR per step and keeps the fastest,
                             eager times it against cuTENSOR with its cuBLAS route; on: the kernel wherever
                             it applies, untimed)
  --tiled-table on|off       compiled: the tiled kernel's plans with coefficients read from a table in shared
                             memory are timed too (default on; off: the A/B)
  --fuse-stage on|off        stage a fused small step's operands (at most 1024 elements each) in shared memory
                             (default off: read them where they lie, measured faster; on: the A/B)
  --fuse-levels on|off       run the fused small steps of one level of a subtree together, one barrier per
                             level (default on; off: one step at a time, a barrier after each: the A/B)
  --dot auto|on|off          compiled: a step whose result is one element (a closed network's last step) is
                             timed through tnrt's full-contraction kernel and runs there when faster (auto,
                             the default); on: the kernel wherever it applies; off: cuTENSOR
  --chains auto|on|off       compiled: a chain of large x small steps, each consuming the one before, runs in
                             one pass over memory (its slab of the large operand in shared memory, every
                             small tensor applied there) when timed faster than its steps (auto, the
                             default); on: every chain found; off: step by step
  --gemm-check auto|on|off   compiled, with --gemm auto: the program is replayed with its cuBLAS steps and with
                             them on cuTENSOR, and they go back to cuTENSOR when that replays faster (auto, the
                             default); on: they go back untimed (tests); off: no check
  --grid-steps auto|on|off   compiled: runs of consecutive small library steps run in one cooperative launch
                             each, a grid-wide barrier between two steps; kept when the program replays faster
                             with them (auto); on: kept untimed (tests); off: a launch per step (the default)
  --grid-max-outputs N       largest result (elements) of a step in a grid run (default 1048576; multiply-adds
                             at most 16 times this); --grid-max-sum N: summed terms a result element (512);
                             --grid-blocks N: blocks of every grid run (default 0: one a thread per element of
                             the run's widest step, at most one a multiprocessor)
  --algo default|patient|gett|tgett|ttgt   cuTENSOR's algorithm choice
  --algo-timing auto|off     compiled: time cuTENSOR's algorithms on every library step and keep the
                             fastest (auto, the default), or take --algo's everywhere (off)
  --step-timing enqueue|device
                             compiled: time each step alone by events around its enqueue, the host's launch
                             cost in it (enqueue, the default), or by the GPU's time, its launches held
                             behind a spin kernel until all are enqueued (device: as fast on the suite,
                             1.46x the compile time)
  --kernel-ranks N           compiled, with --algo-timing auto: on library steps of 50 us or more, also
                             time each algorithm's next N kernels by cuTENSOR's own ranking (default 0: none)
  --gemm auto|on|off         compiled: a step that is one (strided-batched) GEMM by strides is timed through
                             cuBLAS too, full precision, and runs there when faster (auto, the default);
                             on: through cuBLAS wherever it is one GEMM; off: cuTENSOR only. Eager (auto):
                             after its layout, steps of 2^20 multiply-adds or more are timed through cuBLAS
                             over five calls (one warm, two timed step by step, two timed whole) and keep it
                             where it is faster, when the whole call is faster too
  --gemm-algos N             compiled, with --gemm auto: on GEMM steps of --gemm-algo-min-ms (default 0.05) or
                             more, also time the first N algorithms of cuBLASLt's heuristic and keep one 3%
                             faster (default 8; 0: none)
  --gemm-copies auto|on|off  compiled: a step that is no GEMM as it lies, compute-heavy (8 multiply-adds
                             per element copied, 50 us), is timed as copies of the operands in its way and
                             one cuBLAS GEMM too (auto, the default); on: that way wherever it can; off: never
  --gemm-workspace BYTES     compiled: cuBLAS's workspace on each GEMM step of at least 2^22 multiply-adds
                             (default 0: the cuTENSOR plan's; 32M is cuBLAS's recommendation on Hopper)
  --static-inputs            compiled: the inputs written once into the program's own buffers and every
                             timed run given those (program::input_views): no run copies its inputs in,
                             as a captured CUDA graph replays its static inputs (torch's graph peer)
  --branches auto|on|off     compiled: independent steps of the tree run at once (the graph keeps the
                             tree's branches, up to 4 streams; intermediates planned over the tree's
                             levels): auto (the default) times it against one chain and keeps the faster
  --split-sums auto|on|off   compiled: a step summing a long contraction into a small result runs as a wider
                             step keeping some summed labels, then a reduction (split-K by labels): auto (the
                             default) times the split program against the tree as it is and keeps the faster
  --precision full|tf32|tf32x3   compute type of f32/c64 contractions in cuTENSOR and cuBLAS: full FP32 (the
                             default), or reduced, opt-in: TF32 tensor cores, or 3xTF32 (nearer FP32; cuTENSOR
                             only); f64/c128 and tnrt's own kernels always compute in full
  --fuse-max N               largest operand/result (elements) of an absorbed small step (default 1024)
slicing (a sum of smaller contractions, each a replay of one compiled program; on when any of these
is given or the file has "slices"):
  --memory-limit SIZE|P%     device memory tnrt may hold (40G, 40GB, 40GiB, or 80% of the free memory:
                             the default); labels are sliced until one slice fits
  --slice NAME,...|auto      slice these labels (default: the file's "slices" if they fit, else found under
                             the limit; auto: always found under the limit)
  --slice-range FIRST:COUNT  run only these slices (their partial sum; COUNT empty: to the last)
  --no-slice                 ignore the file's "slices" (an unsliced run)
  --parallel-slices N        GPU: slices run at once, each by a program of its own (default 0: as many as
                             the limit leaves memory for, at most 4; 1: one at a time)
  --ranks N                  CPU: share the slices among N ranks, threads of this process, then combine
                             (blocks of sliced output labels one rank computed are gathered, the rest
                             summed); ranks as processes, and GPUs: --distributed / --launch
  --schedule contiguous|round-robin
                             how --ranks / --distributed share the slices (default contiguous: runs of
                             slices; the GPU runs contiguous shares only)
  --distributed              run as one rank of a job of one process per rank: rank and size from
                             TNRT_RANK/TNRT_WORLD_SIZE, OMPI_COMM_WORLD_*, PMI_* or RANK/WORLD_SIZE, the
                             GPU from the local rank; partials combined through the rendezvous directory
                             (CPU engine) or one NCCL reduce (cuda); rank 0 prints the result and writes
                             --out/--json, the others one line each
  --rendezvous DIR           the directory (on a file system every rank sees, fresh per job) the ranks
                             exchange files in (default $TNRT_RENDEZVOUS)
  --collective-timeout S     the longest a rank waits for the others (default 300 s): a rank that died or
                             hangs makes every other stop with an error naming it
  --launch N                 start N copies of this command with --distributed (ranks 0..N-1, a fresh
                             rendezvous directory, removed afterwards), wait for all; exit with the first
                             failing rank's code, the others stopped
report:
  --json FILE                machine-readable report (times, result, verification, counters, versions)
  --bandwidth GBPS           divisor of the bandwidth floor (default 4250, the H200's copy bandwidth)
  --quiet                    print only the result value
  --profile                  GPU: record every kernel, memcpy, memset and host synchronization of the
                             timed runs through CUPTI (loaded at run time; TNRT_CUPTI_DIR names its
                             folder) and print them as a "profile:" block (--json: counters.profile).
                             CUPTI adds overhead: the times of a profiled run are marked as such.
  --step-profile FILE.csv    compiled: after the timed runs, replay once with an event between launches
                             and write one row per launch (step, ranks, bytes, ms, GB/s, kernel)
)";

// ---- progress on a terminal -------------------------------------------------------------------

/// A one-line progress bar on stderr, only when stderr is a terminal (never in logs or pipes).
class progress_bar {
 public:
  progress_bar() : enabled_(::isatty(STDERR_FILENO) != 0) {}
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar() { clear(); }

  void update(const char* phase, std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    // Redrawing costs a write per step; a few per second is enough for the eye.
    if (drawn_ && done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr int width = 30;
    const int filled =
        total == 0 ? width : static_cast<int>(static_cast<double>(done) * width / static_cast<double>(total));
    std::string bar(static_cast<std::size_t>(std::clamp(filled, 0, width)), '#');
    bar.resize(width, ' ');
    std::fprintf(stderr, "\r%-8s [%s] %zu/%zu", phase, bar.c_str(), done, total);
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (!drawn_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// ---- inputs -----------------------------------------------------------------------------------

struct data_source {
  std::string kind;  // "fill", "random", "npy"
  double fill = default_fill;
  std::uint64_t seed = 0;
  std::vector<std::string> files;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// --inputs files, read before the problem is loaded so that an expression can take its shapes
/// and dtype from them.
std::vector<host_tensor> read_inputs(const data_source& src) {
  std::vector<host_tensor> inputs;
  if (src.kind != "npy") return inputs;
  for (const auto& f : src.files) inputs.push_back(read_npy(f));
  return inputs;
}

/// Checks the --inputs tensors against the problem, or makes the inputs from --fill/--random.
std::vector<host_tensor> make_inputs(const problem& p, const data_source& src, std::vector<host_tensor> given) {
  const std::size_t n = p.net.inputs.size();
  std::vector<host_tensor> inputs;
  inputs.reserve(n);
  if (src.kind == "npy") {
    if (given.size() != n) {
      throw usage_error("--inputs names " + std::to_string(given.size()) + " files but the problem has " +
                        std::to_string(n) + " operands");
    }
    for (std::size_t i = 0; i < n; ++i) {
      host_tensor t = std::move(given[i]);
      const auto want = p.net.shape_of(p.net.inputs[i]);
      if (t.shape() != want) {
        throw io_error("'" + src.files[i] + "' has shape " + shape_text(t.shape()) + " but operand " +
                       std::to_string(i) + " needs " + shape_text(want));
      }
      if (t.type() != p.type) {
        throw io_error("'" + src.files[i] + "' holds " + std::string(name_of(t.type())) + " but the problem is " +
                       std::string(name_of(p.type)) + " (set --dtype)");
      }
      inputs.push_back(std::move(t));
    }
    return inputs;
  }
  for (std::size_t i = 0; i < n; ++i) {
    host_tensor t(p.type, p.net.shape_of(p.net.inputs[i]));
    if (src.kind == "random") {
      fill_random(t, src.seed, i, src.fill * 0.9, src.fill * 1.1);
    } else {
      fill_constant(t, src.fill);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// ---- results ----------------------------------------------------------------------------------

struct result_summary {
  bool scalar = false;
  std::complex<double> value;  // the scalar (imaginary part 0 for real types)
  double norm = 0;             // Frobenius norm
  std::complex<double> sum;    // of all elements (the benchmark peers report it too)
  bool finite = true;
};

result_summary summarize(const host_tensor& t) {
  result_summary s;
  s.scalar = t.rank() == 0;
  visit_dtype(t.type(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.as<T>();
    double squares = 0;
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const std::complex<double> x(p[i]);
      s.finite = s.finite && std::isfinite(x.real()) && std::isfinite(x.imag());
      squares += std::norm(x);
      s.sum += x;
    }
    s.norm = std::sqrt(squares);
    if (t.size() >= 1) s.value = std::complex<double>(p[0]);
  });
  return s;
}

std::string format_scalar(std::complex<double> v, dtype type) {
  // %.9g round-trips a float, %.17g a double.
  const char* real_fmt = is_double(type) ? "%.17g" : "%.9g";
  const char* complex_fmt = is_double(type) ? "%.17g%+.17gj" : "%.9g%+.9gj";
  char buf[96];
  if (is_complex(type)) {
    std::snprintf(buf, sizeof buf, complex_fmt, v.real(), v.imag());
  } else {
    std::snprintf(buf, sizeof buf, real_fmt, v.real());
  }
  return buf;
}

struct verification {
  std::string status = "not_run";  // "passed", "failed", "not_run"
  std::string reason;              // why not run
  double error = 0, tolerance = 0;
  std::string measure;  // "abs" (scalar) or "rel_norm" (tensor)
};

/// |got - ref| <= atol + rtol * max(|ref|, 1) for a scalar; ||got - ref|| <= rtol * ||ref|| for a
/// tensor. Tolerances by precision: single 1e-5/1e-4, double 1e-12/1e-10.
verification compare(const host_tensor& got, const host_tensor& ref) {
  verification v;
  v.status = "failed";
  if (got.shape() != ref.shape() || got.type() != ref.type()) {
    v.reason =
        "result shape/dtype " + shape_text(got.shape()) + " differs from the CPU engine's " + shape_text(ref.shape());
    v.error = std::numeric_limits<double>::infinity();
    return v;
  }
  const bool dbl = is_double(ref.type());
  const double atol = dbl ? 1e-12 : 1e-5;
  const double rtol = dbl ? 1e-10 : 1e-4;
  double diff2 = 0, ref2 = 0;
  bool finite = true;
  visit_dtype(ref.type(), [&](auto zero) {
    using T = decltype(zero);
    const T* g = got.as<T>();
    const T* r = ref.as<T>();
    for (std::int64_t i = 0; i < ref.size(); ++i) {
      const std::complex<double> gi(g[i]), ri(r[i]);
      finite = finite && std::isfinite(gi.real()) && std::isfinite(gi.imag());
      diff2 += std::norm(gi - ri);
      ref2 += std::norm(ri);
    }
  });
  if (ref.rank() == 0) {
    v.measure = "abs";
    v.error = std::sqrt(diff2);
    v.tolerance = atol + rtol * std::max(std::sqrt(ref2), 1.0);
  } else {
    v.measure = "rel_norm";
    v.error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    v.tolerance = ref2 > 0 ? rtol : atol;
  }
  if (finite && v.error <= v.tolerance) v.status = "passed";
  return v;
}

struct timing {
  std::vector<double> times_ms;
  double median = 0, min = 0, max = 0;
};

timing summarize_times(std::vector<double> times) {
  timing t;
  t.times_ms = times;
  if (times.empty()) return t;
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  t.median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  t.min = times.front();
  t.max = times.back();
  return t;
}

// ---- running ----------------------------------------------------------------------------------

struct run_outcome {
  host_tensor result;
  std::vector<double> times_ms;
  std::string device;                  // "cpu" / "cuda"
  std::string mode;                    // "eager" / "compiled"
  nlohmann::json gpu;                  // counters and versions (GPU only)
  std::vector<std::string> gpu_lines;  // counters as printed
  int rank = 0;                        // --distributed: this process's rank (0 prints the report)
  std::string rank_line;               // --distributed, a rank other than 0: its one line
};

run_outcome run_cpu(const problem& p, const std::vector<host_tensor>& inputs, int warmups, int repeats) {
  run_outcome out;
  out.device = "cpu";
  out.mode = "eager";
  progress_bar bar;
  const std::string phase_warm = "warmup", phase_run = "contract";
  for (int i = 0; i < warmups + repeats; ++i) {
    const bool timed = i >= warmups;
    const char* phase = timed ? phase_run.c_str() : phase_warm.c_str();
    const auto progress = [&](std::size_t done, std::size_t total) { bar.update(phase, done, total); };
    const auto start = std::chrono::steady_clock::now();
    host_tensor r = cpu::contract(p, inputs, progress);
    const auto stop = std::chrono::steady_clock::now();
    if (timed) {
      out.times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
      out.result = std::move(r);
    }
  }
  return out;
}

#ifdef TNRT_HAVE_CUDA
// A kernel_choice knob of the CLI (auto|on|off, default auto) and its name in the report.
kernel_choice choice_knob(const parsed_args& a, std::string_view name, std::string_view fallback = "auto") {
  const std::string v = a.choice_or(name, std::string(fallback), {"auto", "on", "off"});
  return v == "on" ? kernel_choice::always : v == "off" ? kernel_choice::never : kernel_choice::automatic;
}
const char* knob_name(kernel_choice c) { return c == kernel_choice::always ? "on" : c == kernel_choice::never ? "off" : "auto"; }

cuda::options gpu_options(const parsed_args& a, const std::string& mode) {
  cuda::options o;
  o.mode = mode == "eager" ? cuda::exec_mode::eager : cuda::exec_mode::compiled;
  o.plan_cache_entries =
      static_cast<std::size_t>(a.int_or("plan-cache", static_cast<std::int64_t>(o.plan_cache_entries), 0, 1 << 24));
  o.retire = a.choice_or("retire", "deferred", {"deferred", "barrier"}) == "deferred" ? device::retire_mode::deferred
                                                                                      : device::retire_mode::barrier;
  o.retirement_capacity = static_cast<std::size_t>(
      a.int_or("retire-capacity", static_cast<std::int64_t>(o.retirement_capacity), 1, 1 << 20));
  o.workspace_cap = a.bytes_or("workspace-cap", o.workspace_cap);
  o.use_graph = !a.has("no-graph");
  const std::string layout = a.choice_or("layout", "auto", {"auto", "follow", "column", "row", "planned"});
  o.time_layouts = layout == "auto";
  o.intermediate_layout = layout_named(layout).value_or(layout_policy::column_major);
  o.fuse_small_steps = !a.has("no-fuse");
  o.tiled_kernel = choice_knob(a, "tiled");
  o.full_dot = choice_knob(a, "dot");
  o.chain_steps = choice_knob(a, "chains");
  o.gemm_check = choice_knob(a, "gemm-check");
  o.grid_steps = choice_knob(a, "grid-steps", "off");
  o.grid_step_max_outputs = a.int_or("grid-max-outputs", o.grid_step_max_outputs, 1, 1 << 30);
  o.grid_step_max_madds = o.grid_step_max_outputs * 16;
  o.grid_step_max_sum = a.int_or("grid-max-sum", o.grid_step_max_sum, 1, 1 << 20);
  o.grid_step_blocks = static_cast<int>(a.int_or("grid-blocks", o.grid_step_blocks, 0, 1 << 16));
  o.fuse_stage = a.choice_or("fuse-stage", "off", {"on", "off"}) == "on";
  o.fuse_levels = a.choice_or("fuse-levels", "on", {"on", "off"}) == "on";
  o.tiled_table = a.choice_or("tiled-table", "on", {"on", "off"}) == "on";
  o.fuse_max_elements = a.int_or("fuse-max", o.fuse_max_elements, 1, 1 << 20);
  o.jit = a.has("jit");
  o.jit_steps = static_cast<int>(a.int_or("jit-steps", 0, 0, 1 << 16));
  o.kernel_ranks = static_cast<int>(a.int_or("kernel-ranks", o.kernel_ranks, 0, 64));
  o.gemm_algos = static_cast<int>(a.int_or("gemm-algos", o.gemm_algos, 0, 64));
  o.gemm_algo_min_ms = a.double_or("gemm-algo-min-ms", o.gemm_algo_min_ms);
  if (!(o.gemm_algo_min_ms >= 0)) throw usage_error("--gemm-algo-min-ms must be at least 0, got " + std::to_string(o.gemm_algo_min_ms));
  const std::string algo = a.choice_or("algo", "default", {"default", "patient", "gett", "tgett", "ttgt"});
  o.algo = algo == "patient" ? -6 : algo == "gett" ? -4 : algo == "tgett" ? -3 : algo == "ttgt" ? -2 : -1;
  o.autotune = a.has("autotune");
  o.library_algos = a.choice_or("algo-timing", "auto", {"auto", "off"}) == "auto" ? kernel_choice::automatic : kernel_choice::never;
  o.step_timing = a.choice_or("step-timing", "enqueue", {"enqueue", "device"}) == "device" ? timing_method::device : timing_method::enqueue;
  o.gemm_lowering = choice_knob(a, "gemm");
  o.gemm_copies = choice_knob(a, "gemm-copies");
  o.gemm_workspace_bytes = a.bytes_or("gemm-workspace", o.gemm_workspace_bytes);
  o.concurrent_branches = choice_knob(a, "branches");
  o.split_sums = choice_knob(a, "split-sums");
  const std::string prec = a.choice_or("precision", "full", {"full", "tf32", "tf32x3"});
  o.compute_precision = prec == "tf32" ? precision::tf32 : prec == "tf32x3" ? precision::tf32x3 : precision::full;
  return o;
}

// ---- the profile of a profiled run: the "profile:" lines and counters.profile ------------------

constexpr std::size_t gaps_us_cap = 20000;  // entries of counters.profile.gaps_us (the statistics use all)

nlohmann::json sync_json(const cuda::sync_counts& c, double divisor = 1.0) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t k = 0; k < cuda::sync_call_kinds; ++k) {
    const char* name = cuda::name_of(static_cast<cuda::sync_call>(k));
    if (divisor == 1.0) {
      j[name] = c[k];
    } else {
      j[name] = static_cast<double>(c[k]) / divisor;
    }
  }
  return j;
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

void add_profile(run_outcome& out, const cuda::profile_report& pr) {
  const gap_summary g = summarize_gaps(pr.kernels.gaps_ns);
  const double runs = std::max(1, pr.runs);
  const double busy_ms = static_cast<double>(pr.kernels.busy_ns) / 1e6;
  const double span_ms = static_cast<double>(pr.kernels.span_ns) / 1e6;
  cuda::sync_counts inside{};
  for (std::size_t k = 0; k < cuda::sync_call_kinds; ++k) inside[k] = pr.syncs[k] - pr.runner_syncs[k];
  const std::size_t kept = std::min(pr.kernels.gaps_ns.size(), gaps_us_cap);
  std::vector<double> gaps_us;
  gaps_us.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) gaps_us.push_back(static_cast<double>(pr.kernels.gaps_ns[i]) / 1e3);

  nlohmann::json j;
  j["runs"] = pr.runs;
  j["kernels"] = pr.kernels.kernels;
  j["memcpys"] = pr.memcpys;
  j["memsets"] = pr.memsets;
  j["busy_ms"] = busy_ms;
  j["span_ms"] = span_ms;
  j["busy_fraction"] = span_ms > 0 ? busy_ms / span_ms : 0.0;
  j["gap_count"] = g.count;
  j["gap_median_us"] = optional_json(g.median_us);
  j["gap_p90_us"] = optional_json(g.p90_us);
  j["gap_max_us"] = optional_json(g.max_us);
  j["gaps_us"] = gaps_us;
  j["gaps_us_cap"] = gaps_us_cap;
  j["gaps_us_truncated"] = kept < pr.kernels.gaps_ns.size();
  j["gaps_note"] = "gap = a kernel's start minus the latest end of the kernels started before it in the same timed "
                   "run (start order, clamped at 0; never across runs); gaps_us lists the first " +
                   std::to_string(gaps_us_cap) + " in run order, the statistics use all";
  j["syncs"] = sync_json(pr.syncs);
  j["syncs_by_runner"] = sync_json(pr.runner_syncs);
  j["syncs_inside_calls"] = sync_json(inside);
  j["per_call"] = {{"kernels", static_cast<double>(pr.kernels.kernels) / runs},
                   {"memcpys", static_cast<double>(pr.memcpys) / runs},
                   {"memsets", static_cast<double>(pr.memsets) / runs},
                   {"busy_ms", busy_ms / runs},
                   {"span_ms", span_ms / runs},
                   {"syncs_inside_calls", sync_json(inside, runs)}};
  j["kernels_per_run"] = pr.kernels_per_run;
  j["kernels_untimed"] = pr.kernels_untimed;
  j["kernels_outside_runs"] = pr.kernels_outside_runs;
  j["records_dropped"] = pr.records_dropped;
  j["cupti"] = {{"path", pr.cupti_path}, {"version", pr.cupti_version}};
  out.gpu["counters"]["profile"] = j;

  char line[768];
  auto add = [&out, &line]() { out.gpu_lines.emplace_back(line); };
  std::snprintf(line, sizeof line,
                "profile: %d timed runs through CUPTI %u (%s); the times above include its overhead: profiled, "
                "not speed figures",
                pr.runs, pr.cupti_version, pr.cupti_path.c_str());
  add();
  std::snprintf(line, sizeof line, "  kernels: %zu (%.1f per run), %llu memcpys, %llu memsets", pr.kernels.kernels,
                static_cast<double>(pr.kernels.kernels) / runs, static_cast<unsigned long long>(pr.memcpys),
                static_cast<unsigned long long>(pr.memsets));
  add();
  std::snprintf(line, sizeof line, "  busy: %.3f ms of %.3f ms span (%.1f%%); per run %.3f ms busy, %.3f ms span",
                busy_ms, span_ms, span_ms > 0 ? 100.0 * busy_ms / span_ms : 0.0, busy_ms / runs, span_ms / runs);
  add();
  if (g.count > 0) {
    std::snprintf(line, sizeof line,
                  "  gaps between kernels: median %.2f us, p90 %.2f us, max %.2f us (%zu gaps, within runs)",
                  *g.median_us, *g.p90_us, *g.max_us, g.count);
  } else {
    std::snprintf(line, sizeof line, "  gaps between kernels: none (at most one kernel per run)");
  }
  add();
  std::string syncs = "  syncs (inside calls + the runner's own):";
  for (std::size_t k = 0; k < cuda::sync_call_kinds; ++k) {
    syncs += std::string(k == 0 ? " " : ", ") + cuda::name_of(static_cast<cuda::sync_call>(k)) + " " +
             std::to_string(inside[k]) + "+" + std::to_string(pr.runner_syncs[k]);
  }
  out.gpu_lines.push_back(syncs);
  if (pr.kernels_untimed > 0 || pr.records_dropped > 0) {
    std::snprintf(line, sizeof line, "  warning: %llu kernel records without timestamps, %llu records dropped by CUPTI",
                  static_cast<unsigned long long>(pr.kernels_untimed),
                  static_cast<unsigned long long>(pr.records_dropped));
    add();
  }
}

run_outcome run_gpu(const problem& p, const std::vector<host_tensor>& inputs, const cuda::options& opt, int warmups,
                    int repeats, bool profile, const std::string& step_profile, bool static_inputs) {
  progress_bar bar;
  cuda::run_request req;
  req.prob = &p;
  req.inputs = inputs;
  req.opt = opt;
  req.warmups = warmups;
  req.repeats = repeats;
  req.profile = profile;
  req.step_profile_path = step_profile;
  req.static_inputs = static_inputs;
  req.progress = [&bar](const char* phase, std::size_t done, std::size_t total) { bar.update(phase, done, total); };
  cuda::run_result r = cuda::run(req);
  bar.clear();

  run_outcome out;
  out.device = "cuda";
  out.mode = opt.mode == cuda::exec_mode::eager ? "eager" : "compiled";
  out.times_ms = r.times_ms;
  out.result = std::move(r.result);
  const auto& s = r.stats;
  auto& j = out.gpu;
  j["compile_ms"] = r.compile_ms;
  j["enqueue_ms"] = r.enqueue_ms;
  j["peak_device_bytes"] = r.peak_device_bytes;
  j["plan_lower_bound_bytes"] = r.plan_lower_bound_bytes;
  j["plan_arena_bytes"] = r.plan_arena_bytes;
  j["plan_tensor_bound_bytes"] = r.plan_tensor_bound_bytes;
  if (opt.mode == cuda::exec_mode::compiled) {
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, n] : r.kernel_counts) kernels[name] = n;
    j["kernels"] = kernels;
    j["algos_changed"] = r.algos_changed;
    j["kernel_ranks_chosen"] = r.kernel_ranks_chosen;
    j["gemm_candidates"] = r.gemm_candidates;
    j["gemm_chosen"] = r.gemm_chosen;
    j["gemm_algos_chosen"] = r.gemm_algos_chosen;
    j["gemm_dropped"] = r.gemm_dropped;
    j["layout"] = r.layout;
    nlohmann::json lt = nlohmann::json::object();
    for (const auto& [name, ms] : r.layout_times) lt[name] = ms;
    j["layout_times_ms"] = lt;
  }
  j["syncs_inside_calls"] = r.syncs_inside_calls;
  j["options"] = {{"plan_cache_entries", opt.plan_cache_entries},
                  {"retire", opt.retire == device::retire_mode::deferred ? "deferred" : "barrier"},
                  {"retirement_capacity", opt.retirement_capacity},
                  {"workspace_cap", opt.workspace_cap},
                  {"use_graph", opt.use_graph},
                  {"layout", opt.time_layouts ? std::string("auto") : std::string(name_of(opt.intermediate_layout))},
                  {"fuse_small_steps", opt.fuse_small_steps},
                  {"tiled_kernel", knob_name(opt.tiled_kernel)},
                  {"full_dot", knob_name(opt.full_dot)},
                  {"chain_steps", knob_name(opt.chain_steps)},
                  {"gemm_check", knob_name(opt.gemm_check)},
                  {"grid_steps", knob_name(opt.grid_steps)},
                  {"fuse_stage", opt.fuse_stage},
                  {"fuse_levels", opt.fuse_levels},
                  {"tiled_table", opt.tiled_table},
                  {"fuse_max_elements", opt.fuse_max_elements},
                  {"jit", opt.jit},
                  {"jit_steps", opt.jit_steps},
                  {"kernel_ranks", opt.kernel_ranks},
                  {"algo", opt.algo},
                  {"algo_timing", opt.library_algos == kernel_choice::automatic},
                  {"step_timing", opt.step_timing == timing_method::device ? "device" : "enqueue"},
                  {"precision", opt.compute_precision == precision::tf32     ? "tf32"
                                : opt.compute_precision == precision::tf32x3 ? "tf32x3"
                                                                             : "full"},
                  {"gemm", knob_name(opt.gemm_lowering)},
                  {"gemm_copies", knob_name(opt.gemm_copies)},
                  {"gemm_workspace_bytes", opt.gemm_workspace_bytes},
                  {"gemm_algos", opt.gemm_algos},
                  {"gemm_algo_min_ms", opt.gemm_algo_min_ms},
                  {"branches", knob_name(opt.concurrent_branches)},
                  {"split_sums", knob_name(opt.split_sums)},
                  {"autotune", opt.autotune}};
  j["counters"] = {
      {"plan_cache",
       {{"entries", s.plan_cache.entries},
        {"capacity", s.plan_cache.capacity},
        {"hits", s.plan_cache.hits},
        {"misses", s.plan_cache.misses},
        {"evictions", s.plan_cache.evictions},
        {"clears", s.plan_cache.clears},
        {"retained_bytes", s.plan_cache.retained_bytes}}},
      {"workspace",
       {{"slots", s.workspace.slots},
        {"retained_bytes", s.workspace.retained_bytes},
        {"grows", s.workspace.grows},
        {"temporary_uses", s.workspace.temporary_uses},
        {"cap", s.workspace.cap},
        {"high_water_request", s.workspace.high_water_request}}},
      {"retirement",
       {{"deferred", s.retirement.deferred},
        {"immediate", s.retirement.immediate},
        {"released", s.retirement.released},
        {"barrier_fallbacks", s.retirement.barrier_fallbacks},
        {"capacity_waits", s.retirement.capacity_waits},
        {"query_errors", s.retirement.query_errors},
        {"leaked", s.retirement.leaked},
        {"stream_syncs", s.retirement.stream_syncs},
        {"event_syncs", s.retirement.event_syncs},
        {"in_flight", s.retirement.in_flight},
        {"max_in_flight", s.retirement.max_in_flight}}},
      {"pool",
       {{"bytes_in_use", s.pool.bytes_in_use},
        {"bytes_cached", s.pool.bytes_cached},
        {"high_water", s.pool.high_water},
        {"reserved_high_water", s.pool.reserved_high_water},
        {"allocations", s.pool.allocations},
        {"reuses", s.pool.reuses},
        {"driver_allocations", s.pool.driver_allocations},
        {"driver_frees", s.pool.driver_frees},
        {"oom_recoveries", s.pool.oom_recoveries}}},
      {"syncs",
       {{"stream_syncs", s.syncs.stream_syncs},
        {"device_syncs", s.syncs.device_syncs},
        {"event_syncs", s.syncs.event_syncs}}},
      {"eager_layout",
       {{"trials", s.api.eager_layout_trials},
        {"learned_column", s.api.eager_layouts_column},
        {"learned_row", s.api.eager_layouts_row},
        {"learned_follow", s.api.eager_layouts_follow},
        {"learned_planned", s.api.eager_layouts_planned},
        {"route_trials", s.api.eager_route_trials},
        {"route_steps", s.api.eager_route_steps},
        {"route_tiled", s.api.eager_route_tiled},
        {"route_picked", s.api.eager_route_picked},
        {"route_saving_us", s.api.eager_route_saving_us},
        {"route_check_library_us", s.api.eager_route_check_library_us},
        {"route_check_route_us", s.api.eager_route_check_route_us}}},
  };
  j["versions"] = {{"device_name", r.device_name},
                   {"driver", r.driver_version},
                   {"cuda", r.cuda_version},
                   {"cutensor", r.cutensor_version}};

  char line[512];
  auto add = [&out, &line]() { out.gpu_lines.emplace_back(line); };
  std::snprintf(line, sizeof line, "device: %s (driver %s, CUDA %s, cuTENSOR %s)", r.device_name.c_str(),
                r.driver_version.c_str(), r.cuda_version.c_str(), r.cutensor_version.c_str());
  add();
  if (opt.compute_precision != precision::full) {
    std::snprintf(line, sizeof line, "precision: %s (reduced, as asked: f32/c64 contractions through cuTENSOR%s)",
                  opt.compute_precision == precision::tf32 ? "TF32" : "3xTF32", opt.compute_precision == precision::tf32 ? " and cuBLAS" : "");
    add();
  }
  if (opt.mode == cuda::exec_mode::compiled) {
    std::snprintf(line, sizeof line, "compile: %.3f ms (memory plan: arena %s, lower bound %s with step workspaces, %s tensors alone)", r.compile_ms,
                  format_bytes(static_cast<double>(r.plan_arena_bytes)).c_str(), format_bytes(static_cast<double>(r.plan_lower_bound_bytes)).c_str(),
                  format_bytes(static_cast<double>(r.plan_tensor_bound_bytes)).c_str());
    add();
    std::string kinds;
    for (const auto& [name, n] : r.kernel_counts) kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    std::snprintf(line, sizeof line,
                  "kernels: %s; %d steps on a timed cuTENSOR algorithm (%d on a runner-up kernel), %d of one GEMM form (%d on a timed cuBLASLt "
                  "algorithm, %d taken back from cuBLAS by the whole-program check)",
                  kinds.c_str(), r.algos_changed, r.kernel_ranks_chosen, r.gemm_candidates, r.gemm_algos_chosen, r.gemm_dropped);
    add();
    std::string timed;
    for (const auto& [name, ms] : r.layout_times) {
      char t[64];
      std::snprintf(t, sizeof t, "%s%s %.3f ms", timed.empty() ? "" : ", ", name.c_str(), ms);
      timed += t;
    }
    std::snprintf(line, sizeof line, "layout: %s%s%s%s", r.layout.c_str(), timed.empty() ? "" : " (timed: ", timed.c_str(), timed.empty() ? "" : ")");
    add();
  } else if (s.api.eager_layout_trials > 0) {  // eager learned (or is learning) its layout over the first calls
    std::snprintf(line, sizeof line, "layout: %s (eager, learned from %llu timed calls, one per layout, each after a warm call)",
                  s.api.eager_layouts_learned() == 0 ? "not decided yet"
                  : s.api.eager_layouts_row > 0      ? "row"
                  : s.api.eager_layouts_follow > 0   ? "follow"
                  : s.api.eager_layouts_planned > 0  ? "planned"
                                                     : "column",
                  static_cast<unsigned long long>(s.api.eager_layout_trials));
    add();
  }
  if (s.api.eager_route_trials > 0) {  // eager timed its cuBLAS route step by step (core/gemm_route.hpp)
    std::snprintf(line, sizeof line,
                  "cuBLAS route (eager): %llu steps kept it (%llu of them tiled steps back on cuTENSOR), from %llu timed calls; "
                  "the step timing picked %llu saving %.3f ms, the whole-call check %.3f ms without, %.3f with",
                  static_cast<unsigned long long>(s.api.eager_route_steps), static_cast<unsigned long long>(s.api.eager_route_tiled),
                  static_cast<unsigned long long>(s.api.eager_route_trials),
                  static_cast<unsigned long long>(s.api.eager_route_picked), 1e-3 * static_cast<double>(s.api.eager_route_saving_us),
                  1e-3 * static_cast<double>(s.api.eager_route_check_library_us),
                  1e-3 * static_cast<double>(s.api.eager_route_check_route_us));
    add();
  }
  if (!r.enqueue_ms.empty()) {
    const timing e = summarize_times(r.enqueue_ms);
    std::snprintf(line, sizeof line,
                  "enqueue: median %.3f ms, min %.3f ms, max %.3f ms (host time until all work was enqueued)", e.median,
                  e.min, e.max);
    add();
  }
  std::snprintf(line, sizeof line, "plan cache: %zu/%zu entries, %llu hits, %llu misses, %llu evictions",
                s.plan_cache.entries, s.plan_cache.capacity, static_cast<unsigned long long>(s.plan_cache.hits),
                static_cast<unsigned long long>(s.plan_cache.misses),
                static_cast<unsigned long long>(s.plan_cache.evictions));
  add();
  std::snprintf(line, sizeof line, "workspace: %zu slots, %s retained (cap %s), %llu grows, %llu temporary uses",
                s.workspace.slots, format_bytes(static_cast<double>(s.workspace.retained_bytes)).c_str(),
                format_bytes(static_cast<double>(s.workspace.cap)).c_str(),
                static_cast<unsigned long long>(s.workspace.grows),
                static_cast<unsigned long long>(s.workspace.temporary_uses));
  add();
  std::snprintf(
      line, sizeof line,
      "retirement: %llu deferred, %llu released, %llu barrier fallbacks, %llu leaked, %llu in flight (max %llu)",
      static_cast<unsigned long long>(s.retirement.deferred), static_cast<unsigned long long>(s.retirement.released),
      static_cast<unsigned long long>(s.retirement.barrier_fallbacks),
      static_cast<unsigned long long>(s.retirement.leaked), static_cast<unsigned long long>(s.retirement.in_flight),
      static_cast<unsigned long long>(s.retirement.max_in_flight));
  add();
  std::snprintf(line, sizeof line, "pool: %s in use, %s cached, high water %s; peak device %s",
                format_bytes(static_cast<double>(s.pool.bytes_in_use)).c_str(),
                format_bytes(static_cast<double>(s.pool.bytes_cached)).c_str(),
                format_bytes(static_cast<double>(s.pool.high_water)).c_str(),
                format_bytes(static_cast<double>(r.peak_device_bytes)).c_str());
  add();
  std::snprintf(
      line, sizeof line, "syncs: %llu stream, %llu device, %llu event; %llu inside timed calls",
      static_cast<unsigned long long>(s.syncs.stream_syncs), static_cast<unsigned long long>(s.syncs.device_syncs),
      static_cast<unsigned long long>(s.syncs.event_syncs), static_cast<unsigned long long>(r.syncs_inside_calls));
  add();
  if (r.profile) add_profile(out, *r.profile);
  return out;
}
#endif

// A sliced contraction through the library API (context::compile_sliced): times of whole sliced
// runs, host tensors in and out (the inputs' upload and the result's download are inside the time).
run_outcome run_sliced(const problem& file_problem, const std::vector<host_tensor>& inputs, const parsed_args& a, options opt, bool on_gpu,
                       int warmups, int repeats) {
  const slice_args sa = parse_slice_args(a, file_problem);
  problem p = file_problem;
  if (sa.search) p.slices.clear();
  if (!on_gpu) opt.device = cpu_device;
  const int ranks = static_cast<int>(a.int_or("ranks", 1, 1, 1024));
  const slice_schedule schedule =
      a.choice_or("schedule", "contiguous", {"contiguous", "round-robin"}) == "round-robin" ? slice_schedule::round_robin
                                                                                          : slice_schedule::contiguous;
  if (a.has("schedule") && !a.has("ranks") && !a.has("distributed")) throw usage_error("--schedule applies to --ranks and --distributed");
  // --distributed: this process is one rank of a launched job (tnrt/distributed.hpp)
  const bool distributed = a.has("distributed");
  std::optional<rank_identity> id;
  std::optional<rendezvous> rv;
  const double collective_timeout = a.double_or("collective-timeout", 300);
  if (!(collective_timeout > 0)) throw usage_error("--collective-timeout must be a positive number of seconds");
  if (!distributed && (a.has("rendezvous") || a.has("collective-timeout")))
    throw usage_error("--rendezvous and --collective-timeout apply to --distributed (and --launch)");
  const char* nccl_one_env = std::getenv("TNRT_NCCL_ONE_RANK");
  const bool nccl_for_one_rank = nccl_one_env != nullptr && std::string(nccl_one_env) == "1";
  if (distributed) {
    if (a.has("ranks")) throw usage_error("--distributed and --ranks exclude each other (processes or threads)");
    if (a.has("slice-range")) throw usage_error("--distributed and --slice-range exclude each other (the ranks share every slice)");
    id = rank_from_environment();
    if (!id)
      throw usage_error("--distributed: no rank in the environment (TNRT_RANK/TNRT_WORLD_SIZE, OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, "
                        "PMI_RANK/PMI_SIZE or RANK/WORLD_SIZE); --launch N starts N ranks");
    if (on_gpu && schedule == slice_schedule::round_robin)
      throw not_supported("--schedule round-robin on the GPU: the GPU's sliced program runs ranges of slices; use contiguous");
    const char* env_dir = std::getenv("TNRT_RENDEZVOUS");
    const std::string dir = a.value_or("rendezvous", env_dir ? env_dir : "");
    if (id->size > 1 || (on_gpu && nccl_for_one_rank)) {
      if (dir.empty()) throw usage_error("--distributed with " + std::to_string(id->size) + " ranks needs --rendezvous DIR or TNRT_RENDEZVOUS");
      rv.emplace(dir, id->rank, id->size, collective_timeout);
    }
#ifdef TNRT_HAVE_CUDA
    if (on_gpu) opt.device = device_of(*id, cuda::visible_devices());
#endif
  }
  // a rank that fails before the combine tells the others at once, through the rendezvous
  const auto guarded = [&](auto&& f) -> decltype(f()) {
    if (!rv) return f();
    try {
      return f();
    } catch (const std::exception& e) {
      rv->report_failure(e);
      rethrow_for_rank(e, id->rank, id->size);
    }
  };
  if (sa.limit.fraction > 0) {
    if (!on_gpu) throw usage_error("--memory-limit as a share of free device memory needs the GPU; give a size for the CPU engine");
    opt.memory_limit_fraction = sa.limit.fraction;
  }
  context ctx = guarded([&] { return context(opt); });
  slice_request req;
  req.labels = sa.labels;
  req.memory_limit_bytes = sa.limit.bytes;
  req.parallel = static_cast<int>(a.int_or("parallel-slices", 0, 0, 64));
  const auto c0 = std::chrono::steady_clock::now();
  sliced_program sp = guarded([&] { return ctx.compile_sliced(p, req); });
  const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
  const slice_report& r = sp.report();
  const std::int64_t all = r.plan.slices;
  const std::int64_t count = sa.count < 0 ? all - sa.first : sa.count;
  if (sa.first > all || count > all - sa.first)
    throw usage_error("--slice-range " + std::to_string(sa.first) + ":" + std::to_string(count) + " is not within the " + std::to_string(all) +
                      " slices");
  std::unique_ptr<collective> coll;
  if (distributed) {
    coll = guarded([&]() -> std::unique_ptr<collective> {
      if (!rv) return make_one_rank_collective();
#ifdef TNRT_HAVE_CUDA
      if (on_gpu) return cuda::make_nccl_collective(*rv, opt.device, nccl_for_one_rank);
#endif
      return make_file_collective(*rv);
    });
  }
  if (a.has("ranks")) {
    if (on_gpu)
      throw not_supported("--ranks shares slices among ranks on the CPU engine; several GPUs through NCCL are not built "
                          "(on one GPU, give each process its own --slice-range), use --device cpu");
    if (a.has("slice-range")) throw usage_error("--ranks and --slice-range exclude each other (--ranks shares every slice)");
  }
  progress_bar bar;
  run_outcome out;
  distributed_report dist;
  for (int i = 0; i < warmups + repeats; ++i) {
    const bool timed = i >= warmups;
    if (distributed) {
      const auto t0 = std::chrono::steady_clock::now();
#ifdef TNRT_HAVE_CUDA
      host_tensor res = on_gpu ? cuda::contract_sliced_rank(sp, inputs, opt.device, schedule, *coll, &dist)
                               : cpu::contract_sliced_rank(p, inputs, r.plan.labels, schedule, *coll, &dist);
#else
      host_tensor res = cpu::contract_sliced_rank(p, inputs, r.plan.labels, schedule, *coll, &dist);
#endif
      const auto t1 = std::chrono::steady_clock::now();
      if (timed) {
        out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.result = std::move(res);
      }
      continue;
    }
    if (a.has("ranks")) {
      const auto t0 = std::chrono::steady_clock::now();
      host_tensor res = cpu::contract_sliced_ranks(p, inputs, r.plan.labels, ranks, schedule, &dist);
      const auto t1 = std::chrono::steady_clock::now();
      if (timed) {
        out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.result = std::move(res);
      }
      continue;
    }
    const char* phase = timed ? "slices" : "warmup";
    const auto progress = [&](std::int64_t done, std::int64_t total) {
      bar.update(phase, static_cast<std::size_t>(done), static_cast<std::size_t>(total));
    };
    const auto t0 = std::chrono::steady_clock::now();
    host_tensor res = sp.run(inputs, ::isatty(STDERR_FILENO) ? slice_progress_fn(progress) : slice_progress_fn(), sa.first, count);
    const auto t1 = std::chrono::steady_clock::now();
    if (timed) {
      out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      out.result = std::move(res);
    }
  }
  bar.clear();
  out.device = on_gpu ? "cuda" : "cpu";
  out.mode = "sliced";
  const counters st = ctx.stats();
  const memory_report mem = sp.memory();
  char line[512];
  std::snprintf(line, sizeof line, "slicing: %lld slices over %s (ran %lld from slice %lld, %d at once); %.6g multiply-adds sliced, %.6g unsliced (x%.3f)",
                static_cast<long long>(all), p.net.describe(r.plan.labels).c_str(), static_cast<long long>(count),
                static_cast<long long>(sa.first), r.parallel, r.plan.flops_sliced, r.plan.flops_unsliced,
                r.plan.flops_unsliced > 0 ? r.plan.flops_sliced / r.plan.flops_unsliced : 1.0);
  out.gpu_lines.emplace_back(line);
  std::snprintf(line, sizeof line, "memory: predicted %s (%s), limit %s%s%s", format_bytes(static_cast<double>(r.predicted_bytes)).c_str(),
                r.predicted_exactly ? "the one-slice program's plan" : "core estimate",
                r.limit_bytes == std::numeric_limits<std::size_t>::max() ? "none" : format_bytes(static_cast<double>(r.limit_bytes)).c_str(),
                on_gpu ? ", measured peak " : "", on_gpu ? format_bytes(static_cast<double>(st.pool.high_water)).c_str() : "");
  out.gpu_lines.emplace_back(line);
  if (a.has("ranks")) {
    std::int64_t least = std::numeric_limits<std::int64_t>::max(), most = 0;
    for (const auto& rr : dist.per_rank) {
      least = std::min(least, rr.share.count);
      most = std::max(most, rr.share.count);
    }
    std::snprintf(line, sizeof line, "ranks: %d (%s, threads of this process): %lld-%lld slices each; last run: contract %.3f ms, combine %.3f ms (%lld blocks gathered, %lld summed)",
                  ranks, schedule == slice_schedule::round_robin ? "round-robin" : "contiguous", static_cast<long long>(least),
                  static_cast<long long>(most), dist.contract_seconds * 1e3, dist.reduce_seconds * 1e3,
                  static_cast<long long>(dist.plan.gathered), static_cast<long long>(dist.plan.summed));
    out.gpu_lines.emplace_back(line);
    for (const auto& n : dist.notes) std::fprintf(stderr, "tnrt: note: %s\n", n.c_str());
    nlohmann::json per = nlohmann::json::array();
    for (const auto& rr : dist.per_rank)
      per.push_back({{"rank", rr.rank}, {"first", rr.share.first}, {"count", rr.share.count}, {"stride", rr.share.stride}, {"ms", rr.seconds * 1e3}});
    out.gpu["ranks"] = {{"ranks", ranks},
                        {"schedule", schedule == slice_schedule::round_robin ? "round-robin" : "contiguous"},
                        {"per_rank", per},
                        {"contract_ms", dist.contract_seconds * 1e3},
                        {"combine_ms", dist.reduce_seconds * 1e3},
                        {"blocks_gathered", dist.plan.gathered},
                        {"blocks_summed", dist.plan.summed},
                        {"notes", dist.notes}};
  }
  if (distributed) {
    const rank_report& me = dist.per_rank.front();
    const char* sched = schedule == slice_schedule::round_robin ? "round-robin" : "contiguous";
    for (const auto& n : dist.notes) std::fprintf(stderr, "tnrt: note: %s\n", n.c_str());
    char share[96];
    if (me.share.count == 0) {
      std::snprintf(share, sizeof share, "no slices (idle)");
    } else if (me.share.stride == 1) {
      std::snprintf(share, sizeof share, "%lld slices from %lld", static_cast<long long>(me.share.count), static_cast<long long>(me.share.first));
    } else {
      std::snprintf(share, sizeof share, "%lld slices from %lld every %lld", static_cast<long long>(me.share.count),
                    static_cast<long long>(me.share.first), static_cast<long long>(me.share.stride));
    }
    std::snprintf(line, sizeof line,
                  "ranks: %d (%s, processes, collective %s): rank %d of %d ran %s of %lld; last run: contract %.3f ms, reduce %.3f ms "
                  "(%lld blocks gathered, %lld summed)",
                  id->size, sched, coll->name().c_str(), id->rank, id->size, share, static_cast<long long>(all), dist.contract_seconds * 1e3,
                  dist.reduce_seconds * 1e3, static_cast<long long>(dist.plan.gathered), static_cast<long long>(dist.plan.summed));
    out.gpu_lines.emplace_back(line);
    out.rank = id->rank;
    if (id->rank != 0) {
      const timing t = summarize_times(out.times_ms);
      std::snprintf(line, sizeof line, "rank %d of %d: %s of %lld on %s%s; contract %.3f ms, reduce %.3f ms (last run); median run %.3f ms", id->rank,
                    id->size, share, static_cast<long long>(all), on_gpu ? "cuda device " : "cpu", on_gpu ? std::to_string(opt.device).c_str() : "",
                    dist.contract_seconds * 1e3, dist.reduce_seconds * 1e3, t.median);
      out.rank_line = line;
    }
    nlohmann::json per = nlohmann::json::array();
    for (int k = 0; k < id->size; ++k) {
      const slice_share sh = share_of(all, id->size, k, schedule);
      per.push_back({{"rank", k}, {"first", sh.first}, {"count", sh.count}, {"stride", sh.stride}});
    }
    out.gpu["ranks"] = {{"ranks", id->size},
                        {"schedule", sched},
                        {"processes", true},
                        {"collective", coll->name()},
                        {"identity_from", id->source},
                        {"per_rank", per},
                        {"contract_ms", dist.contract_seconds * 1e3},
                        {"combine_ms", dist.reduce_seconds * 1e3},
                        {"collective_timeout_s", collective_timeout},
                        {"blocks_gathered", dist.plan.gathered},
                        {"blocks_summed", dist.plan.summed},
                        {"notes", dist.notes}};
  }
  std::snprintf(line, sizeof line, "compile: %.3f ms (one-slice program %s, graph %s); times include the inputs' upload and the result's download",
                compile_ms, format_bytes(static_cast<double>(mem.total_bytes)).c_str(), sp.uses_graph() ? "yes" : "no");
  out.gpu_lines.emplace_back(line);
  nlohmann::json labels = nlohmann::json::array();
  for (label_t l : r.plan.labels) labels.push_back(p.net.label_names[static_cast<std::size_t>(l)]);
  out.gpu["slicing"] = {{"slices", all},
                        {"labels", labels},
                        {"first", sa.first},
                        {"count", count},
                        {"parallel", r.parallel},
                        {"flops_sliced", r.plan.flops_sliced},
                        {"flops_unsliced", r.plan.flops_unsliced},
                        {"predicted_bytes", r.predicted_bytes},
                        {"predicted_exactly", r.predicted_exactly},
                        {"limit_bytes", r.limit_bytes},
                        {"measured_peak_bytes", on_gpu ? nlohmann::json(st.pool.high_water) : nlohmann::json(nullptr)},
                        {"program_bytes", mem.total_bytes},
                        {"compile_ms", compile_ms},
                        {"uses_graph", sp.uses_graph()}};
  return out;
}

/// "cpu" or "cuda" for --device; throws device_error when cuda is asked for and cannot be had.
/// `fallback_note` says why --device auto ended on the CPU, so that a user who expected the GPU
/// learns why without a second command.
std::string choose_device(const std::string& asked, std::string& fallback_note) {
#ifdef TNRT_HAVE_CUDA
  if (asked == "cpu") return "cpu";
  const std::string reason = cuda::unavailable_reason();
  if (reason.empty()) return "cuda";
  if (asked == "cuda") throw device_error(reason);
  fallback_note = "the GPU is not usable here: " + reason;
  return "cpu";
#else
  if (asked == "cuda") throw device_error("this tnrt was built without the CUDA backend");
  if (asked == "auto") fallback_note = "this tnrt was built without the CUDA backend";
  return "cpu";
#endif
}

/// --launch N: N copies of this command with --distributed, one process per rank (tnrt/distributed.hpp).
int launch(const parsed_args& a, std::span<char* const> argv) {
  const int n = static_cast<int>(a.int_or("launch", 1, 1, 1024));
  if (a.has("distributed")) throw usage_error("--launch starts ranks that run --distributed; give one of the two");
  if (a.has("ranks")) throw usage_error("--launch and --ranks exclude each other (processes or threads)");
  if (a.has("rendezvous")) throw usage_error("--launch makes a rendezvous directory of its own; --rendezvous is for --distributed");
  if (a.has("slice-range")) throw usage_error("--launch and --slice-range exclude each other (the ranks share every slice)");
  const double timeout = a.double_or("collective-timeout", 300);
  if (!(timeout > 0)) throw usage_error("--collective-timeout must be a positive number of seconds");
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw io_error("--launch: cannot find this program's path (/proc/self/exe): " + ec.message());
  std::vector<std::string> args{exe.string(), "contract", "--distributed"};
  bool options_done = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string arg = argv[i];
    if (!options_done && arg == "--") options_done = true;
    if (!options_done && arg == "--launch") {
      ++i;
      continue;
    }
    if (!options_done && arg.rfind("--launch=", 0) == 0) continue;
    args.push_back(arg);
  }
  const char* tmp_root = std::getenv("TMPDIR");
  std::string dir = std::string(tmp_root != nullptr && *tmp_root != '\0' ? tmp_root : "/tmp") + "/tnrt-rendezvous-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) throw io_error("--launch: cannot make a rendezvous directory under " + dir);
  struct remove_dir {
    std::string path;
    ~remove_dir() {
      std::error_code e;
      std::filesystem::remove_all(path, e);
    }
  } cleanup{dir};
  std::fflush(stdout);
  std::fflush(stderr);
  return launch_ranks(args, n, dir, std::min(timeout, 10.0));
}

}  // namespace

int run_contract(std::span<char* const> argv) {
  const parsed_args a("contract", argv, contract_specs);
  if (a.has("help")) {
    std::fputs(contract_help, stdout);
    return 0;
  }
  if (a.has("launch")) return launch(a, argv);
  if (a.positionals().size() != 1) {
    throw usage_error(std::string(a.positionals().empty() ? "missing INPUT" : "more than one INPUT") +
                      " (usage: tnrt contract INPUT [options]; see 'tnrt contract --help')");
  }
  const std::string asked_device = a.choice_or("device", "auto", {"cpu", "cuda", "auto"});
  std::string mode = a.choice_or("mode", "eager", {"eager", "compiled", "trace"});
  if (mode == "trace") mode = "compiled";
  const double bandwidth_gbps = a.double_or("bandwidth", default_bandwidth_gbps);
  if (bandwidth_gbps <= 0) throw usage_error("--bandwidth must be positive");
  const int threads = static_cast<int>(a.int_or("threads", 0, 1, 4096));

  data_source src;
  const int data_flags = int{a.has("inputs")} + int{a.has("random")};
  if (data_flags > 1) throw usage_error("--inputs and --random exclude each other");
  if (a.has("inputs") && a.has("fill")) throw usage_error("--inputs and --fill exclude each other");
  src.fill = a.double_or("fill", default_fill);
  if (a.has("inputs")) {
    src.kind = "npy";
    src.files = split(*a.value("inputs"), ',');
  } else if (a.has("random")) {
    src.kind = "random";
    src.seed = static_cast<std::uint64_t>(a.int_or("random", 0, 0, std::numeric_limits<std::int64_t>::max()));
  } else {
    src.kind = "fill";
  }
  const bool quiet = a.has("quiet");
  const bool verify = a.has("verify");

  // Everything that can be checked without work is checked before loading: a typo in a GPU knob
  // should not cost a CPU contraction first.
#ifdef TNRT_HAVE_CUDA
  const cuda::options gpu_opt = gpu_options(a, mode);
#else
  (void)a.int_or("plan-cache", 0, 0, 1 << 24);
  (void)a.choice_or("algo-timing", "auto", {"auto", "off"});
  (void)a.choice_or("step-timing", "enqueue", {"enqueue", "device"});
  (void)a.choice_or("gemm", "auto", {"auto", "on", "off"});
  (void)a.choice_or("gemm-copies", "auto", {"auto", "on", "off"});
  (void)a.bytes_or("gemm-workspace", 0);
  (void)a.int_or("jit-steps", 0, 0, 1 << 16);
  (void)a.int_or("kernel-ranks", 0, 0, 64);
  (void)a.int_or("gemm-algos", 0, 0, 64);
  if (!(a.double_or("gemm-algo-min-ms", 0.05) >= 0)) throw usage_error("--gemm-algo-min-ms must be at least 0");
  (void)a.choice_or("branches", "auto", {"auto", "on", "off"});
  (void)a.choice_or("split-sums", "auto", {"auto", "on", "off"});
  (void)a.choice_or("precision", "full", {"full", "tf32", "tf32x3"});
  (void)a.choice_or("layout", "auto", {"auto", "follow", "column", "row", "planned"});
  (void)a.choice_or("tiled", "auto", {"auto", "on", "off"});
  (void)a.choice_or("dot", "auto", {"auto", "on", "off"});
  (void)a.choice_or("chains", "auto", {"auto", "on", "off"});
  (void)a.choice_or("gemm-check", "auto", {"auto", "on", "off"});
  (void)a.choice_or("grid-steps", "off", {"auto", "on", "off"});
  (void)a.choice_or("fuse-stage", "off", {"on", "off"});
  (void)a.choice_or("fuse-levels", "on", {"on", "off"});
  (void)a.choice_or("tiled-table", "on", {"on", "off"});
  (void)a.choice_or("retire", "deferred", {"deferred", "barrier"});
  (void)a.int_or("retire-capacity", 1, 1, 1 << 20);
  (void)a.bytes_or("workspace-cap", 0);
#endif
  if (a.has("static-inputs") && mode != "compiled" && mode != "trace")
    throw usage_error("--static-inputs applies to --mode compiled (a compiled program's own input buffers)");
  // --profile records GPU kernels: it needs the GPU and CUPTI, both checked before any work.
  const bool profile = a.has("profile");
  if (profile && asked_device == "cpu") throw not_supported("--profile records GPU kernels; the CPU engine has none");
#ifdef TNRT_HAVE_CUDA
  if (profile) {
    if (auto why = cuda::profiler_unavailable_reason(); !why.empty()) throw device_error(why);
  }
#else
  if (profile) throw device_error("--profile needs the CUDA backend; this tnrt was built without it");
#endif
  std::string fallback_note;
  const std::string device_name = choose_device(asked_device, fallback_note);
  const bool on_gpu = device_name == "cuda";
  if (a.has("static-inputs") && !on_gpu) throw not_supported("--static-inputs needs the GPU (a program's device buffers); this run is on the CPU engine");
  if (profile && !on_gpu) throw device_error("--profile needs the GPU: " + fallback_note);
  if (!on_gpu && asked_device == "cpu" && mode == "compiled") {
    throw not_supported("--mode compiled runs on the GPU only; the CPU engine contracts eagerly");
  }
  const int warmups = static_cast<int>(a.int_or("warmup", on_gpu ? 3 : 0, 0, 1000000));
  const int repeats = static_cast<int>(a.int_or("repeat", on_gpu ? 10 : 1, 1, 1000000));
  if (threads > 0) cpu::set_threads(threads);

  std::vector<host_tensor> given = read_inputs(src);
  const problem p = load_problem(a.positionals().front(), a, given);
  const tree_cost cost = cost_of(p.net, p.tree);
  const std::vector<host_tensor> inputs = make_inputs(p, src, std::move(given));

  run_outcome run;
  if (a.has("no-slice") && (a.has("memory-limit") || a.has("slice") || a.has("slice-range")))
    throw usage_error("--no-slice excludes --memory-limit, --slice and --slice-range");
  if (!a.has("no-slice") && wants_slicing(a, p)) {
    if (profile) throw not_supported("--profile does not record sliced runs; profile one slice's problem instead");
    if (a.has("step-profile")) throw not_supported("--step-profile does not apply to sliced runs");
    if (a.has("static-inputs")) throw not_supported("--static-inputs does not apply to sliced runs (each slice gathers its inputs)");
#ifdef TNRT_HAVE_CUDA
    run = run_sliced(p, inputs, a, gpu_opt, on_gpu, warmups, repeats);
#else
    run = run_sliced(p, inputs, a, options{}, on_gpu, warmups, repeats);
#endif
  } else
#ifdef TNRT_HAVE_CUDA
  if (on_gpu) {
    run = run_gpu(p, inputs, gpu_opt, warmups, repeats, profile, a.value_or("step-profile", ""), a.has("static-inputs"));
  } else {
    run = run_cpu(p, inputs, warmups, repeats);
  }
#else
  run = run_cpu(p, inputs, warmups, repeats);
#endif
  if (run.rank != 0) {  // --distributed: rank 0 reports; the others say one line each (none with --quiet)
    if (!quiet) std::printf("%s\n", run.rank_line.c_str());
    std::fflush(stdout);
    return 0;
  }
  const timing t = summarize_times(run.times_ms);
  const result_summary res = summarize(run.result);

  verification ver;
  if (verify && on_gpu) {
    progress_bar bar;
    const host_tensor ref =
        cpu::contract(p, inputs, [&bar](std::size_t d, std::size_t n) { bar.update("verify", d, n); });
    bar.clear();
    ver = compare(run.result, ref);
  } else if (verify) {
    ver.reason = "the result came from the CPU engine, which is the reference";
  } else {
    ver.reason = "--verify not given";
  }

  const double rw_bytes = cost.rw_bytes(p.type);
  const double floor_ms = rw_bytes / (bandwidth_gbps * 1e9) * 1e3;

  // ---- stdout
  const std::string value_text = res.scalar ? format_scalar(res.value, p.type) : std::string{};
  char norm_text[64];
  std::snprintf(norm_text, sizeof norm_text, is_double(p.type) ? "%.17g" : "%.9g", res.norm);
  if (quiet) {
    if (res.scalar) {
      std::printf("%s\n", value_text.c_str());
    } else {
      std::printf("shape %s norm %s\n", shape_text(run.result.shape()).c_str(), norm_text);
    }
  } else {
    std::printf("problem: %s (%zu inputs, %zu steps, %s)\n", p.source.c_str(), p.net.inputs.size(), cost.steps,
                std::string(name_of(p.type)).c_str());
    if (res.scalar) {
      std::printf("result: %s\n", value_text.c_str());
    } else {
      std::printf("result: tensor of shape %s, norm %s%s\n", shape_text(run.result.shape()).c_str(), norm_text,
                  a.has("out") ? "" : " (use --out FILE.npy to save it)");
    }
    std::printf("time: median %.3f ms, min %.3f ms, max %.3f ms over %zu runs (%d warm-ups) on %s, %s%s\n", t.median,
                t.min, t.max, t.times_ms.size(), warmups, run.device.c_str(), run.mode.c_str(),
                profile ? " (profiled: CUPTI overhead included, not a speed figure)" : "");
    std::printf("floor: %.3f ms (%s read+written at %g GB/s%s)\n", floor_ms, format_bytes(rw_bytes).c_str(),
                bandwidth_gbps, bandwidth_note(a.has("bandwidth")));
    if (!fallback_note.empty()) std::printf("device: cpu engine (%s)\n", fallback_note.c_str());
    for (const auto& line : run.gpu_lines) std::printf("%s\n", line.c_str());
    if (ver.status != "not_run") {
      std::printf("verify: %s (%s error %.3g, tolerance %.3g, against the CPU engine)\n", ver.status.c_str(),
                  ver.measure.c_str(), ver.error, ver.tolerance);
    } else if (verify) {
      std::printf("verify: not run (%s)\n", ver.reason.c_str());
    }
  }
  std::fflush(stdout);

  // ---- machine-readable report: written on verification failure too, so the harness records it.
  if (const auto json_path = a.value("json")) {
    nlohmann::json j;
    j["tool"] = "tnrt";
    j["status"] = ver.status == "failed" ? "verification_failed" : "ok";
    j["version"] = std::string(version);
    j["problem"] = {{"source", p.source},        {"inputs", p.net.inputs.size()}, {"labels", p.net.label_count()},
                    {"steps", cost.steps},       {"log2_tc", cost.log2_tc},       {"log2_sc", cost.log2_sc},
                    {"log2_rwc", cost.log2_rwc}, {"flops", cost.flops},           {"rw_bytes", rw_bytes}};
    j["dtype"] = std::string(name_of(p.type));
    j["device"] = run.device;
    if (!fallback_note.empty()) j["device_note"] = fallback_note;
    j["mode"] = run.mode;
    if (src.kind == "npy") {
      j["data"] = {{"kind", "npy"}, {"files", src.files}};
    } else if (src.kind == "random") {
      j["data"] = {{"kind", "random"}, {"seed", src.seed}, {"lo", src.fill * 0.9}, {"hi", src.fill * 1.1}};
    } else {
      j["data"] = {{"kind", "fill"}, {"value", src.fill}};
    }
    j["warmups"] = warmups;
    j["repeats"] = repeats;
    j["profiled"] = profile;  // times taken under CUPTI: not speed figures
    j["times_ms"] = t.times_ms;
    j["median_ms"] = t.median;
    j["min_ms"] = t.min;
    j["max_ms"] = t.max;
    j["bandwidth_gbps"] = bandwidth_gbps;
    j["bandwidth_assumed"] = !a.has("bandwidth");  // the H200's default, not this GPU's
    j["floor_ms"] = floor_ms;
    nlohmann::json result = {{"shape", run.result.shape()},
                             {"norm", res.norm},
                             {"finite", res.finite},
                             {"sum", {res.sum.real(), res.sum.imag()}}};
    if (res.scalar) {
      result["scalar"] = is_complex(p.type) ? nlohmann::json{{"re", res.value.real()}, {"im", res.value.imag()}}
                                            : nlohmann::json(res.value.real());
      result["text"] = value_text;
    }
    j["result"] = result;
    j["verification"] = {{"status", ver.status}};
    if (ver.status != "not_run") {
      j["verification"]["reference"] = "cpu";
      j["verification"]["measure"] = ver.measure;
      j["verification"]["error"] = ver.error;
      j["verification"]["tolerance"] = ver.tolerance;
    } else {
      j["verification"]["reason"] = ver.reason;
    }
    if (!run.gpu.is_null()) {
      for (auto it = run.gpu.begin(); it != run.gpu.end(); ++it) j[it.key()] = it.value();
    }
    if (threads > 0) j["threads"] = threads;
    j["versions"]["tnrt"] = std::string(version);
    j["versions"]["compiler"] = std::string(__VERSION__);
    write_file_atomically(*json_path, j.dump(2) + "\n");
  }

  if (ver.status == "failed") {
    char msg[256];
    std::snprintf(msg, sizeof msg, "the GPU result differs from the CPU engine's (%s error %.3g > tolerance %.3g)%s",
                  ver.measure.c_str(), ver.error, ver.tolerance, a.has("out") ? "; --out not written" : "");
    throw verification_error(msg);
  }
  if (const auto out_path = a.value("out")) write_npy(*out_path, run.result);
  return 0;
}

}  // namespace tnrt::cli
