#include "cuda/compiled.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>

#include "core/split_sums.hpp"
#include "core/step_graph.hpp"
#include "cuda/chain.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/eager.hpp"
#include "cuda/full_dot.hpp"
#include "cuda/small_steps.hpp"
#include "cuda/step_timer.hpp"
#include "cuda/tiled.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {
namespace {
constexpr std::size_t arena_alignment = 256;
std::string gib(std::size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", static_cast<double>(b) / static_cast<double>(1ULL << 30));
  return s;
}
std::size_t aligned(std::size_t bytes) { return (bytes + arena_alignment - 1) / arena_alignment * arena_alignment; }

// The alignment of every batch's operands of a GEMM form at a, b and d: engine::alignment_of over
// the pointers, lowered by the batch strides in bytes when batched.
std::uint32_t gemm_alignment(const gemm_form& g, dtype t, const void* a, const void* b, const void* d) {
  std::uintptr_t bits = engine::alignment_of(a, b, d);
  if (g.batch > 1)
    for (const std::int64_t s : {g.stride_x, g.stride_y, g.stride_c}) bits |= static_cast<std::uintptr_t>(s) * size_of(t);
  return static_cast<std::uint32_t>(bits & (~bits + 1));  // the lowest set bit
}
}  // namespace

compiled_program::compiled_program(engine& eng, const problem& p, std::size_t reserve_bytes, std::size_t limit_bytes,
                                   const layout_policy* layout_override, bool concurrent)
    : eng_(&eng), opt_(eng.opts()), concurrent_(concurrent), type_(p.type), last_stream_(eng.stream()) {
  if (layout_override != nullptr) opt_.intermediate_layout = *layout_override;
  const auto t0 = std::chrono::steady_clock::now();
  cudaEvent_t ev = nullptr;
  TNRT_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  switch_event_.reset(ev);
  step_choices choices = choose_steps(p);
  // cuBLAS gets its recommended workspace on the GEMM steps it is timed on, unless those
  // workspaces alone would push the program over its memory limit (then each gets the cuTENSOR
  // plan's, as before).
  // Over the memory limit, the chains go first: a chain's first operand and small tensors live until
  // its last step (where the chain kernel runs), so without them the program runs step by step.
  // Then cuBLAS's workspaces.
  layout lay = plan_buffers(p, choices, true);
  if (!chains_.empty() && !fits(reserve_bytes, limit_bytes)) {
    chains_.clear();
    lay = plan_buffers(p, choices, true);
  }
  if (gemm_workspaces_ > 0 && !fits(reserve_bytes, limit_bytes)) lay = plan_buffers(p, choices, false);
  admit(reserve_bytes, limit_bytes);
  allocate();
  build_ops(p, choices, lay);
  critical_ops_ = static_cast<int>(ops_.size());  // one chain, until plan_lanes says otherwise
  if (tiled_choice_automatic_ || opt_.library_algos == kernel_choice::automatic || (gemm_candidates_ > 0 && opt_.gemm_lowering == kernel_choice::automatic) ||
      (opt_.jit_steps > 0 && !opt_.jit) || copies_choice() != kernel_choice::never ||
      (!dot_steps_.empty() && opt_.full_dot == kernel_choice::automatic))
    choose_kernels_by_timing(p, choices, reserve_bytes, limit_bytes);
  place_copies();
  choose_chains();
  if (opt_.use_graph) capture();
  compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

compiled_program::compiled_program(engine& eng, const problem& p, plan_only)
    : eng_(&eng), opt_(eng.opts()), type_(p.type), last_stream_(eng.stream()) {
  const step_choices choices = choose_steps(p);
  (void)plan_buffers(p, choices, false);
}

compiled_program::~compiled_program() = default;

namespace {
grid_step_limits grid_limits_of(const options& o) {
  grid_step_limits l;
  l.max_outputs = o.grid_step_max_outputs;
  l.max_madds = o.grid_step_max_madds;
  l.max_sum = o.grid_step_max_sum;
  return l;
}

// The fastest of four runs of `enqueue` after one warm-up run (which loads modules and warms caches):
// how compile time times one step, or one chain against its steps.
template <class F>
float fastest_run(step_timer& timer, cudaStream_t st, F&& enqueue) {
  float best = 1e30F;
  for (int rep = 0; rep < 5; ++rep) {
    const float t = timer.ms(st, enqueue, rep == 0);
    if (rep > 0) best = std::min(best, t);
  }
  return best;
}

// Five replays after two warm-ups: their median, fastest and slowest (core/replay_choice.hpp).
replay_times time_replays(compiled_program& prog, cudaStream_t st) {
  step_timer timer(false);  // a replay as a caller pays it: the graph launch's host cost too
  std::vector<float> ms;
  for (int rep = 0; rep < 7; ++rep) {
    const float t = timer.ms(st, [&] { prog.run(st); });
    if (rep >= 2) ms.push_back(t);
  }
  return summarize_replays(std::move(ms));
}
}  // namespace

// Each layout gives other lowered forms, kernels and memory plans (row-major intermediates suit
// MPS/MPO chains and batched einsums, column-major the reference tree): measured, not guessed.
// The inputs' contents do not matter to the speed; the buffers are the program's own.
// The tree as it is (build_tree), and where split_long_sums changes it, the split tree's program
// under the same layout and branch choice, timed against it (options::split_sums).
std::unique_ptr<compiled_program> compiled_program::build(engine& eng, const problem& p) {
  std::unique_ptr<compiled_program> prog = build_chosen(eng, p);
  if (eng.opts().grid_steps != kernel_choice::never) {
    const auto t0 = std::chrono::steady_clock::now();
    prog->check_grid_runs();
    prog->compile_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return prog;
}

std::unique_ptr<compiled_program> compiled_program::build_chosen(engine& eng, const problem& p) {
  const kernel_choice split = eng.opts().split_sums;
  std::optional<split_sums_result> r;
  if (split != kernel_choice::never && !p.tree.steps.empty()) r = split_long_sums(p.net, p.tree);
  if (!r) return build_tree(eng, p);
  problem q = p;
  q.tree = r->tree;
  if (split == kernel_choice::always) {
    std::unique_ptr<compiled_program> prog = build_tree(eng, q);
    prog->take_split(*r);
    return prog;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const limit_rule limit_beside = limit_rule_of(eng);  // before the kept program takes its memory
  replay_times best_t;
  best_t.median = -1;
  std::unique_ptr<compiled_program> best = build_tree(eng, p, &best_t);
  if (best_t.median < 0) best_t = time_replays(*best, eng.stream());
  const auto cand_limit = limit_beside(*best);
  if (!cand_limit) return best;
  const layout_policy kept_layout = best->intermediate_layout();
  std::unique_ptr<compiled_program> cand;
  try {
    cand = std::make_unique<compiled_program>(eng, q, 0, *cand_limit, &kept_layout, best->concurrent());
  } catch (const out_of_memory&) {
    return best;  // the split program does not fit beside the kept one
  }
  const replay_times t = time_replays(*cand, eng.stream());
  best->split_times_ = {best_t.median, t.median};
  if (clearly_faster(t, best_t)) {
    cand->take_split(*r);
    cand->split_times_ = best->split_times_;
    cand->layout_times_ = std::move(best->layout_times_);
    cand->chain_ms_ = best->chain_ms_;
    cand->concurrent_ms_ = best->concurrent_ms_;
    best = std::move(cand);
  }
  best->compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();  // both programs'
  return best;
}

// Both programs held at once stay under the memory limit together: a candidate gets what the kept
// one leaves of the limit, which is read once, before either is built (0: the options' limit, when
// the device cannot say what is free; none: nothing is left).
compiled_program::limit_rule compiled_program::limit_rule_of(engine& eng) {
  std::size_t limit = 0, available = 0;
  const bool limit_known = memory_budget(eng, &limit, &available);
  return [limit_known, limit](const compiled_program& kept) -> std::optional<std::size_t> {
    if (!limit_known) return std::size_t{0};
    if (kept.device_bytes() >= limit) return std::nullopt;
    return limit - kept.device_bytes();
  };
}

void compiled_program::take_split(const split_sums_result& r) {
  for (int& s : op_steps_)
    if (s >= 0) s = r.origin[static_cast<std::size_t>(s)];
  split_steps_ = r.split;
}

std::unique_ptr<compiled_program> compiled_program::build_tree(engine& eng, const problem& p, replay_times* kept) {
  const kernel_choice branches = p.tree.steps.size() < 2 ? kernel_choice::never : eng.opts().concurrent_branches;
  if (!eng.opts().time_layouts || p.tree.steps.size() < 2) {
    if (branches == kernel_choice::never) return std::make_unique<compiled_program>(eng, p);
    if (branches == kernel_choice::always) return std::make_unique<compiled_program>(eng, p, 0, 0, nullptr, true);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const limit_rule limit_beside = limit_rule_of(eng);
  std::unique_ptr<compiled_program> best;
  std::vector<std::pair<layout_policy, float>> times;
  replay_times best_t;
  if (!eng.opts().time_layouts) {
    best = std::make_unique<compiled_program>(eng, p);
    best_t = time_replays(*best, eng.stream());
  } else {
    best = build_timed_layouts(eng, p, limit_beside, times, best_t);
  }
  // The tree's branches at once: the same layout, intermediates planned over levels, timed.
  if (branches != kernel_choice::never) {
    const layout_policy kept_layout = best->intermediate_layout();
    std::unique_ptr<compiled_program> cand;
    if (const auto cand_limit = limit_beside(*best)) {
      try {
        cand = std::make_unique<compiled_program>(eng, p, 0, *cand_limit, &kept_layout, true);
      } catch (const out_of_memory&) {
        cand.reset();  // its level plan does not fit beside the kept one: one chain stays
      }
    }
    if (cand) {
      const replay_times t = time_replays(*cand, eng.stream());
      const float chain_ms = best_t.median;
      if (branches == kernel_choice::always || clearly_faster(t, best_t)) {
        best = std::move(cand);
        best_t = t;
      }
      best->chain_ms_ = chain_ms;
      best->concurrent_ms_ = t.median;
    }
  }
  // Last, the cuBLAS steps (as they lie and after copies) against cuTENSOR in the whole program: a
  // step timed alone can lose in the program (chain-n12: step 8 through cuBLAS took 42.7 us in the
  // program against 28.8 us on cuTENSOR, the whole call 0.316 against 0.305 ms with --gemm off;
  // mpo-rand-L24, GEMMs after copies, 0.322 against 0.301; H100, bench/results/2026-12-06d-h100-chain-n12).
  if (eng.opts().gemm_lowering == kernel_choice::automatic && eng.opts().gemm_check != kernel_choice::never) best->check_gemm_choices(best_t);
  best->layout_times_ = std::move(times);
  best->compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();  // every candidate's
  if (kept != nullptr) *kept = best_t;
  return best;
}

void compiled_program::check_gemm_choices(replay_times& kept) {
  const cudaStream_t st = eng_->stream();
  // Steps on cuBLAS as they lie, and after copies (those gemm_copies `always` put there stay,
  // unless the check itself is `always`).
  const bool check_copies = opt_.gemm_copies == kernel_choice::automatic || opt_.gemm_check == kernel_choice::always;
  std::vector<op*> gemms, copied;
  for (op& o : ops_) {
    if (!o.plan) continue;
    if (o.use_gemm) gemms.push_back(&o);
    if (o.use_copies && check_copies) copied.push_back(&o);
  }
  if (gemms.empty() && copied.empty()) return;
  auto set = [&](bool on) {
    for (op* o : gemms) o->use_gemm = on;
    for (op* o : copied) o->use_copies = on;
    recapture();
  };
  // `always` (tests) takes every one back whatever the times: only the kept program is timed.
  const bool always = opt_.gemm_check == kernel_choice::always;
  const replay_times with = always ? replay_times{} : time_replays(*this, st);  // timed again beside the other, alike
  set(false);
  const replay_times without = time_replays(*this, st);
  // No margin here: each step already beat cuTENSOR by 3% timed alone, and the two programs are
  // timed alike, back to back; chain-n12's replays differed by 2.7% (0.302 against 0.294 ms, H100),
  // under the 3% the check first asked for, so its slower cuBLAS steps stayed.
  if (always || without.median < with.median) {
    kept = without;
    gemm_dropped_ = static_cast<int>(gemms.size() + copied.size());
    // The graph already runs them on cuTENSOR (set(false)); what they held for cuBLAS goes.
    for (op* o : gemms) o->drop_gemm();
    for (op* o : copied) o->drop_copies();
    if (!copied.empty()) {  // no step runs as copies now: their scratch goes back
      copies_.reset();
      copies_bytes_ = 0;
    }
    return;
  }
  set(true);
  kept = with;
}

void compiled_program::recapture() {
  if (!opt_.use_graph) return;  // replays on the stream read the ops as they are
  io_exec_.reset();
  io_graph_.reset();
  exec_.reset();
  graph_.reset();
  capture();
}

// Last (build): runs of consecutive small library steps (grid_rec, on their cuTENSOR plan) as one
// cooperative launch each. Three sizes of step are tried: the options' limits, and a quarter and a
// sixteenth of them (outputs and multiply-adds alike), since a larger step may run slower on the
// grid kernel than on cuTENSOR while its launch costs the same; the fastest program is kept when
// it replays clearly faster than the one without runs (`automatic`), the options' limits untimed
// under `always`. Programs on concurrent lanes or without a graph keep their launches.
void compiled_program::check_grid_runs() {
  if (concurrent_ || !opt_.use_graph || exec_ == nullptr) return;
  grid_blocks_ = grid_steps_blocks(&grid_blocks_resident_);
  if (grid_blocks_ <= 0) return;
  const grid_step_limits widest = grid_limits_of(opt_);
  const bool always = opt_.grid_steps == kernel_choice::always;
  const cudaStream_t st = eng_->stream();
  const auto runs_at = [&](int scale) {  // the options' limits over 4^scale
    grid_step_limits l = widest;
    l.max_outputs = std::max<std::int64_t>(1, widest.max_outputs >> (2 * scale));
    l.max_madds = std::max<std::int64_t>(1, widest.max_madds >> (2 * scale));
    return grid_runs_under(l);
  };
  // Runs under smaller limits are subsets of those under the options' own: none there, none at all,
  // and the program need not be timed without them.
  if (runs_at(0).empty()) return;
  const replay_times without = always ? replay_times{} : time_replays(*this, st);
  replay_times best{};
  int best_scale = -1;
  std::vector<std::pair<int, int>> last_runs;
  for (int scale = 0; scale < (always ? 1 : 3); ++scale) {
    std::vector<std::pair<int, int>> runs = runs_at(scale);
    if (runs.empty() || runs == last_runs) continue;  // nothing to run, or what was timed already
    last_runs = runs;
    if (!apply_grid_runs(runs)) continue;
    if (always) return;
    const replay_times with = time_replays(*this, st);
    if (best_scale < 0 || with.median < best.median) {
      best = with;
      best_scale = scale;
    }
  }
  drop_grid_runs();
  if (best_scale < 0 || !clearly_faster(best, without)) {
    recapture();
    return;
  }
  (void)apply_grid_runs(runs_at(best_scale));  // what was timed (not empty); captured again, with or without them
}

std::vector<std::pair<int, int>> compiled_program::grid_runs_under(const grid_step_limits& limits) const {
  std::vector<char> fits(ops_.size(), 0);
  for (std::size_t j = 0; j < ops_.size(); ++j) {
    const op& o = ops_[j];
    fits[j] = o.grid_rec && grid_step_fits(*o.grid_rec, limits) && o.plan && !o.tiled && !o.use_gemm && !o.use_copies && !o.use_dot &&
                      o.fused_records == nullptr
                  ? 1
                  : 0;
  }
  return plan_grid_runs(fits, limits.min_run);
}

// The runs' records into grid_table_, the ops marked, the graph captured again with them. False
// (the program as it was, captured again) when the cooperative launch does not capture.
bool compiled_program::apply_grid_runs(const std::vector<std::pair<int, int>>& runs) {
  drop_grid_runs();
  if (runs.empty()) return false;
  std::vector<small_step_record> records;
  for (const auto& [begin, end] : runs)
    for (int j = begin; j < end; ++j) {
      const op& o = ops_[static_cast<std::size_t>(j)];
      small_step_record r = *o.grid_rec;
      r.a = o.a;  // the op's pointers as they are now
      r.b = r.b != nullptr ? o.b : nullptr;
      r.d = o.d;
      records.push_back(r);
    }
  grid_table_bytes_ = records.size() * sizeof(small_step_record);
  grid_table_ = device::pool_block(eng_->pool(), grid_table_bytes_, eng_->stream_handle());
  TNRT_CUDA(cudaMemcpyAsync(grid_table_.get(), records.data(), grid_table_bytes_, cudaMemcpyHostToDevice, eng_->stream()));
  TNRT_CUDA(cudaStreamSynchronize(eng_->stream()));  // compile time: the host vector dies here
  const auto* table = static_cast<const small_step_record*>(grid_table_.get());
  std::size_t at = 0;
  grid_runs_ = static_cast<int>(runs.size());
  grid_steps_ = 0;
  grid_reads_inputs_ = false;
  for (const auto& [begin, end] : runs) {
    op& first = ops_[static_cast<std::size_t>(begin)];
    first.grid_count = end - begin;
    first.grid_records = table + at;
    at += static_cast<std::size_t>(end - begin);
    grid_steps_ += end - begin;
    // As many blocks as give each thread at most one result element of the run's largest step: a
    // run of small steps meets at a barrier of few blocks.
    std::int64_t widest = 1;
    for (int j = begin; j < end; ++j) widest = std::max<std::int64_t>(widest, ops_[static_cast<std::size_t>(j)].grid_rec->out_count);
    first.grid_blocks = static_cast<int>(std::min<std::int64_t>(grid_blocks_, (widest + grid_steps_threads - 1) / grid_steps_threads));
    if (opt_.grid_step_blocks > 0) first.grid_blocks = std::min(opt_.grid_step_blocks, grid_blocks_resident_);
    for (int j = begin; j < end; ++j) {
      op& o = ops_[static_cast<std::size_t>(j)];
      o.grid_member = j > begin;
      for (const void* in : inputs_)
        if (o.a == in || (o.b != nullptr && o.b == in)) grid_reads_inputs_ = true;
    }
  }
  try {
    recapture();
  } catch (const error&) {
    (void)cudaGetLastError();
    exec_.reset();
  }
  if (exec_ != nullptr) return true;
  drop_grid_runs();  // the cooperative launch did not capture: the program as it was
  graph_note_.clear();
  recapture();
  return false;
}

void compiled_program::drop_grid_runs() {
  for (op& o : ops_) {
    o.grid_count = 0;
    o.grid_records = nullptr;
    o.grid_blocks = 0;
    o.grid_member = false;
  }
  grid_table_.reset();
  grid_table_bytes_ = 0;
  grid_runs_ = grid_steps_ = 0;
  grid_reads_inputs_ = false;
}

std::unique_ptr<compiled_program> compiled_program::build_timed_layouts(engine& eng, const problem& p, const limit_rule& limit_beside,
                                                                        std::vector<std::pair<layout_policy, float>>& times, replay_times& best_t) {
  const layout_policy first = eng.opts().intermediate_layout;
  std::vector<layout_policy> order{first};
  for (layout_policy l : all_layouts)
    if (l != first) order.push_back(l);
  std::unique_ptr<compiled_program> best = std::make_unique<compiled_program>(eng, p, 0, 0, &order[0]);
  best_t = time_replays(*best, eng.stream());
  times = {{order[0], best_t.median}};
  for (std::size_t i = 1; i < order.size(); ++i) {
    const auto cand_limit = limit_beside(*best);
    if (!cand_limit) break;
    std::unique_ptr<compiled_program> cand;
    try {
      cand = std::make_unique<compiled_program>(eng, p, 0, *cand_limit, &order[i]);
    } catch (const out_of_memory&) {
      continue;  // does not fit beside the kept one
    }
    const replay_times t = time_replays(*cand, eng.stream());
    times.emplace_back(order[i], t.median);
    if (clearly_faster(t, best_t)) {
      best_t = t;
      best = std::move(cand);
    }
  }
  return best;
}

std::size_t compiled_program::predict_bytes(engine& eng, const problem& p) {
  const compiled_program plan(eng, p, plan_only{});
  return plan.device_bytes();
}

bool compiled_program::memory_budget(engine& eng, std::size_t* limit_bytes, std::size_t* available_bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (eng.runtime().memory_info(&free_bytes, &total_bytes) != device::status::ok) return false;
  const std::size_t available = free_bytes + eng.pool().stats().bytes_cached;
  const options& o = eng.opts();
  const std::size_t limit = o.memory_limit_bytes != 0 ? o.memory_limit_bytes
                                                      : static_cast<std::size_t>(o.memory_limit_fraction * static_cast<double>(available));
  *limit_bytes = std::min(limit, available);
  *available_bytes = available;
  return true;
}

// 1. The step plan (core/step_plan.hpp: layouts, lowered forms, the fusion plan, each step's
//    kernel), and the cuTENSOR plans of the library steps and of the tiled candidates `automatic`
//    times against them (choose_kernels_by_timing).
compiled_program::step_choices compiled_program::choose_steps(const problem& p) {
  refuse_tensors_beyond_device(*eng_, p);
  const std::size_t steps = p.tree.steps.size();
  step_choices c;
  options rule = opt_;
  rule.tiled_max_intensity = 0;  // every tiled candidate: timing decides, not the eager rule
  c.plan = plan_steps(p, rule);
  fusion_ = c.plan.fusion;
  tiled_choice_automatic_ = opt_.tiled_kernel == kernel_choice::automatic;
  plans_.assign(steps, nullptr);
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    if (c.plan.kernel[k] == step_kernel::tiled && !tiled_choice_automatic_) continue;  // `always`: no plan needed
    plans_[k] = eng_->plan(c.plan.lowered[k], p.type);
    workspace_bytes_ = std::max<std::size_t>(workspace_bytes_, plans_[k]->workspace_bytes());
  }
  chains_.clear();
  if (opt_.chain_steps != kernel_choice::never) {
    std::vector<std::uint8_t> eligible(steps, 0);
    for (int kk : fusion_.library_steps) {
      const auto k = static_cast<std::size_t>(kk);
      eligible[k] = c.plan.kernel[k] == step_kernel::library || c.plan.kernel[k] == step_kernel::tiled ? 1 : 0;
    }
    chains_ = plan_chains(p, c.plan.strides, eligible, size_of(p.type));
  }
  return c;
}

// Whether a library step may run through cuBLAS (timed, or `always`): one GEMM by strides, cuBLAS
// present, and no 3xTF32 asked for (cuBLAS has no twin of it).
std::optional<gemm_form> compiled_program::gemm_candidate(const lowered_step& s) const {
  if (opt_.gemm_lowering == kernel_choice::never || eng_->blas() == nullptr) return std::nullopt;
  if (opt_.compute_precision == precision::tf32x3 && !is_double(type_)) return std::nullopt;
  if (s.kind != lowered_kind::contraction) return std::nullopt;
  return lower_to_gemm(s);
}

// How steps that are no GEMM as they lie may run as copies and a GEMM: never where cuBLAS may not
// run a step (gemm_candidate's conditions), else options::gemm_copies.
kernel_choice compiled_program::copies_choice() const {
  if (opt_.gemm_lowering == kernel_choice::never || eng_->blas() == nullptr) return kernel_choice::never;
  if (opt_.compute_precision == precision::tf32x3 && !is_double(type_)) return kernel_choice::never;
  return opt_.gemm_copies;
}

// 2. The static memory plan. Schedule: the fused launch first (position 0) when there is one,
//    then the library steps in tree order. Arena: library results and subtree roots, each live
//    from its producer's position to its consumer's, and each library step's cuTENSOR workspace,
//    live at its step only (it takes arena bytes free at that step instead of a block of its own);
//    absorbed intermediates live in a separate scratch laid out subtree by subtree. Inputs have
//    their own block so that the program can be replayed on new data.
compiled_program::layout compiled_program::plan_buffers(const problem& p, const step_choices& choices, bool gemm_workspaces) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  const std::size_t steps = p.tree.steps.size();
  const std::size_t elem = size_of(p.type);
  layout l;
  const bool fused = fusion_.subtrees() > 0;
  std::vector<int> position(steps, -1);
  const std::vector<int>& consumer = choices.plan.consumer;
  int next_position = fused ? 1 : 0;
  for (int k : fusion_.absorbed) position[static_cast<std::size_t>(k)] = 0;
  if (concurrent_) {
    // Concurrent: positions are the tree's levels (the fused launch at 0, a library step one past
    // its latest producer), and the library steps run in level order, a valid sequential order for
    // a plan over levels. Steps of one level then share no bytes and can run at once.
    const int base = next_position;
    for (int kk : fusion_.library_steps) {
      const step& s = p.tree.steps[static_cast<std::size_t>(kk)];
      int pos = base;
      for (int id : {s.lhs, s.rhs}) {
        if (id < static_cast<int>(n)) continue;
        pos = std::max(pos, position[static_cast<std::size_t>(id) - n] + 1);
      }
      position[static_cast<std::size_t>(kk)] = pos;
      next_position = std::max(next_position, pos + 1);
    }
    std::stable_sort(fusion_.library_steps.begin(), fusion_.library_steps.end(),
                     [&](int x, int y) { return position[static_cast<std::size_t>(x)] < position[static_cast<std::size_t>(y)]; });
  } else {
    for (int k : fusion_.library_steps) position[static_cast<std::size_t>(k)] = next_position++;
  }
  const int end_position = next_position;
  std::vector<buffer_request> requests;
  l.request_of_step.assign(steps, -1);
  auto result_bytes_of = [&](std::size_t k) { return aligned(static_cast<std::size_t>(element_count(net.shape_of(p.tree.steps[k].out))) * elem); };
  // A chain's operands (X_0 and the small tensors) live until the chain's last step, where the chain
  // kernel reads them; its intermediates keep their own lifetimes (the kernel never touches them).
  std::vector<int> chain_of(steps, -1);
  for (std::size_t c = 0; c < chains_.size(); ++c)
    for (int k : chains_[c].steps) chain_of[static_cast<std::size_t>(k)] = static_cast<int>(c);
  for (std::size_t k = 0; k < steps; ++k) {
    const bool absorbed = fusion_.is_absorbed[k] != 0;
    const bool root = absorbed && (consumer[k] < 0 || fusion_.is_absorbed[static_cast<std::size_t>(consumer[k])] == 0);
    if (absorbed && !root) continue;
    int last = consumer[k] < 0 ? end_position : position[static_cast<std::size_t>(consumer[k])];
    if (consumer[k] >= 0) {
      const int c = chain_of[static_cast<std::size_t>(consumer[k])];
      if (c >= 0 && chain_of[k] != c) last = std::max(last, position[static_cast<std::size_t>(chains_[static_cast<std::size_t>(c)].steps.back())]);
    }
    l.request_of_step[k] = static_cast<int>(requests.size());
    requests.push_back(buffer_request{result_bytes_of(k), position[k], last});
  }
  const std::size_t tensor_requests = requests.size();
  l.workspace_request.assign(steps, -1);
  l.workspace_bytes.assign(steps, 0);
  gemm_workspaces_ = 0;
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    if (!plans_[k]) continue;
    std::size_t bytes = static_cast<std::size_t>(plans_[k]->workspace_bytes());
    // A GEMM of at least 2^22 multiply-adds that cuBLAS may run gets cuBLAS's recommended
    // workspace on Hopper (options::gemm_workspace_bytes): with none, cuBLAS leaves out the
    // kernels that need one (split-K among them).
    if (gemm_workspaces && opt_.gemm_workspace_bytes > bytes) {
      if (const auto g = gemm_candidate(choices.plan.lowered[k]); g && g->m * g->n * g->k * g->batch >= (std::int64_t{1} << 22)) {
        bytes = opt_.gemm_workspace_bytes;
        ++gemm_workspaces_;
      }
    }
    if (bytes == 0) continue;
    l.workspace_request[k] = static_cast<int>(requests.size());
    l.workspace_bytes[k] = bytes;
    requests.push_back(buffer_request{aligned(bytes), position[k], position[k]});
  }
  mplan_ = plan_memory(requests, arena_alignment);
  tensor_bound_bytes_ = live_bytes_bound(std::span<const buffer_request>(requests).first(tensor_requests));
  // Scratch for absorbed intermediates: per subtree, a plan over its levels (steps of one level run
  // together in the fused launch).
  {
    fusion_scratch fs = plan_fusion_scratch(
        fusion_, consumer, [&](int k) { return result_bytes_of(static_cast<std::size_t>(k)); }, arena_alignment);
    l.scratch_offset = std::move(fs.offset);
    scratch_bytes_ = fs.bytes;
  }
  // The fused launch's records and subtree offsets, in one table.
  if (fused) table_bytes_ = fusion_.absorbed.size() * sizeof(small_step_record) + fusion_.subtree_begin.size() * sizeof(int);
  // After them, the scratch of each full contraction (options::full_dot): its partial sums and counter.
  dot_steps_.clear();
  dot_records_.clear();
  if (opt_.full_dot != kernel_choice::never) {
    for (int kk : fusion_.library_steps) {
      const auto k = static_cast<std::size_t>(kk);
      if (!plans_[k] || choices.plan.kernel[k] == step_kernel::tiled) continue;
      full_dot_record r;
      if (describe_full_dot(choices.plan.lowered[k], r) && r.count >= opt_.full_dot_min_terms) {
        dot_steps_.push_back(kk);
        dot_records_.push_back(r);
      }
    }
  }
  dot_offset_ = aligned(fused ? table_bytes_ : 0);
  if (!dot_steps_.empty()) table_bytes_ = dot_offset_ + dot_steps_.size() * full_dot_scratch_bytes(elem);
  input_bytes_.resize(n);
  l.input_offsets.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    input_bytes_[i] = static_cast<std::size_t>(element_count(net.shape_of(net.inputs[i]))) * elem;
    l.input_offsets[i] = inputs_total_;
    inputs_total_ += aligned(input_bytes_[i]);
  }
  result_bytes_ = static_cast<std::size_t>(element_count(net.shape_of(net.output))) * elem;
  if (choices.plan.kernel.front() == step_kernel::copy) mplan_.arena_bytes = std::max<std::size_t>(mplan_.arena_bytes, result_bytes_);
  return l;
}

