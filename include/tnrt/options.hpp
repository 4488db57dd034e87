#pragma once
// How a tnrt context runs contractions, and the counters it reports. Shared by the library API
// (tnrt/context.hpp), the benchmark runner and the command-line tool.
#include <cstddef>
#include <cstdint>

#include "tnrt/device/caching_pool.hpp"
#include "tnrt/device/retirement_queue.hpp"
#include "tnrt/device/shared_workspace.hpp"
#include "tnrt/network.hpp"

namespace tnrt {

/// The device a context runs on: a CUDA ordinal (0, 1, ...) or the CPU reference engine.
inline constexpr int cpu_device = -1;

enum class exec_mode : std::uint8_t { eager, compiled };

/// Where one of tnrt's own kernels may take a step: `never`, `always` (wherever it applies), or
/// `automatic` (compiled: timed against cuTENSOR at compile time, the faster kept; eager: by rule).
enum class kernel_choice : std::uint8_t { never, always, automatic };

/// Compute type of single-precision (f32, c64) contractions through the libraries: `full` (FP32,
/// the default), or reduced, opt-in only: `tf32` (tensor cores, 10-bit mantissa products) and
/// `tf32x3` (three TF32 products per FP32 product, nearer FP32). Double precision, reductions and
/// tnrt's own kernels always compute in full.
enum class precision : std::uint8_t { full, tf32, tf32x3 };

/// How compiled times one step alone while it chooses the step's kernel: `enqueue` (the events
/// around the enqueue as it happens, the host's launch cost in it) or `device` (the GPU's time for
/// the step, its launches held behind a spin kernel until all are enqueued, as a graph replays them).
enum class timing_method : std::uint8_t { enqueue, device };

struct options {
  /// CUDA device ordinal, or cpu_device for the CPU reference engine (host tensors only).
  int device = 0;
  /// The runner's mode (tnrt::cuda::run); the library API picks by call (contract or compile).
  exec_mode mode = exec_mode::eager;
  /// cuTENSOR plans kept (LRU; host metadata, about 4 KiB each). 512, not issue 4's 64: eager's
  /// layout learning (time_layouts) first ran a round of warm calls under all three layouts before
  /// its timed round, and at 64 entries 7 of 30 suite networks learned a layout slower than
  /// column-major by 3% or more (the trials timed plan builds); at 512 the three of them measured
  /// again kept column-major (bench/results/2026-12-03-h200-eager-learn). Each timed call now follows
  /// its own layout's warm call, and the larger cache stays for networks of many step shapes.
  /// Sweeps of the unfused reference tree: docs/results.md.
  std::size_t plan_cache_entries = 512;
  device::retire_mode retire = device::retire_mode::deferred;
  std::size_t retirement_capacity = device::retirement_queue::default_capacity;
  std::size_t workspace_cap = device::shared_workspace::default_cap;
  bool jit = false;       // cuTENSOR JIT kernels (opt-in: seconds per new kernel)
  /// Compiled, when `jit` is off: the `jit_steps` slowest library steps (each at least 20 us after the
  /// other timings) also get a cuTENSOR JIT plan, timed and kept when at least 3% faster. Each costs
  /// a JIT compile (about a second or more), so 0 (none) is the default.
  int jit_steps = 0;
  bool autotune = false;  // cuTENSOR incremental autotuning (opt-in)
  /// cuTENSOR algorithm: -1 default heuristic, -6 default_patient, -4 gett, -3 tgett, -2 ttgt.
  int algo = -1;
  bool use_graph = true;  // compiled: replay as a CUDA graph (else plain stream replay)
  /// How intermediates are laid out (src/core/step_lowering.hpp): `follow` the larger operand's
  /// memory order, column-major (the default) or row-major in the tree's label order, or `planned`
  /// (each intermediate in a mode order of its own, chosen over the whole tree so that its heavy
  /// steps are GEMMs as their operands lie: src/core/mode_orders.hpp). The result
  /// handed back is row-major unless the caller's output view says otherwise.
  layout_policy intermediate_layout = layout_policy::column_major;
  /// Compiled: build the program under each intermediate layout (intermediate_layout first, then
  /// the other three), time a few replays of each and keep the fastest (a candidate replaces the kept
  /// one when at least 3% faster; the two held at once share the memory limit, and a candidate that
  /// does not fit in what the kept one leaves is skipped). Eager calls
  /// learn it instead (src/cuda/eager.cpp): a network's first eight calls on a thread run under
  /// each layout twice, a warm call and then a call timed by events on the call's stream, and
  /// later calls take the fastest (intermediate_layout unless another is at least 3% faster; no host wait). Off:
  /// intermediate_layout alone, in both. Sliced programs always take intermediate_layout.
  bool time_layouts = true;
  /// Compiled: capture the program's graph with independent steps on separate streams (the tree's
  /// branches run at once; src/core/step_graph.hpp), its intermediates planned over the tree's
  /// levels so that steps of one level share no bytes. `automatic` (the default) builds that
  /// variant of the program whose layout won, times it against the one-chain program and keeps it
  /// when at least 3% faster; `always` takes it; `never` captures one chain. Eager and sliced
  /// programs run one chain.
  kernel_choice concurrent_branches = kernel_choice::automatic;
  /// Compiled: split-K by labels (src/core/split_sums.hpp): a step that sums a long contraction into
  /// a small result is run as a wider step that keeps some summed labels, then a reduction of its
  /// small result. `automatic` (the default) builds the program of the split tree under the winning
  /// layout and branch choice, times it against the kept one and keeps it when at least 3% faster;
  /// `always` takes it; `never` leaves the tree as it is. Eager and sliced programs run the tree as it is.
  kernel_choice split_sums = kernel_choice::automatic;
  /// See `precision`: reduced precision only when asked for.
  precision compute_precision = precision::full;
  /// Run subtrees of small steps (every operand and result at most fuse_max_elements) in one
  /// fused launch instead of one library call each.
  bool fuse_small_steps = true;
  std::int64_t fuse_max_elements = 1024;
  /// In the fused launch, a step whose operands span at most 1024 elements copies them into shared
  /// memory first (src/core/fusion.hpp). Off by default: on an H100 (2026-12-05, bench/results/
  /// 2026-12-05-h100-third) staging made the fused launch slower on 7 of 9 networks (reference 42.7
  /// -> 56.8 us, rqc-4x5 35.4 -> 46.0) and compiled slower end to end on 8 of 9 (up to 4%). true:
  /// the A/B (CLI --fuse-stage on).
  bool fuse_stage = false;
  /// In the fused launch, the steps of one level of a subtree (none reads another's result) run
  /// together between two barriers, up to small_step_group_max of them (src/core/fusion.hpp). false:
  /// one step at a time, a barrier after each (the A/B; CLI --fuse-levels off).
  bool fuse_levels = true;
  /// Large x small steps (src/core/tiled.hpp) through tnrt's tiled streaming kernel.
  kernel_choice tiled_kernel = kernel_choice::automatic;
  /// Compiled, tiled kernel timed: its plans with the coefficients in a shared-memory table
  /// (tiled_run_table) are among the alternatives timed. false: the register layouts only (the A/B;
  /// CLI --tiled-table off). Eager's rule never takes them.
  bool tiled_table = true;
  /// Compiled: a step whose result is one element (a closed network's last step) of at least
  /// full_dot_min_terms terms is also timed through tnrt's full-contraction kernel
  /// (src/core/full_dot.hpp) and runs there when 3% faster than the library (`automatic`, the
  /// default); `always`: there wherever it applies (tests); `never`: the library only.
  kernel_choice full_dot = kernel_choice::automatic;
  /// Compiled: chains of large x small steps, each consuming the one before (src/core/chain.hpp), run
  /// in one pass over memory by tnrt's chain kernel when it is 3% faster than the steps one by one
  /// (`automatic`, the default); `always`: every chain found (tests); `never`: step by step.
  kernel_choice chain_steps = kernel_choice::automatic;
  /// Compiled, with gemm_lowering `automatic`: after the layout and branches are chosen, the
  /// program is replayed as it is and with every step timing put on cuBLAS (as it lies or after
  /// copies) back on its cuTENSOR plan, and those steps go back together when that replays faster
  /// (`automatic`, the default; no margin: each step already beat cuTENSOR by 3% alone; steps
  /// gemm_copies `always` put after copies stay); `always`: they all go back untimed (tests);
  /// `never`: no check.
  kernel_choice gemm_check = kernel_choice::automatic;
  /// Compiled, last: runs of consecutive small library steps (each at most grid_step_max_outputs
  /// result elements and grid_step_max_madds multiply-adds) go into one cooperative launch each,
  /// in order, a grid-wide barrier between two steps instead of a launch (src/core/fusion.hpp,
  /// grid runs). `automatic`: these limits, a quarter and a sixteenth of them are timed on the
  /// whole program, and the fastest is kept when clearly faster than no runs; `always`: these
  /// limits, untimed (tests); `never` (the default): off. Programs whose branches run concurrently
  /// keep their launches. CLI --grid-steps auto|on|off. Off by default because on an H100 no
  /// network of the suite ran clearly faster with them (`automatic` kept none on 16 networks, 12 of
  /// them concurrent programs that never try runs; 49 steps in runs on qaoa-zz-n60 ran 2.268-2.289
  /// ms against 2.293; bench/results/2026-12-07f-h100-grid-runs): a grid-wide barrier between two
  /// dependent small steps costs about what a launch in a graph does.
  kernel_choice grid_steps = kernel_choice::never;
  std::int64_t grid_step_max_outputs = 1 << 20;
  std::int64_t grid_step_max_madds = 1 << 24;
  std::int64_t grid_step_max_sum = 512;  // summed terms of one result element (one thread's, in turn)
  /// Blocks of every grid run; 0: as many as give each thread at most one element of the run's
  /// widest step, at most one a multiprocessor (the most a cooperative launch may have is checked).
  int grid_step_blocks = 0;
  std::int64_t full_dot_min_terms = 1024;
  std::int64_t tiled_min_elements = 1 << 16;  // results smaller than this stay with cuTENSOR
  /// Plans by rule (eager): the tiled kernel only on a step of at most this many multiply-adds
  /// per element it streams, k_count x |D| / (|D| + |Big|); past that the step is compute-bound
  /// and cuTENSOR's kernels win (regular3-n160 eager: 37.5 ms with the kernel on every eligible
  /// step, 14.8 ms without). 0: no limit. Compiled programs time every candidate and ignore it.
  double tiled_max_intensity = 8.0;
  /// Compiled: time cuTENSOR's algorithms (default heuristic, GETT, TGETT, TTGT) on each library
  /// step and keep the fastest whose workspace fits the step's place in the arena (`automatic`, the
  /// default); `never`: the one `algo` says.
  kernel_choice library_algos = kernel_choice::automatic;
  /// Compiled: how each step is timed alone while its kernel, cuTENSOR algorithm, cuBLAS form and
  /// tiled plan are chosen (src/cuda/step_timer.hpp). `enqueue` (the default): events around the
  /// enqueue as it happens, so a step's time holds its library's host cost; a step of a few
  /// microseconds measures mostly that. `device` (opt-in): the GPU's time, the step's launches held
  /// behind a spin kernel until all are enqueued, as the program's graph runs them. Measured on the
  /// suite (H100, 2026-12-07, bench/results/2026-12-07e-h100-step-timing): `device` ran 0.995x
  /// `enqueue`'s replay times in geometric mean over 38 networks (within a compile's spread) and
  /// took 1.46x its compile time (up to 2.97x: the spin, once doubled for a slow enqueue, stays
  /// long), so it is not the default. Whole programs are timed by replay either way. CLI
  /// --step-timing.
  timing_method step_timing = timing_method::enqueue;
  /// Compiled, with library_algos automatic: on a library step still at least kernel_rank_min_ms
  /// after those timings, each algorithm's next `kernel_ranks` kernels by cuTENSOR's own ranking
  /// (CUTENSOR_PLAN_PREFERENCE_KERNEL_RANK 1..kernel_ranks) are timed too, and one is kept when at
  /// least 3% faster. Why it was tried: on hyper-n100 cuTensorNet (autotuned, same path, the same
  /// cuTENSOR) spent 5.1 ms in kernels where tnrt's steps took 7.1 ms, its heaviest kernel a GETT
  /// variant (bench/results/2026-12-03-h200-kprof). Why it is opt-in (0, none, by default): on 12
  /// suite networks 3 ranks moved compiled by -1% to +3% (hyper-n100 7.12 -> 7.05 ms, chain-n12 0.326
  /// -> 0.335) and 8 ranks by -3% to +9% (lattice-5x5 0.900 -> 0.982): a step timed alone does
  /// not rank kernels as the whole graph runs them (bench/results/2026-12-03-h200-kranks).
  int kernel_ranks = 0;
  double kernel_rank_min_ms = 0.05;
  /// Compiled: a library step that is one (strided-batched) GEMM by strides alone
  /// (src/core/gemm_lowering.hpp) is also timed through cuBLAS (full precision, TF32 never on) and
  /// runs there when that is faster (`automatic`, the default); `always`: through cuBLAS wherever it
  /// is one GEMM (tests); `never`: cuTENSOR only. Without cuBLAS on the machine, cuTENSOR only.
  /// Eager calls take the same option and gemm_copies (src/core/gemm_route.hpp): under `automatic`
  /// a network learns, once its layout is settled, which steps of 2^20 multiply-adds or more run
  /// faster through cuBLAS (as they lie, or after copies where gemm_copies allows), over five calls,
  /// and keeps them when the whole call is faster too; under `always` they run there untimed.
  kernel_choice gemm_lowering = kernel_choice::automatic;
  /// Compiled, with gemm_lowering automatic and cuBLASLt beside cuBLAS: on a step that is one GEMM
  /// and still at least gemm_algo_min_ms after the timings above, the first `gemm_algos` algorithms
  /// of cuBLASLt's heuristic for its form (those its workspace and operands' alignment allow) are
  /// timed too, and one is kept when at least 3% faster than what the step runs. 0: none.
  int gemm_algos = 8;
  double gemm_algo_min_ms = 0.05;
  /// Tests: with gemm_lowering `always`, every GEMM step runs cuBLASLt's heuristic algorithm of this
  /// rank (its last when it offers fewer), untimed; -1 (the default): cuBLAS's own choice there.
  int gemm_algo_rank = -1;
  /// Compiled, with cuBLAS there and gemm_lowering not `never`: a library step that is no GEMM as it
  /// lies, of at least 8 multiply-adds per element its copies move and 50 us, is also timed as one
  /// GEMM after copying the operands that keep it from the form (lower_to_gemm_with_copies:
  /// cuTENSOR permutations into a scratch buffer, cuBLAS, then D's copy into place), and runs that
  /// way when 3% faster (`automatic`, the default). One scratch buffer holds the largest chosen
  /// step's copies; a step is tried only when its copies take at most the arena and fit
  /// the memory limit. `always`: that way wherever such a form exists and fits (tests); `never`: not
  /// tried.
  kernel_choice gemm_copies = kernel_choice::automatic;
  /// Compiled: the workspace each GEMM step of at least 2^22 multiply-adds gets when cuBLAS may run
  /// it, in place of the cuTENSOR plan's (most often none). A workspace lives at its step only, in
  /// the arena; when these workspaces would push the program over its memory limit, each step keeps
  /// its plan's. 0 (the default): the plan's. 32 MiB is what cuBLAS's documentation recommends on
  /// Hopper, but on the H200 suite it gained nothing (geometric mean 0.994x over 25 networks; chain-n8
  /// 1.16 against 1.13 ms in four runs; bench/results/2026-12-03-h200-suite-ab), so it is opt-in.
  std::size_t gemm_workspace_bytes = 0;
  /// The device memory a compiled or sliced program may hold (arena, workspaces, its copies of the
  /// inputs, scratch, and a sliced program's table and result): memory_limit_bytes when not 0, else
  /// memory_limit_fraction of the free device memory (plus what the pool caches) at compile time,
  /// as cuTensorNet's default of 80%. Never more than is free. Compile refuses a program over it
  /// before allocating (out_of_memory); a sliced program slices until one slice fits it.
  std::size_t memory_limit_bytes = 0;
  double memory_limit_fraction = 0.8;
};

struct plan_cache_stats {
  std::size_t entries = 0, capacity = 0;
  std::uint64_t hits = 0, misses = 0, evictions = 0, clears = 0;
  std::size_t retained_bytes = 0;  // plan metadata estimate; never includes workspace
};

/// Host-side synchronizations the backend itself made (the device layer counts its own).
struct sync_stats {
  std::uint64_t stream_syncs = 0;
  std::uint64_t device_syncs = 0;
  std::uint64_t event_syncs = 0;
};

/// What the library API itself did (context::stats): calls, and the eager analysis memo.
struct api_stats {
  std::uint64_t eager_calls = 0;
  std::uint64_t program_runs = 0;
  std::uint64_t programs_compiled = 0;
  std::uint64_t analysis_hits = 0;    // eager calls that reused the structural analysis
  std::uint64_t analysis_misses = 0;  // eager calls that built it (a new structure)
  std::uint64_t eager_layout_trials = 0;    // eager calls timed to learn their network's layout (options::time_layouts)
  std::uint64_t eager_layouts_column = 0;   // networks whose eager layout was learned: column-major,
  std::uint64_t eager_layouts_row = 0;      // row-major,
  std::uint64_t eager_layouts_follow = 0;   // follow,
  std::uint64_t eager_layouts_planned = 0;  // planned (each intermediate's mode order its own)
  std::uint64_t eager_route_trials = 0;     // eager calls timed (step by step, then whole) to learn which steps run through cuBLAS
  std::uint64_t eager_route_steps = 0;      // steps that kept the route (cuBLAS, or took it untimed under `always`; cuTENSOR for a tiled step), over the networks decided
  std::uint64_t eager_route_tiled = 0;      // of those, tiled steps that run on cuTENSOR instead of the tiled kernel
  /// What the route's decisions saw, summed over the networks decided (the check's inputs, so a
  /// dropped route says why): steps the step timing picked, their timed saving (library less
  /// cuBLAS, microseconds), and the whole-call check's two calls (without and with the picked steps).
  std::uint64_t eager_route_picked = 0;
  std::uint64_t eager_route_saving_us = 0;
  std::uint64_t eager_route_check_library_us = 0;
  std::uint64_t eager_route_check_route_us = 0;
  std::uint64_t bridged_calls = 0;  // calls on a caller's stream run on the context's own, bridged by two events (eager calls; program runs without an io graph)
  /// Networks whose eager layout was learned, whichever it was.
  [[nodiscard]] std::uint64_t eager_layouts_learned() const noexcept {
    return eager_layouts_column + eager_layouts_row + eager_layouts_follow + eager_layouts_planned;
  }
};

struct counters {
  plan_cache_stats plan_cache;
  device::workspace_stats workspace;
  device::retirement_stats retirement;
  device::pool_stats pool;
  sync_stats syncs;
  api_stats api;
};

}  // namespace tnrt