// 3. Admission: refuse before allocating anything if it cannot fit.
bool compiled_program::fits(std::size_t reserve_bytes, std::size_t limit_bytes) const {
  std::size_t limit = 0, available = 0;
  if (!memory_budget(*eng_, &limit, &available)) return true;
  if (limit_bytes != 0) limit = std::min(limit_bytes, available);
  return device_bytes() + reserve_bytes <= limit;
}

void compiled_program::admit(std::size_t reserve_bytes, std::size_t limit_bytes) const {
  if (fits(reserve_bytes, limit_bytes)) return;
  std::size_t limit = 0, available = 0;
  (void)memory_budget(*eng_, &limit, &available);
  if (limit_bytes != 0) limit = std::min(limit_bytes, available);
  const std::size_t need = device_bytes() + reserve_bytes;
  const options& o = opt_;
  char share[48];
  std::snprintf(share, sizeof share, "%.0f%% of the %s free", 100.0 * o.memory_limit_fraction, gib(available).c_str());
  throw out_of_memory("the network needs " + gib(need) + " on the device (arena with workspaces " + gib(mplan_.arena_bytes) + ", inputs " +
                      gib(inputs_total_) + ", scratch " + gib(scratch_bytes_ + table_bytes_) +
                      (reserve_bytes != 0 ? ", result and slice table " + gib(reserve_bytes) : std::string()) + ") but its memory limit is " +
                      gib(limit) + " (" + (o.memory_limit_bytes != 0 || limit_bytes != 0 ? std::string("as given") : std::string(share)) +
                      "); give a larger limit, or slice it (tnrt contract --memory-limit / --slice)");
}

// 4. Allocation, each block owned by its member.
void compiled_program::allocate() {
  const device::stream_handle stream = eng_->stream_handle();
  input_block_ = device::pool_block(eng_->pool(), inputs_total_, stream);
  arena_ = device::pool_block(eng_->pool(), mplan_.arena_bytes, stream);
  if (scratch_bytes_ > 0) scratch_ = device::pool_block(eng_->pool(), scratch_bytes_, stream);
  if (table_bytes_ > 0) table_ = device::pool_block(eng_->pool(), table_bytes_, stream);
}

// 5. The ops, bound to the buffers: the copy of a step-less tree, the fused launch, then every
//    library step (cuTENSOR or the tiled kernel) in tree order.
void compiled_program::build_ops(const problem& p, step_choices& c, const layout& l) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  const std::size_t steps = p.tree.steps.size();
  const std::size_t elem = size_of(p.type);
  auto* ib = static_cast<unsigned char*>(input_block_.get());
  auto* ab = static_cast<unsigned char*>(arena_.get());
  auto* sb = static_cast<unsigned char*>(scratch_.get());
  for (std::size_t i = 0; i < n; ++i) inputs_.push_back(ib + l.input_offsets[i]);
  auto ptr_of = [&](int id) -> void* {
    if (static_cast<std::size_t>(id) < n) return inputs_[static_cast<std::size_t>(id)];
    const auto k = static_cast<std::size_t>(id) - n;
    if (l.request_of_step[k] >= 0) return ab + mplan_.offsets.at(static_cast<std::size_t>(l.request_of_step[k]));
    return sb + l.scratch_offset[k];
  };
  auto bytes_of = [&](int id) -> std::size_t {
    const auto& labels = static_cast<std::size_t>(id) < n ? net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n].out;
    return static_cast<std::size_t>(element_count(net.shape_of(labels))) * elem;
  };
  if (c.plan.kernel.front() == step_kernel::copy) {
    result_ = arena_.get();
    op copy;
    copy.a = inputs_[0];
    copy.d = arena_.get();
    copy.a_bytes = copy.d_bytes = result_bytes_;
    ops_.push_back(std::move(copy));
    op_steps_.push_back(-2);
  } else {
    result_ = ptr_of(static_cast<int>(n + steps - 1));
  }
  if (fusion_.subtrees() > 0) {
    std::vector<small_step_record> records(fusion_.absorbed.size());
    for (std::size_t i = 0; i < fusion_.absorbed.size(); ++i) {
      const auto k = static_cast<std::size_t>(fusion_.absorbed[i]);
      const step& s = p.tree.steps[k];
      if (!describe_small_step(c.plan.lowered[k], ptr_of(s.lhs), s.rhs >= 0 ? ptr_of(s.rhs) : nullptr, ptr_of(static_cast<int>(n + k)), records[i],
                               opt_.fuse_stage))
        throw internal_error("compiled_program: an absorbed step no longer fits a record");
    }
    group_small_steps(fusion_, records, opt_.fuse_levels);
    for (int kk : fusion_.absorbed) {
      const step& s = p.tree.steps[static_cast<std::size_t>(kk)];
      if (static_cast<std::size_t>(s.lhs) < n || (s.rhs >= 0 && static_cast<std::size_t>(s.rhs) < n)) in_place_ok_ = false;
    }
    const std::size_t rec_bytes = records.size() * sizeof(small_step_record);
    const std::size_t begin_bytes = fusion_.subtree_begin.size() * sizeof(int);
    auto* table = static_cast<unsigned char*>(table_.get());
    TNRT_CUDA(cudaMemcpyAsync(table, records.data(), rec_bytes, cudaMemcpyHostToDevice, eng_->stream()));
    TNRT_CUDA(cudaMemcpyAsync(table + rec_bytes, fusion_.subtree_begin.data(), begin_bytes, cudaMemcpyHostToDevice, eng_->stream()));
    TNRT_CUDA(cudaStreamSynchronize(eng_->stream()));  // compile time, not run time: the host vectors die here
    op o;
    o.fused_records = reinterpret_cast<const small_step_record*>(table);
    o.fused_begin = reinterpret_cast<const int*>(table + rec_bytes);
    o.fused_subtrees = static_cast<int>(fusion_.subtrees());
    ops_.push_back(o);
    op_steps_.push_back(-1);
  }
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    const step& s = p.tree.steps[k];
    op o;
    o.plan = plans_[k];
    if (l.workspace_request[k] >= 0) {
      o.workspace = ab + mplan_.offsets.at(static_cast<std::size_t>(l.workspace_request[k]));
      o.workspace_bytes = l.workspace_bytes[k];  // the plan's, or more for cuBLAS
    }
    o.a = ptr_of(s.lhs);
    o.b = s.rhs >= 0 ? ptr_of(s.rhs) : nullptr;
    o.d = ptr_of(static_cast<int>(n + k));
    o.a_bytes = bytes_of(s.lhs);
    o.b_bytes = s.rhs >= 0 ? bytes_of(s.rhs) : 0;
    o.d_bytes = bytes_of(static_cast<int>(n + k));
    if (c.plan.kernel[k] == step_kernel::tiled) {
      o.tiled_rec = c.plan.tiled[k];
      bind_tiled(o.tiled_rec, o.a, o.b, o.d);
      o.tiled = true;
      if (tiled_choice_automatic_) {  // the other plans, timed too
        o.tiled_alts = tiled_alternatives(c.plan.lowered[k], elem, tiled_limits_of(opt_), o.tiled_rec);
        for (tiled_record& alt : o.tiled_alts) bind_tiled(alt, o.a, o.b, o.d);
      } else {
        ++tiled_chosen_;
      }
    }
    o.step = kk;
    // The step as a full contraction (tnrt's kernel), when it is one: timed against the plan, or
    // taken (`always`). Its scratch's counter starts at zero.
    if (const auto it = std::find(dot_steps_.begin(), dot_steps_.end(), kk); it != dot_steps_.end()) {
      const auto i = static_cast<std::size_t>(it - dot_steps_.begin());
      o.dot = dot_records_[i];
      o.dot_scratch = static_cast<unsigned char*>(table_.get()) + dot_offset_ + i * full_dot_scratch_bytes(elem);
      reset_full_dot_scratch(type_, o.dot_scratch, eng_->stream());
      if (opt_.full_dot == kernel_choice::always) {
        o.use_dot = true;
      }
    }
    // The step as one GEMM (cuBLAS), when it is one: timed against the plan, or taken (`always`).
    if (o.plan) {
      o.gemm = gemm_candidate(c.plan.lowered[k]);
      if (o.gemm) {
        ++gemm_candidates_;
        if (opt_.gemm_lowering == kernel_choice::always && !o.tiled) {
          o.use_gemm = true;
          if (opt_.gemm_algo_rank >= 0) {
            o.lt = prepare_lt(o, opt_.gemm_algo_rank + 1);
            if (o.lt) o.lt_algo = std::min(opt_.gemm_algo_rank, o.lt->algorithms() - 1);
          }
        }
      }
    }
    // The step as a grid run's record, when its form has one within the limits (check_grid_runs).
    if (o.plan && opt_.grid_steps != kernel_choice::never) {
      small_step_record r;
      if (describe_small_step(c.plan.lowered[k], o.a, o.b, o.d, r, false) && grid_step_fits(r, grid_limits_of(opt_))) o.grid_rec = r;
    }
    ops_.push_back(std::move(o));
    op_steps_.push_back(kk);
  }
  plans_.clear();  // the ops hold what they use
  chain_ops_.assign(chains_.size(), {});
  for (std::size_t ci = 0; ci < chains_.size(); ++ci) {
    for (int k : chains_[ci].steps) {
      const auto it = std::find(op_steps_.begin(), op_steps_.end(), k);
      if (it == op_steps_.end()) throw internal_error("compiled_program: a chain's step has no op");
      chain_ops_[ci].push_back(static_cast<int>(it - op_steps_.begin()));
    }
    for (int j : chain_ops_[ci]) ops_[static_cast<std::size_t>(j)].grid_rec.reset();  // a chain's steps join no grid run
    ops_[static_cast<std::size_t>(chain_ops_[ci].back())].chain = static_cast<int>(ci);
  }
  if (!dot_steps_.empty()) TNRT_CUDA(cudaStreamSynchronize(eng_->stream()));  // the counters' reset, before any run
}

// 6. Capture once, after every plan exists (no plan creation, allocation or event polling inside).
void compiled_program::capture() {
  std::string why;
  graph_owner graph = capture_ops(why);
  cudaGraphExec_t exec = nullptr;
  if (graph != nullptr && cudaGraphInstantiate(&exec, graph.get(), 0) == cudaSuccess) {
    graph_ = std::move(graph);
    exec_.reset(exec);
    build_io_graph();
  } else {
    (void)cudaGetLastError();
    graph_note_ = (why.empty() ? std::string("graph capture failed") : why) + "; replaying on the stream";
  }
}

// Every op captured on the engine's stream (on lanes when the program is concurrent): the graph,
// or null with `why` said.
graph_owner compiled_program::capture_ops(std::string& why) {
  cudaStream_t st = eng_->stream();
  lane_capture lanes;
  if (concurrent_) lanes = plan_lanes();  // streams and events made before the capture begins
  if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    why = "capture could not begin";
    return {};
  }
  bool enqueued = true;
  try {
    if (lanes.schedule.lanes > 1) {
      enqueue_lanes(st, lanes);
    } else {
      enqueue_all(st);
    }
  } catch (const std::exception& e) {
    enqueued = false;
    why = std::string("capture failed (") + e.what() + ")";
  }
  cudaGraph_t g = nullptr;
  const cudaError_t end = cudaStreamEndCapture(st, &g);
  graph_owner graph(g);
  if (!enqueued || end != cudaSuccess || g == nullptr) {
    (void)cudaGetLastError();
    return {};
  }
  return graph;
}

// 7. The io graph over the captured one. Its gathers start with null sources (skipped) and real
//    sizes (they fix the grids); launch_io sets the pointers of each launch. Without it (a failed
//    build) programs copy with launches of their own.
void compiled_program::build_io_graph() {
  try {
    cudaGraph_t raw = nullptr;
    TNRT_CUDA(cudaGraphCreate(&raw, 0));
    graph_owner g(raw);
    io_entries_.clear();
    for (std::size_t i = 0; i < inputs_.size(); ++i) io_entries_.push_back(gather_entry{nullptr, inputs_[i], input_bytes_[i]});
    gather_nodes in(g.get(), {}, io_entries_);
    wrap_steps(g.get(), in.nodes(), graph_.get(), io_out_, io_exec_);
    io_graph_ = std::move(g);
    io_in_ = std::move(in);
  } catch (const error& e) {
    (void)cudaGetLastError();
    io_exec_.reset();
    graph_note_ = std::string("no io graph (") + e.what() + "); inputs and result copied by launches of their own";
  }
}

void compiled_program::wrap_steps(cudaGraph_t g, std::span<const cudaGraphNode_t> deps, cudaGraph_t steps, gather_nodes& out,
                                  graph_exec_owner& exec) const {
  cudaGraphNode_t node = nullptr;
  TNRT_CUDA(cudaGraphAddChildGraphNode(&node, g, deps.data(), deps.size(), steps));
  const gather_entry out_entry{nullptr, result_, result_bytes_};
  gather_nodes copy(g, std::span<const cudaGraphNode_t>(&node, 1), std::span<const gather_entry>(&out_entry, 1));
  cudaGraphExec_t e = nullptr;
  TNRT_CUDA(cudaGraphInstantiate(&e, g, 0));
  exec.reset(e);
  out = std::move(copy);
}

void compiled_program::launch_io(std::span<const void* const> srcs, void* out, cudaStream_t stream) {
  if (io_exec_ == nullptr) throw internal_error("launch_io without an io graph");
  if (srcs.size() != io_entries_.size()) throw internal_error("launch_io: wrong number of inputs");
  const auto same = [&](const std::vector<const void*>& v) { return v.size() == srcs.size() && std::equal(v.begin(), v.end(), srcs.begin()); };
  // The caller's inputs read in place: the same pointers as the run before (or as the graph built
  // on them) run a graph captured on them, which gathers nothing.
  bool in_place = in_place_exec_ != nullptr && same(in_place_srcs_);
  if (!in_place && same(last_srcs_) && in_place_allowed(srcs)) {
    build_in_place(srcs);  // on success the graph is on srcs
    in_place = in_place_exec_ != nullptr;
  }
  if (in_place) {
    set_out(in_place_out_, in_place_exec_.get(), in_place_out_dst_, out);
    TNRT_CUDA(cudaGraphLaunch(in_place_exec_.get(), stream));
    ++in_place_runs_;
    return;
  }
  last_srcs_.assign(srcs.begin(), srcs.end());
  // A node is updated only when its pointers differ from those the executable graph holds (a
  // caller that reuses its buffers pays no update; launches already enqueued keep theirs).
  bool changed = io_in_stale_;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    changed = changed || io_entries_[i].src != srcs[i];
    io_entries_[i].src = srcs[i];
  }
  if (changed) {
    io_in_stale_ = true;  // until the update is known to have happened
    io_in_.set(io_exec_.get(), io_entries_);
    io_in_stale_ = false;
    ++io_updates_;
  }
  set_out(io_out_, io_exec_.get(), io_out_dst_, out);
  TNRT_CUDA(cudaGraphLaunch(io_exec_.get(), stream));
}

// The result's copy node of `exec` pointed at `out` (nullptr: none), when it is not there already.
void compiled_program::set_out(const gather_nodes& nodes, cudaGraphExec_t exec, void*& holds, void* out) {
  if (out == holds) return;
  const gather_entry out_entry{out == nullptr ? nullptr : result_, out, out == nullptr ? 0 : result_bytes_};
  nodes.set(exec, std::span<const gather_entry>(&out_entry, 1));
  holds = out;
  ++io_updates_;
}

// Whether a graph may read these inputs where they lie: every op's plan holds (no fused record
// reads an input, whose pointers live in device memory), each source is there and as aligned as
// the plans assume, none lies in the program's own buffers (a step would write what another reads
// later: the program's result fed back to it, say), and fewer than in_place_max_builds graphs have
// been tried (callers that cycle through buffers keep the gather).
bool compiled_program::in_place_allowed(std::span<const void* const> srcs) {
  if (!in_place_ok_ || in_place_builds_ >= in_place_max_builds) return false;
  const auto blocks = own_blocks();
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(srcs[i]);
    const std::size_t n = input_bytes_[i];
    if (srcs[i] == nullptr || a % engine::max_alignment != 0) return false;
    for (const auto& [block, bytes] : blocks) {
      const auto lo = reinterpret_cast<std::uintptr_t>(block->get());
      if (block->get() != nullptr && a < lo + bytes && lo < a + n) return false;
    }
  }
  return true;
}

// Captures the ops again with their inputs at `srcs`, under the io graph's result copy, and keeps
// it for runs with these pointers. The ops get their own pointers back, whatever happens; a
// failure leaves the gather in use.
void compiled_program::build_in_place(std::span<const void* const> srcs) {
  ++in_place_builds_;
  in_place_exec_.reset();
  in_place_srcs_.clear();
  std::vector<std::pair<const void*, const void*>> kept(ops_.size());
  const int lanes = lanes_, critical = critical_ops_;
  const auto point = [&](bool at_srcs) {
    for (std::size_t j = 0; j < ops_.size(); ++j) {
      op& o = ops_[j];
      if (at_srcs) {
        kept[j] = {o.a, o.b};
        for (std::size_t i = 0; i < inputs_.size(); ++i) {
          if (o.a == inputs_[i]) o.a = srcs[i];
          if (o.b != nullptr && o.b == inputs_[i]) o.b = srcs[i];
        }
      } else {
        std::tie(o.a, o.b) = kept[j];
      }
      if (o.tiled) bind_tiled(o.tiled_rec, o.a, o.b, o.d);
    }
  };
  std::string why;
  graph_owner steps;
  point(true);
  grid_paused_ = grid_reads_inputs_;  // the run's records hold the program's own inputs
  try {
    steps = capture_ops(why);
  } catch (const error&) {
    (void)cudaGetLastError();  // plan_lanes could not make its streams: the gather stays
  }
  grid_paused_ = false;
  point(false);
  in_place_lanes_ = lanes_;  // the capture's own, before the program's come back
  lanes_ = lanes;
  critical_ops_ = critical;
  if (steps == nullptr) return;
  try {
    cudaGraph_t raw = nullptr;
    TNRT_CUDA(cudaGraphCreate(&raw, 0));
    graph_owner g(raw);
    wrap_steps(g.get(), {}, steps.get(), in_place_out_, in_place_exec_);
    in_place_graph_ = std::move(g);
    in_place_out_dst_ = nullptr;
    in_place_srcs_.assign(srcs.begin(), srcs.end());
  } catch (const error&) {
    (void)cudaGetLastError();
    in_place_exec_.reset();
  }
}

// Times each step that tnrt's own kernel can take both ways, on the program's own buffers (their
// contents do not matter to the speed), and keeps the faster. Compile time only: it synchronizes.
void compiled_program::choose_kernels_by_timing(const problem& p, const step_choices& c, std::size_t reserve_bytes, std::size_t limit_bytes) {
  step_timer timer(opt_.step_timing == timing_method::device);
  cudaStream_t st = eng_->stream();
  auto time_op = [&](const op& o) { return fastest_run(timer, st, [&] { enqueue_op(o, st); }); };
  const bool time_algos = opt_.library_algos == kernel_choice::automatic;
  // Times cuTENSOR's plan of `algo` (its `rank`-th kernel by cuTENSOR's ranking) for op o where the
  // step's workspace holds it; it becomes `keep`, and its time `best`, when at least 3% faster than
  // `best`. o.plan is left on the plan timed last. false: cuTENSOR has no such plan.
  auto try_plan = [&](op& o, const lowered_step& low, int algo, int rank, float& best, std::shared_ptr<device::library_plan>& keep) {
    std::shared_ptr<device::library_plan> alt;
    try {
      alt = eng_->plan_with_algo(low, p.type, algo, rank);
    } catch (const error&) {
      return false;  // not supported for this step
    }
    if (alt->workspace_bytes() <= o.workspace_bytes) {
      if (rank > 0) ++kernel_rank_trials_;
      o.plan = alt;
      const float t = time_op(o);
      if (t < best * 0.97F) {
        best = t;
        keep = alt;
      }
    }
    return true;
  };
  for (op& o : ops_) {
    if (!o.tiled || !o.plan) continue;
    float with_kernel = time_op(o);
    for (tiled_record& alt : o.tiled_alts) {
      std::swap(o.tiled_rec, alt);
      const float with_alt = time_op(o);
      if (with_alt < with_kernel) {
        with_kernel = with_alt;
      } else {
        std::swap(o.tiled_rec, alt);
      }
    }
    o.tiled = false;
    float with_library = time_op(o);
    // The kernel faces cuTENSOR's best algorithm, not only its default: where the kernel beats the
    // default, GETT, TGETT and TTGT are timed too (plans whose workspace fits the step's), and one
    // at least 3% faster than the default becomes the library's plan (regular4-n70's step 39, a
    // 268 MB operand summed against 32 combinations, ran the kernel at 4.7x its byte floor against
    // a slower default: bench/results/2026-12-05-h200-second/fam-roof).
    if (time_algos && with_kernel < with_library) {
      const std::shared_ptr<device::library_plan> original = o.plan;
      std::shared_ptr<device::library_plan> keep = original;
      const lowered_step& low = c.plan.lowered[static_cast<std::size_t>(o.step)];
      for (int algo : {-4, -3, -2})  // GETT, TGETT, TTGT
        if (algo != opt_.algo) (void)try_plan(o, low, algo, 0, with_library, keep);
      o.algos_timed = true;  // the library loop below need not time them again
      o.plan = keep;
      if (with_kernel < with_library) {
        o.plan = original;  // the kernel stays: the default plan is what the step held
      } else if (keep != original) {
        ++algos_changed_;
      }
    }
    o.tiled = with_kernel < with_library;
    (o.tiled ? tiled_chosen_ : tiled_rejected_) += 1;
  }

  // Then each library step (those the tiled kernel did not win included): cuTENSOR's algorithms,
  // the fastest plan whose workspace fits where the memory plan put the step's workspace (a larger
  // one would overlap other buffers), the step as one cuBLAS GEMM, which runs in the same
  // workspace, and the step as one GEMM after copies (options::gemm_copies), whose scratch is
  // a block of its own. A candidate replaces the kept one only when at least 3% faster.
  const bool time_gemm = opt_.gemm_lowering == kernel_choice::automatic;
  const kernel_choice copies = copies_choice();
  constexpr float jit_min_ms = 0.02F;  // a JIT kernel is tried only on steps at least this slow
  std::vector<std::pair<float, op*>> timed;  // library steps and their best time, for the JIT pass
  for (op& o : ops_) {
    if (!o.plan || o.tiled || o.use_gemm || o.step < 0) continue;  // use_gemm here: `always`
    const lowered_step& low = c.plan.lowered[static_cast<std::size_t>(o.step)];
    if (low.kind != lowered_kind::contraction) continue;
    const bool gemm = time_gemm && o.gemm.has_value();
    const bool dot = o.dot.has_value() && opt_.full_dot == kernel_choice::automatic;
    if (!time_algos && !gemm && (opt_.jit_steps <= 0 || opt_.jit) && copies == kernel_choice::never && !dot) continue;
    float best = 0;
    if (copies == kernel_choice::always && try_copies(o, low, copies, best, reserve_bytes, limit_bytes, time_op)) continue;
    best = time_op(o);
    if (time_algos && !o.algos_timed) {
      std::shared_ptr<device::library_plan> keep = o.plan;
      const std::shared_ptr<device::library_plan> original = o.plan;
      // Candidate (algorithm, kernel rank) pairs: each algorithm's first-ranked kernel, then, on a
      // step still slow enough, the runners-up of cuTENSOR's own ranking (options::kernel_ranks).
      // A rank past the algorithm's last kernel fails to plan and ends that algorithm's ranks.
      for (int algo : {-4, -3, -2})  // GETT, TGETT, TTGT
        if (algo != opt_.algo) (void)try_plan(o, low, algo, 0, best, keep);
      if (opt_.kernel_ranks > 0 && best >= opt_.kernel_rank_min_ms) {
        const std::shared_ptr<device::library_plan> before_ranks = keep;
        const int algos[] = {opt_.algo, -4, -3, -2};
        for (int i = 0; i < 4; ++i) {
          if (i > 0 && algos[i] == opt_.algo) continue;  // the options' algorithm came first
          for (int rank = 1; rank <= opt_.kernel_ranks; ++rank)
            if (!try_plan(o, low, algos[i], rank, best, keep)) break;
        }
        if (keep != before_ranks) ++kernel_ranks_chosen_;
      }
      o.plan = keep;
      if (keep != original) ++algos_changed_;
    }
    if (gemm) {
      o.use_gemm = true;
      float t = 1e30F;
      try {
        t = time_op(o);
      } catch (const error&) {
        (void)cudaGetLastError();  // cuBLAS refused this one: the plan stays
      }
      o.use_gemm = t < best * 0.97F;
      if (o.use_gemm) best = t;
    }
    if (gemm && opt_.gemm_algos > 0 && best >= opt_.gemm_algo_min_ms) try_gemm_algos(o, best, time_op);
    if (copies == kernel_choice::automatic) (void)try_copies(o, low, copies, best, reserve_bytes, limit_bytes, time_op);
    if (dot) try_full_dot(o, best, time_op);
    if (best >= jit_min_ms) timed.emplace_back(best, &o);
  }

  // Last, cuTENSOR's JIT kernels on the slowest library steps (options::jit_steps): compiling one
  // takes seconds, so only the steps that carry the time get one, kept when at least 3% faster.
  if (opt_.jit_steps <= 0 || opt_.jit) return;
  std::stable_sort(timed.begin(), timed.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (timed.size() > static_cast<std::size_t>(opt_.jit_steps)) timed.resize(static_cast<std::size_t>(opt_.jit_steps));
  for (auto& [best, op_ptr] : timed) {
    op& o = *op_ptr;
    const lowered_step& low = c.plan.lowered[static_cast<std::size_t>(o.step)];
    std::shared_ptr<device::library_plan> alt;
    try {
      alt = eng_->plan_jit(low, p.type);
    } catch (const error&) {
      continue;  // no JIT kernel for this step
    }
    if (alt->workspace_bytes() > o.workspace_bytes) continue;
    const std::shared_ptr<device::library_plan> kept_plan = o.plan;
    const bool kept_gemm = o.use_gemm, kept_copies = o.use_copies, kept_dot = o.use_dot;
    o.plan = alt;
    o.use_gemm = o.use_copies = o.use_dot = false;
    const float t = time_op(o);
    if (t < best * 0.97F) {
      o.jit = true;
      ++jit_chosen_;
      o.drop_gemm();  // what the step held for cuBLAS (use_* are already off)
      o.drop_copies();
    } else {
      o.plan = kept_plan;
      o.use_gemm = kept_gemm;
      o.use_copies = kept_copies;
      o.use_dot = kept_dot;
    }
  }
}

// The step through tnrt's full-contraction kernel, kept when at least 3% faster than `best` (what
// the step runs after the other timings, then the new best); a cuBLAS form or copies it replaces
// are dropped.
void compiled_program::try_full_dot(op& o, float& best, const std::function<float(const op&)>& time_op) {
  o.use_dot = true;
  float t = 1e30F;
  try {
    t = time_op(o);
  } catch (const error&) {
    (void)cudaGetLastError();  // the launch failed: the step keeps what it had
  }
  o.use_dot = t < best * 0.97F;
  if (!o.use_dot) return;
  best = t;
  o.drop_gemm();
  o.drop_copies();
}

int compiled_program::count_ops(bool (*pred)(const op&)) const noexcept {
  return static_cast<int>(std::count_if(ops_.begin(), ops_.end(), pred));
}
int compiled_program::gemm_chosen() const noexcept { return count_ops([](const op& o) { return o.use_gemm; }); }
int compiled_program::gemm_algos_chosen() const noexcept {
  return count_ops([](const op& o) { return o.use_gemm && o.lt != nullptr; });
}
int compiled_program::dots_chosen() const noexcept { return count_ops([](const op& o) { return o.use_dot; }); }
int compiled_program::copies_chosen() const noexcept { return count_ops([](const op& o) { return o.use_copies; }); }

// cuBLASLt's heuristic's first options::gemm_algos algorithms for the step's GEMM form, each
// timed where the step runs (its workspace, its operands' alignment); one replaces what the step
// runs (cuTENSOR's plan or cuBLAS's own choice) when at least 3% faster than `best`, then the new
// best. Why: cuBLAS's SGEMM takes the heuristic's first choice, and the chains of the suite are
// single GEMMs of 0.1-0.2 ms where torch's graph, on the same cuBLAS, was level with tnrt.
std::shared_ptr<const lt_matmul> compiled_program::prepare_lt(const op& o, int algos) {
  return eng_->blas()->prepare_lt(*o.gemm, type_, gemm_alignment(*o.gemm, type_, o.a, o.b, o.d), o.workspace_bytes, algos);
}

void compiled_program::try_gemm_algos(op& o, float& best, const std::function<float(const op&)>& time_op) {
  std::shared_ptr<const lt_matmul> lt;
  try {
    lt = prepare_lt(o, opt_.gemm_algos);
  } catch (const error&) {
    return;  // a descriptor could not be made: the step keeps what it has
  }
  if (!lt) return;
  const bool kept_gemm = o.use_gemm;
  int keep = -1;
  o.use_gemm = true;
  o.lt = lt;
  for (int i = 0; i < lt->algorithms(); ++i) {
    o.lt_algo = i;
    ++gemm_algo_trials_;
    float t = 1e30F;
    try {
      t = time_op(o);
    } catch (const error&) {
      (void)cudaGetLastError();  // this algorithm refused the operands: the next one
    }
    if (t < best * 0.97F) {
      best = t;
      keep = i;
    }
  }
  if (keep < 0) {
    o.lt.reset();
    o.lt_algo = -1;
    o.use_gemm = kept_gemm;
    return;
  }
  o.lt_algo = keep;
}

// The step as one GEMM after copies (options::gemm_copies). `always` (tests) takes it wherever it
// exists and fits the memory limit, untimed. `automatic` times it on steps of at least
// copies_min_ms and copies_min_intensity multiply-adds per element the copies move, whose copies
// take at most the arena (so they at most double the program's buffers; the memory limit holds
// over both), and keeps it when 3% faster than `best` (then the new best). Each
// step is timed alone, its operands warm in L2, which flatters the copies of small operands
// (mps-overlap-n24, steps of about 20 us: 5 steps chose copies and the program went from 0.346 to
// 0.415 ms; bench/results/2026-12-03-h200-gemm-copies): hence the floors. True when it runs so.
bool compiled_program::try_copies(op& o, const lowered_step& low, kernel_choice how, float& best, std::size_t reserve_bytes,
                                  std::size_t limit_bytes, const std::function<float(const op&)>& time_op) {
  constexpr double copies_min_intensity = 8;
  constexpr float copies_min_ms = 0.05F;
  const bool timed = how == kernel_choice::automatic;
  if (how == kernel_choice::never || o.gemm || (timed && best < copies_min_ms)) return false;
  std::optional<gemm_with_copies> form = lower_to_gemm_with_copies(low);
  if (!form) return false;
  // The cap was half the arena until hyper-n100's step 29 under planned intermediates (2 GiB of D
  // in an arena of 2.5 GiB) was refused by it and ran 36 ms on cuTENSOR; with the arena as the cap
  // compiled keeps planned there, 7.16 -> 5.13 ms, at a peak of 4.53 GiB against follow's 7.50
  // (bench/results/2026-12-04-h200-copies-arena).
  const auto within_arena = [&](double bytes) { return bytes <= static_cast<double>(mplan_.arena_bytes); };
  // Before any plan is made: the copies alone must pass (their workspace only adds).
  if (timed && (form->multiply_adds() < copies_min_intensity * form->copied_elements() ||
                !within_arena(form->copied_elements() * static_cast<double>(size_of(type_)))))
    return false;
  if (!prepare_copies(o, low, std::move(*form)) || (timed && !within_arena(static_cast<double>(o.copy_bytes))) ||
      !fits(reserve_bytes + o.copy_bytes, limit_bytes)) {
    o.drop_copies();
    return false;
  }
  float t = 0;
  if (timed) {
    t = 1e30F;
    try {
      device::pool_block scratch(eng_->pool(), o.copy_bytes, eng_->stream_handle());
      point_copies(o, scratch.get());
      o.use_copies = true;
      t = time_op(o);
    } catch (const error&) {
      (void)cudaGetLastError();  // no memory for the scratch, or cuBLAS refused: the plan stays
    }
    if (!(t < best * 0.97F)) {
      o.drop_copies();
      return false;
    }
  }
  o.use_copies = true;
  if (timed) best = t;
  return true;
}

bool compiled_program::prepare_copies(op& o, const lowered_step& low, gemm_with_copies form) {
  o.copies = std::move(form);
  const std::size_t elem = size_of(type_);
  o.copy_bytes = 0;
  o.copy_workspace_bytes = 0;
  try {
    for (int i = 0; i < 3; ++i) {
      if (!o.copies->copied[i]) continue;
      // A and B are copied into their layouts; D's copy (the GEMM's result) is copied out of it.
      o.copy_plans[i] = eng_->plan(gemm_copy_step(low, *o.copies, i), type_);
      o.copy_workspace_bytes = std::max<std::size_t>(o.copy_workspace_bytes, o.copy_plans[i]->workspace_bytes());
      o.copy_bytes += aligned(static_cast<std::size_t>(o.copies->elements[i]) * elem);
    }
  } catch (const error&) {
    o.drop_copies();
    return false;
  }
  o.copy_bytes += aligned(o.copy_workspace_bytes);  // the copies' workspace, after the copies
  ++copies_tried_;
  return true;
}

// The copies of `o` from `base` (A, B, D, then the copies' workspace).
void compiled_program::point_copies(op& o, void* base) const {
  auto* at = static_cast<unsigned char*>(base);
  for (int i = 0; i < 3; ++i) {
    o.copy_ptr[i] = nullptr;
    if (!o.copy_plans[i]) continue;
    o.copy_ptr[i] = at;
    at += aligned(static_cast<std::size_t>(o.copies->elements[i]) * size_of(type_));
  }
  o.copy_workspace = o.copy_workspace_bytes > 0 ? at : nullptr;
}

void compiled_program::place_copies() {
  copies_bytes_ = 0;
  for (const op& o : ops_)
    if (o.use_copies) copies_bytes_ = std::max(copies_bytes_, o.copy_bytes);
  if (copies_bytes_ == 0) return;
  copies_ = device::pool_block(eng_->pool(), copies_bytes_, eng_->stream_handle());
  for (op& o : ops_)
    if (o.use_copies) point_copies(o, copies_.get());
}

// The one switch over what an op runs.
void compiled_program::enqueue_op(const op& o, cudaStream_t stream) {
  if (o.chain_skip) return;  // its chain's last op runs it
  if (o.use_chain) {
    enqueue_chain(o, stream);
  } else if (o.fused_records != nullptr) {
    launch_small_steps(type_, o.fused_records, o.fused_begin, o.fused_subtrees, stream);
  } else if (o.tiled) {
    launch_tiled(type_, o.tiled_rec, stream);
  } else if (o.use_dot) {
    launch_full_dot(type_, *o.dot, o.a, o.b, o.d, o.dot_scratch, stream);
  } else if (o.use_gemm) {
    // The chosen cuBLASLt algorithm when the operands are as aligned as it was chosen for, else
    // cuBLAS's own choice. (Inputs read in place are 256-byte aligned, as aligned as any choice, so
    // today this holds wherever an op's pointers move; the check keeps an algorithm off operands
    // it was not chosen for.)
    if (o.lt && gemm_alignment(*o.gemm, type_, o.a, o.b, o.d) >= o.lt->alignment())
      o.lt->enqueue(o.lt_algo, o.a, o.b, o.d, o.workspace, o.workspace_bytes, stream);
    else
      eng_->blas()->gemm(*o.gemm, type_, o.a, o.b, o.d, o.workspace, o.workspace_bytes, stream);
  } else if (o.use_copies) {
    const void* x[2] = {o.a, o.b};
    for (int i = 0; i < 2; ++i) {
      if (!o.copy_plans[i]) continue;
      eng_->enqueue(*o.copy_plans[i], x[i], nullptr, o.copy_ptr[i], o.copy_workspace, o.copy_workspace_bytes, stream);
      x[i] = o.copy_ptr[i];
    }
    void* d = o.copy_plans[2] ? o.copy_ptr[2] : o.d;
    eng_->blas()->gemm(o.copies->gemm, type_, x[0], x[1], d, o.workspace, o.workspace_bytes, stream);
    if (o.copy_plans[2]) eng_->enqueue(*o.copy_plans[2], d, nullptr, o.d, o.copy_workspace, o.copy_workspace_bytes, stream);
  } else if (!o.plan) {
    TNRT_CUDA(cudaMemcpyAsync(o.d, o.a, o.d_bytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    eng_->enqueue(*o.plan, o.a, o.b, o.d, o.workspace, o.workspace_bytes, stream);
  }
}

void compiled_program::enqueue_all(cudaStream_t stream) {
  for (const op& o : ops_) {
    if (grid_paused_ || (o.grid_count == 0 && !o.grid_member)) {
      enqueue_op(o, stream);
    } else if (o.grid_count > 0) {
      launch_grid_steps(type_, o.grid_records, o.grid_count, o.grid_blocks, stream);
    }  // else: a member of a run an earlier op launched
  }
}

std::size_t compiled_program::launches() const noexcept {
  const auto skipped = static_cast<std::size_t>(std::count_if(ops_.begin(), ops_.end(), [](const op& o) { return o.chain_skip; }));
  return ops_.size() - skipped - static_cast<std::size_t>(grid_steps_ - grid_runs_);
}

int compiled_program::chains_chosen() const noexcept { return count_ops([](const op& o) { return o.use_chain; }); }

int compiled_program::chain_steps() const noexcept {
  int n = 0;
  for (const op& o : ops_)
    if (o.use_chain) n += static_cast<int>(chains_[static_cast<std::size_t>(o.chain)].steps.size());
  return n;
}

// The chain's operands as its member ops hold them now (an in-place graph moves the ops' inputs):
// X_0 is the first member's large operand, S_i member i's small one, X_m the last member's result.
compiled_program::chain_operands compiled_program::operands_of_chain(const op& o) const {
  const auto c = static_cast<std::size_t>(o.chain);
  const chain_plan& ch = chains_[c];
  const std::vector<int>& members = chain_ops_[c];
  chain_operands x;
  const op& first = ops_[static_cast<std::size_t>(members.front())];
  x.x0 = ch.small_is_lhs[0] != 0 ? operand_span{first.b, first.b_bytes} : operand_span{first.a, first.a_bytes};
  for (std::size_t i = 0; i < members.size(); ++i) {
    const op& m = ops_[static_cast<std::size_t>(members[i])];
    x.small[i] = ch.small_is_lhs[i] != 0 ? operand_span{m.a, m.a_bytes} : operand_span{m.b, m.b_bytes};
  }
  x.count = members.size();
  x.xm = {o.d, o.d_bytes};
  return x;
}

void compiled_program::enqueue_chain(const op& o, cudaStream_t stream) const {
  const chain_operands x = operands_of_chain(o);
  chain_pointers cp;
  cp.x0 = x.x0.ptr;
  for (std::size_t i = 0; i < x.count; ++i) cp.small[i] = x.small[i].ptr;
  cp.xm = o.d;
  launch_chain(type_, chains_[static_cast<std::size_t>(o.chain)].rec, cp, stream);
}

void compiled_program::choose_chains() {
  if (chains_.empty()) return;
  const bool always = opt_.chain_steps == kernel_choice::always;
  step_timer timer(opt_.step_timing == timing_method::device);
  cudaStream_t st = eng_->stream();
  for (std::size_t c = 0; c < chains_.size(); ++c) {
    const std::vector<int>& members = chain_ops_[c];
    op& last = ops_[static_cast<std::size_t>(members.back())];
    bool keep = always;
    if (!always) {
      const float steps_ms = fastest_run(timer, st, [&] {
        for (int j : members) enqueue_op(ops_[static_cast<std::size_t>(j)], st);
      });
      last.use_chain = true;
      float chain_ms = 1e30F;
      try {
        chain_ms = fastest_run(timer, st, [&] { enqueue_op(last, st); });
      } catch (const error&) {
        (void)cudaGetLastError();  // the launch failed: the steps stay
      }
      last.use_chain = false;
      keep = chain_ms < steps_ms * 0.97F;
    }
    if (!keep) continue;
    last.use_chain = true;
    for (std::size_t i = 0; i + 1 < members.size(); ++i) ops_[static_cast<std::size_t>(members[i])].chain_skip = true;
  }
}

// What each op reads and writes in the program's memory (the fused launch of small steps touches
// many buffers: a barrier), its dependencies, and the lanes of the capture, with the side streams
// and the events it records. Inputs are only read by the steps, so they order nothing.
compiled_program::lane_capture compiled_program::plan_lanes() {
  constexpr int max_lanes = 4;
  std::vector<op_access> access(ops_.size());
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const op& o = ops_[i];
    op_access& x = access[i];
    if (o.fused_records != nullptr) {
      x.barrier = true;
      continue;
    }
    if (o.chain_skip) continue;  // runs nothing: its chain's last op reads what it would have
    const auto range = [](const void* ptr, std::size_t bytes) {
      const auto b = reinterpret_cast<std::uintptr_t>(ptr);
      return byte_range{b, ptr == nullptr ? b : b + bytes};
    };
    if (o.use_chain) {  // reads X_0 and every small tensor, writes X_m
      const chain_operands ch = operands_of_chain(o);
      x.reads = {range(ch.x0.ptr, ch.x0.bytes)};
      for (std::size_t j = 0; j < ch.count; ++j) x.reads.push_back(range(ch.small[j].ptr, ch.small[j].bytes));
      x.writes = {range(ch.xm.ptr, ch.xm.bytes)};
      continue;
    }
    x.reads = {range(o.a, o.a_bytes), range(o.b, o.b_bytes)};
    x.writes = {range(o.d, o.d_bytes), range(o.workspace, o.workspace_bytes)};
    if (o.use_copies) x.writes.push_back(range(copies_.get(), copies_bytes_));  // the shared scratch
    if (o.use_dot) x.writes.push_back(range(o.dot_scratch, full_dot_scratch_bytes(size_of(type_))));  // its own
  }
  lane_capture c;
  c.schedule = schedule_lanes(op_dependencies(access), max_lanes);
  lanes_ = c.schedule.lanes;
  critical_ops_ = c.schedule.critical_ops;
  if (c.schedule.lanes == 1) return c;
  const auto event = [] {
    cudaEvent_t e = nullptr;
    TNRT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return event_owner(e);
  };
  for (int l = 1; l < c.schedule.lanes; ++l) {
    cudaStream_t side = nullptr;
    TNRT_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    c.side.emplace_back(side);
    c.joins.push_back(event());
  }
  c.fork = event();
  c.events.resize(ops_.size());
  for (std::size_t i = 0; i < ops_.size(); ++i)
    if (c.schedule.record[i] != 0) c.events[i] = event();
  return c;
}

// Every side lane forks from `stream` before its first op and joins it after its last: the
// captured graph then holds each op's dependencies instead of one chain.
void compiled_program::enqueue_lanes(cudaStream_t stream, const lane_capture& c) {
  const auto lane_stream = [&](int l) { return l == 0 ? stream : c.side[static_cast<std::size_t>(l - 1)].get(); };
  TNRT_CUDA(cudaEventRecord(c.fork.get(), stream));
  for (const auto& side : c.side) TNRT_CUDA(cudaStreamWaitEvent(side.get(), c.fork.get(), 0));
  for (std::size_t j = 0; j < ops_.size(); ++j) {
    cudaStream_t s = lane_stream(c.schedule.lane[j]);
    for (int w : c.schedule.waits[j]) TNRT_CUDA(cudaStreamWaitEvent(s, c.events[static_cast<std::size_t>(w)].get(), 0));
    enqueue_op(ops_[j], s);
    if (c.schedule.record[j] != 0) TNRT_CUDA(cudaEventRecord(c.events[j].get(), s));
  }
  for (std::size_t l = 0; l < c.side.size(); ++l) {
    TNRT_CUDA(cudaEventRecord(c.joins[l].get(), c.side[l].get()));
    TNRT_CUDA(cudaStreamWaitEvent(stream, c.joins[l].get(), 0));
  }
}

std::vector<std::string> compiled_program::op_kernels() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const op& o : ops_) {
    if (o.use_chain) {
      out.emplace_back("chain");
    } else if (o.chain_skip) {
      out.emplace_back("chain member");
    } else if (o.fused_records != nullptr) {
      out.emplace_back("fused");
    } else if (o.grid_count > 0 || o.grid_member) {
      out.emplace_back("grid");
    } else if (o.tiled) {
      const tiled_record& r = o.tiled_rec;
      std::string s = r.contracted_first != 0 ? "tiled k-first" : r.d_first != 0 ? "tiled d-first" : "tiled";
      s += r.vec_kind == tiled_run_values  ? " runs-values"
           : r.vec_kind == tiled_run_coefs ? " runs-coefs"
           : r.vec_kind == tiled_run_table ? " runs-table"
           : r.reuse != 0                  ? " reuse"
                                           : "";
      out.push_back(s);
    } else {
      out.emplace_back(o.use_dot ? "dot" : o.use_gemm ? "cublas" : o.use_copies ? "cublas copies" : o.jit ? "library jit" : o.plan ? "library" : "copy");
    }
  }
  return out;
}

std::vector<float> compiled_program::profile_steps() {
  cudaStream_t st = eng_->stream();
  (void)order_on(st);
  std::vector<event_owner> ev;
  std::vector<float> ms(ops_.size(), 0.0F);
  for (std::size_t i = 0; i <= ops_.size(); ++i) {
    cudaEvent_t e = nullptr;
    TNRT_CUDA(cudaEventCreate(&e));
    ev.emplace_back(e);
  }
  TNRT_CUDA(cudaEventRecord(ev[0].get(), st));
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    enqueue_op(ops_[i], st);
    TNRT_CUDA(cudaEventRecord(ev[i + 1].get(), st));
  }
  TNRT_CUDA(cudaEventSynchronize(ev.back().get()));
  for (std::size_t i = 0; i < ops_.size(); ++i) TNRT_CUDA(cudaEventElapsedTime(&ms[i], ev[i].get(), ev[i + 1].get()));
  return ms;
}

bool compiled_program::order_on(cudaStream_t stream) {
  if (stream == last_stream_) return false;
  // Recorded now on the old stream: it covers every use of the buffers enqueued there so far.
  TNRT_CUDA(cudaEventRecord(switch_event_.get(), last_stream_));
  TNRT_CUDA(cudaStreamWaitEvent(stream, switch_event_.get(), 0));
  last_stream_ = stream;
  for (const auto& [block, bytes] : own_blocks()) block->set_stream(stream);
  return true;
}

void compiled_program::run(cudaStream_t stream) {
  (void)order_on(stream);
  if (exec_ != nullptr) {
    TNRT_CUDA(cudaGraphLaunch(exec_.get(), stream));
    return;
  }
  enqueue_all(stream);
}

}  // namespace tnrt::cuda
