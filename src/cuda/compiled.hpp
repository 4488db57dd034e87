#pragma once
// Compiled execution: a whole tree planned once and replayed. Every step's cuTENSOR plan is built up
// front and held by the program (the plan cache's LRU cannot destroy it); intermediates get fixed
// offsets in one arena from the static memory plan; one workspace sized for the largest step.
// run() allocates nothing, looks nothing up and never synchronizes: it launches one CUDA graph
// (captured once, after every plan exists), or replays the steps on the stream when capture fails.
#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/chain.hpp"
#include "core/full_dot.hpp"
#include "core/fusion.hpp"
#include "core/gemm_lowering.hpp"
#include "core/replay_choice.hpp"
#include "core/step_graph.hpp"
#include "core/step_plan.hpp"
#include "core/tiled.hpp"
#include "cuda/engine.hpp"
#include "cuda/event_owner.hpp"
#include "cuda/strided_copy.hpp"
#include "tnrt/memory_plan.hpp"
#include "tnrt/network.hpp"

namespace tnrt {
struct split_sums_result;
}

namespace tnrt::cuda {

/// RAII owners of a captured graph and its executable graph.
struct graph_deleter {
  void operator()(cudaGraph_t g) const noexcept { (void)cudaGraphDestroy(g); }
};
struct graph_exec_deleter {
  void operator()(cudaGraphExec_t g) const noexcept { (void)cudaGraphExecDestroy(g); }
};
using graph_owner = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, graph_deleter>;
using graph_exec_owner = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, graph_exec_deleter>;

class compiled_program {
 public:
  /// Plans, memory plan, admission (throws out_of_memory naming what is needed and what is free),
  /// allocations, and the graph capture, in that order (one phase each). Everything it took is
  /// owned by members, so a throw in any phase gives it all back.
  /// `reserve_bytes`: device memory the caller will hold beside the program (a sliced program's
  /// table and result), counted by the admission against the memory limit too.
  /// `limit_bytes` (not 0) replaces the options' memory limit (never above what is free).
  /// `layout_override` (not null) replaces the options' intermediate layout.
  /// `concurrent`: independent steps on separate streams in the graph, intermediates planned over
  /// the tree's levels (options::concurrent_branches; build() decides it).
  compiled_program(engine& eng, const problem& p, std::size_t reserve_bytes = 0, std::size_t limit_bytes = 0,
                   const layout_policy* layout_override = nullptr, bool concurrent = false);
  ~compiled_program();
  /// The program for p under each intermediate layout when the options say time_layouts (the
  /// fastest of a few replays each, at most two programs held at once), else the plain constructor's.
  static std::unique_ptr<compiled_program> build(engine& eng, const problem& p);
  /// The intermediate layout it was compiled under, and each layout build() timed with its
  /// milliseconds (empty when it timed none).
  [[nodiscard]] layout_policy intermediate_layout() const noexcept { return opt_.intermediate_layout; }
  [[nodiscard]] const std::vector<std::pair<layout_policy, float>>& layout_times() const noexcept { return layout_times_; }
  /// Compiled with independent steps on separate streams; the lanes (streams) its graph uses and the
  /// ops on its longest chain of dependencies (both 1 and the op count for one chain).
  [[nodiscard]] bool concurrent() const noexcept { return concurrent_; }
  [[nodiscard]] int lanes() const noexcept { return lanes_; }
  [[nodiscard]] int critical_ops() const noexcept { return critical_ops_; }
  /// build()'s timing of the concurrent variant against the one-chain program of the same layout
  /// (milliseconds; negative where it timed none).
  [[nodiscard]] std::pair<float, float> branch_times() const noexcept { return {chain_ms_, concurrent_ms_}; }
  /// Steps of the tree that run split (options::split_sums; src/core/split_sums.hpp), and build()'s
  /// timing of the split program against the tree as it is (milliseconds; negative where it timed none).
  [[nodiscard]] int split_steps() const noexcept { return split_steps_; }
  [[nodiscard]] std::pair<float, float> split_times() const noexcept { return split_times_; }
  /// The device bytes the program for p would hold (device_bytes()), from its plans and memory plan
  /// alone: nothing allocated, nothing launched (the plans stay in the engine's plan cache).
  static std::size_t predict_bytes(engine& eng, const problem& p);
  /// The memory limit of the engine's options against the device's free memory (plus what the pool
  /// caches), and that available memory; false when the device cannot say.
  static bool memory_budget(engine& eng, std::size_t* limit_bytes, std::size_t* available_bytes);
  /// The captured steps' graph (null without one): sliced programs embed it as a child graph.
  [[nodiscard]] cudaGraph_t graph() const noexcept { return graph_.get(); }
  compiled_program(const compiled_program&) = delete;
  compiled_program& operator=(const compiled_program&) = delete;

  /// Device buffer of input i (row-major, the shape of net.inputs[i]); write new data here between runs.
  [[nodiscard]] void* input(std::size_t i) const { return inputs_.at(i); }
  [[nodiscard]] std::size_t input_bytes(std::size_t i) const { return input_bytes_.at(i); }
  [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
  /// Enqueues one whole contraction on the engine's stream.
  void run() { run(eng_->stream()); }
  /// Enqueues one whole contraction on `stream`. A program's runs share its buffers: a run on
  /// another stream than the previous work on them first waits (GPU-side) for that work.
  void run(cudaStream_t stream);
  /// Orders later work on `stream` after every earlier use of the program's buffers (on whichever
  /// stream); true when that took an event wait. run() calls it; so do input uploads.
  bool order_on(cudaStream_t stream);
  /// The result (row-major), valid after run() completes on the stream.
  [[nodiscard]] const void* result() const noexcept { return result_; }
  [[nodiscard]] std::size_t result_bytes() const noexcept { return result_bytes_; }

  /// Diagnostic: replays once on the stream with a timing event between steps (synchronizes).
  /// Returns each op's milliseconds, in order.
  std::vector<float> profile_steps();

  [[nodiscard]] double compile_ms() const noexcept { return compile_ms_; }
  [[nodiscard]] const memory_plan& plan() const noexcept { return mplan_; }
  /// The largest cuTENSOR workspace of one step; every step's workspace lives in the arena (the
  /// memory plan places it as a buffer live at its step only).
  [[nodiscard]] std::size_t workspace_bytes() const noexcept { return workspace_bytes_; }
  /// The plan's lower bound counting tensors only (plan().lower_bound_bytes counts workspaces too).
  [[nodiscard]] std::size_t tensor_bound_bytes() const noexcept { return tensor_bound_bytes_; }
  [[nodiscard]] std::size_t device_bytes() const noexcept {
    return mplan_.arena_bytes + inputs_total_ + scratch_bytes_ + table_bytes_ + copies_bytes_ + grid_table_bytes_;
  }
  [[nodiscard]] std::size_t inputs_bytes() const noexcept { return inputs_total_; }
  [[nodiscard]] std::size_t scratch_bytes() const noexcept { return scratch_bytes_ + table_bytes_; }
  [[nodiscard]] const fusion_plan& fusion() const noexcept { return fusion_; }
  /// The tree step each op runs, in order (-1: the fused launch; -2: the copy of a step-less tree).
  [[nodiscard]] const std::vector<int>& op_steps() const noexcept { return op_steps_; }
  /// What runs each op: "fused", "copy", "library", or "tiled" with its layout (for the step
  /// profile).
  [[nodiscard]] std::vector<std::string> op_kernels() const;
  /// Steps the tiled kernel runs (`always`: every eligible one; `automatic`: those it won), and
  /// those `automatic` gave back to the library.
  [[nodiscard]] int tiled_chosen() const noexcept { return tiled_chosen_; }
  [[nodiscard]] int tiled_rejected() const noexcept { return tiled_rejected_; }
  /// Library steps whose timed cuTENSOR algorithm replaced the default heuristic's plan (tiled
  /// candidates among them: a timed algorithm can beat the kernel that beat the default).
  [[nodiscard]] int algos_changed() const noexcept { return algos_changed_; }
  /// Of those, the steps on a runner-up kernel of cuTENSOR's ranking (options::kernel_ranks).
  [[nodiscard]] int kernel_ranks_chosen() const noexcept { return kernel_ranks_chosen_; }
  /// Runner-up plans timed (those cuTENSOR could plan and whose workspace fit).
  [[nodiscard]] int kernel_rank_trials() const noexcept { return kernel_rank_trials_; }
  /// Library steps that are one strided-batched GEMM (gemm_candidates), and those that run through
  /// cuBLAS (options::gemm_lowering: timed faster, or `always`).
  [[nodiscard]] int gemm_candidates() const noexcept { return gemm_candidates_; }
  [[nodiscard]] int gemm_chosen() const noexcept;
  /// Steps timing put on cuBLAS one at a time (as they lie or after copies) that the whole-program
  /// check took back to cuTENSOR (the program with all of them on cuTENSOR replayed faster; build_tree).
  [[nodiscard]] int gemm_dropped() const noexcept { return gemm_dropped_; }
  /// Of those, the steps on a cuBLASLt algorithm that timing chose over cuBLAS's own (and the
  /// step's other candidates) by 3%, and the cuBLASLt algorithms timed (options::gemm_algos).
  [[nodiscard]] int gemm_algos_chosen() const noexcept;
  [[nodiscard]] int gemm_algo_trials() const noexcept { return gemm_algo_trials_; }
  /// GEMM steps whose arena workspace is options::gemm_workspace_bytes (0 when the memory limit
  /// left them the plan's), and library steps that run a JIT plan timing chose (options::jit_steps).
  [[nodiscard]] int gemm_workspaces() const noexcept { return gemm_workspaces_; }
  [[nodiscard]] int jit_chosen() const noexcept { return jit_chosen_; }
  /// Steps whose result is one element that run through tnrt's full-contraction kernel
  /// (options::full_dot: timed faster, or `always`), of the candidates.
  [[nodiscard]] int dots_chosen() const noexcept;
  [[nodiscard]] int dot_candidates() const noexcept { return static_cast<int>(dot_steps_.size()); }
  /// Library steps that run as copies and one cuBLAS GEMM (options::gemm_copies), and the bytes of
  /// the scratch they share.
  [[nodiscard]] int copies_chosen() const noexcept;
  /// Library steps that had a form with copies whose plans were made (tried or, `always`, taken).
  [[nodiscard]] int copies_tried() const noexcept { return copies_tried_; }
  [[nodiscard]] std::size_t copies_bytes() const noexcept { return copies_bytes_; }
  /// Kernel launches (or copies) per replay: one per op (the fused launch, each library step), one
  /// per grid run instead of its steps'.
  [[nodiscard]] std::size_t launches() const noexcept;
  /// Grid runs kept (options::grid_steps) and the steps in them (0 and 0 without).
  [[nodiscard]] int grid_runs() const noexcept { return grid_runs_; }
  /// Chains of large x small steps found (plan_chains) and kept (one launch each; options::chain_steps),
  /// and the steps in the kept ones.
  [[nodiscard]] int chain_candidates() const noexcept { return static_cast<int>(chains_.size()); }
  [[nodiscard]] int chains_chosen() const noexcept;
  [[nodiscard]] int chain_steps() const noexcept;
  [[nodiscard]] int grid_steps() const noexcept { return grid_steps_; }
  [[nodiscard]] bool uses_graph() const noexcept { return exec_ != nullptr; }

  /// The graph with the program's copies as nodes of its own: a gather of the inputs into the
  /// program's buffers before the steps, and a copy of the result after them, whose pointers are
  /// set per launch (no launch of their own, no host work beyond setting 24 bytes an input).
  /// Built with the graph; absent without one.
  [[nodiscard]] bool has_io_graph() const noexcept { return io_exec_ != nullptr; }
  /// Gather-node updates launch_io has made (a launch with the previous call's pointers makes none).
  [[nodiscard]] std::uint64_t io_updates() const noexcept { return io_updates_; }
  /// launch_io reads a caller's inputs in place when they come back: the second launch with the
  /// same sources (all given, 256-byte aligned, outside the program's buffers, no fused small step
  /// reading an input) captures the ops on them, and launches with those sources run that graph,
  /// which gathers nothing. A caller that changes the contents keeps the pointers: the graph reads
  /// what is there when it runs, as the gather would. At most in_place_max_builds such graphs per
  /// program (one held at a time); then the gather. Graphs built and launches that ran one:
  [[nodiscard]] int in_place_builds() const noexcept { return in_place_builds_; }
  [[nodiscard]] std::uint64_t in_place_runs() const noexcept { return in_place_runs_; }
  /// The lanes of the last in-place graph's capture (0 before any).
  [[nodiscard]] int in_place_lanes() const noexcept { return in_place_lanes_; }
  static constexpr int in_place_max_builds = 4;
  /// Launches it on `stream`: input i is read from srcs[i] (row-major; nullptr: already in
  /// input(i)), the result written to `out` (row-major; nullptr: left in result()). No ordering
  /// against earlier work on the program's buffers: that is the caller's (see order_on).
  void launch_io(std::span<const void* const> srcs, void* out, cudaStream_t stream);
  /// The problem's type, shapes and result shape, as compiled.
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::string& graph_note() const noexcept { return graph_note_; }

 private:
  struct op {
    std::shared_ptr<device::library_plan> plan;  // null and no records: a device-to-device copy of d_bytes
    const void* a = nullptr;
    const void* b = nullptr;
    void* d = nullptr;
    void* workspace = nullptr;  // this step's cuTENSOR workspace, in the arena
    std::uint64_t workspace_bytes = 0;
    std::size_t a_bytes = 0, b_bytes = 0, d_bytes = 0;  // what the op reads at a and b and writes at d
    bool tiled = false;  // tnrt's tiled streaming kernel instead of the plan
    tiled_record tiled_rec;
    /// Other plans of the same step (tiled_alternatives): `automatic` times each against tiled_rec
    /// and keeps the fastest there.
    std::vector<tiled_record> tiled_alts;
    int step = -1;  // the tree step (library and tiled ops)
    std::optional<gemm_form> gemm;  // the step as one GEMM, when it is one and cuBLAS is there
    bool use_gemm = false;          // run through cuBLAS instead of the plan
    /// With use_gemm: the form prepared for cuBLASLt and the algorithm of it that timing chose
    /// (options::gemm_algos); null: cuBLAS's own choice.
    std::shared_ptr<const lt_matmul> lt;
    int lt_algo = -1;
    void drop_gemm() {  // off cuBLAS, its cuBLASLt algorithm released
      use_gemm = false;
      lt.reset();
      lt_algo = -1;
    }
    /// The step as one GEMM after copies of operands (options::gemm_copies), when it is tried: the
    /// copies' plans (cuTENSOR reductions that sum nothing: permutations; null for an operand not
    /// copied), where the copies go, and their bytes together.
    std::optional<gemm_with_copies> copies;
    std::shared_ptr<device::library_plan> copy_plans[3];
    void* copy_ptr[3] = {nullptr, nullptr, nullptr};
    void* copy_workspace = nullptr;  // the copies' plans' workspace, after the copies
    std::size_t copy_workspace_bytes = 0;
    std::size_t copy_bytes = 0;  // the copies and their workspace (aligned)
    bool use_copies = false;  // run as copies and a cuBLAS GEMM instead of the plan
    void drop_copies() {
      copies.reset();
      for (auto& cp : copy_plans) cp.reset();
      use_copies = false;
    }
    bool jit = false;               // the plan is a cuTENSOR JIT plan that timing chose (options::jit_steps)
    bool algos_timed = false;       // cuTENSOR's algorithms were timed against the tiled kernel already
    /// The step as a full contraction (its result one element; options::full_dot), its scratch (in
    /// table_, one per such op), and whether it runs there instead of the plan.
    std::optional<full_dot_record> dot;
    void* dot_scratch = nullptr;
    bool use_dot = false;
    const small_step_record* fused_records = nullptr;  // the fused launch of absorbed small steps
    const int* fused_begin = nullptr;
    int fused_subtrees = 0;
    // Grid runs (options::grid_steps; check_grid_runs): the step as a record (unstaged), when its
    // lowered form has one; its pointers are the op's at the check.
    std::optional<small_step_record> grid_rec;
    int grid_count = 0;                                 // > 0: launches the run of this op and the next grid_count - 1
    const small_step_record* grid_records = nullptr;    // that run's records, in grid_table_
    int grid_blocks = 0;                                // that run's blocks
    bool grid_member = false;                           // in a run that an earlier op launches
    // Chains (options::chain_steps; src/core/chain.hpp): on a chain's last step, the chain's index
    // in chains_; use_chain: this op runs the whole chain (the chain kernel, its operands read from
    // the member ops' pointers at enqueue); chain_skip: an earlier step of a kept chain (runs nothing).
    int chain = -1;
    bool use_chain = false;
    bool chain_skip = false;
  };
  // The constructor's phases.
  struct step_choices {
    step_plan plan;  // core's: tiled records planned unbound, bound to the arena in build_ops
  };
  struct layout {
    std::vector<int> request_of_step, workspace_request;
    std::vector<std::size_t> workspace_bytes;  // per step: the plan's, or cuBLAS's (gemm_workspace_bytes)
    std::vector<std::size_t> scratch_offset, input_offsets;
  };
  /// What a candidate program may hold beside the kept one (0: the options' limit; none: nothing left).
  using limit_rule = std::function<std::optional<std::size_t>(const compiled_program&)>;
  /// The tree's program (layouts and branches timed; a candidate replaces the kept program only
  /// when clearly_faster, core/replay_choice.hpp); `kept`, when given, gets the kept program's
  /// timed replays, or stays as it is when nothing was timed.
  static std::unique_ptr<compiled_program> build_chosen(engine& eng, const problem& p);
  static std::unique_ptr<compiled_program> build_tree(engine& eng, const problem& p, replay_times* kept = nullptr);
  static limit_rule limit_rule_of(engine& eng);
  void take_split(const split_sums_result& r);
  /// The whole-program check of the cuBLAS steps (use_gemm, use_copies) timing chose one at a time:
  /// the program replayed as it is and with those steps on their cuTENSOR plans; they go back to
  /// cuTENSOR when that replays faster. `kept` gets the kept program's replays.
  void check_gemm_choices(replay_times& kept);
  void check_grid_runs();
  [[nodiscard]] std::vector<std::pair<int, int>> grid_runs_under(const grid_step_limits& limits) const;
  bool apply_grid_runs(const std::vector<std::pair<int, int>>& runs);
  void drop_grid_runs();
  /// The graph captured again after ops changed (stream replay when the capture fails).
  void recapture();
  /// Ops for which `pred` holds (the *_chosen counts: what the ops run, so nothing to keep in step).
  [[nodiscard]] int count_ops(bool (*pred)(const op&)) const noexcept;
  static std::unique_ptr<compiled_program> build_timed_layouts(engine& eng, const problem& p, const limit_rule& limit_beside,
                                                               std::vector<std::pair<layout_policy, float>>& times, replay_times& best_t);
  step_choices choose_steps(const problem& p);
  /// `gemm_workspaces`: GEMM steps of cuBLAS get options::gemm_workspace_bytes (counted in gemm_workspaces_).
  layout plan_buffers(const problem& p, const step_choices& c, bool gemm_workspaces);
  [[nodiscard]] std::optional<gemm_form> gemm_candidate(const lowered_step& s) const;
  struct plan_only {};
  compiled_program(engine& eng, const problem& p, plan_only);
  [[nodiscard]] bool fits(std::size_t reserve_bytes, std::size_t limit_bytes) const;
  void admit(std::size_t reserve_bytes, std::size_t limit_bytes) const;
  void allocate();
  void build_ops(const problem& p, step_choices& c, const layout& l);
  void capture();
  graph_owner capture_ops(std::string& why);
  void build_io_graph();
  void set_out(const gather_nodes& nodes, cudaGraphExec_t exec, void*& holds, void* out);
  [[nodiscard]] bool in_place_allowed(std::span<const void* const> srcs);
  void build_in_place(std::span<const void* const> srcs);
  /// A graph of `steps` as a child node after `deps`, then the result's copy node (`out`, pointers
  /// set per launch), instantiated into `exec`; `g` holds it.
  void wrap_steps(cudaGraph_t g, std::span<const cudaGraphNode_t> deps, cudaGraph_t steps, gather_nodes& out, graph_exec_owner& exec) const;
  /// The program's own device blocks, with the bytes of each it uses.
  std::array<std::pair<device::pool_block*, std::size_t>, 6> own_blocks() {
    return {{{&input_block_, inputs_total_},
             {&arena_, mplan_.arena_bytes},
             {&scratch_, scratch_bytes_},
             {&table_, table_bytes_},
             {&copies_, copies_bytes_},
             {&grid_table_, grid_table_bytes_}}};
  }

  void enqueue_all(cudaStream_t stream);
  // The capture of a concurrent program: the lanes' schedule, side streams and events.
  struct stream_deleter {
    void operator()(cudaStream_t s) const noexcept { (void)cudaStreamDestroy(s); }
  };
  struct lane_capture {
    lane_schedule schedule;
    std::vector<std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_deleter>> side;
    std::vector<event_owner> events, joins;
    event_owner fork;
  };
  lane_capture plan_lanes();
  void enqueue_lanes(cudaStream_t stream, const lane_capture& c);
  void enqueue_op(const op& o, cudaStream_t stream);
  void choose_kernels_by_timing(const problem& p, const step_choices& c, std::size_t reserve_bytes, std::size_t limit_bytes);
  [[nodiscard]] kernel_choice copies_choice() const;
  /// o's GEMM form prepared for cuBLASLt with up to `algos` algorithms, in o's workspace and at its
  /// operands' alignment (null: none offered).
  std::shared_ptr<const lt_matmul> prepare_lt(const op& o, int algos);
  void try_gemm_algos(op& o, float& best, const std::function<float(const op&)>& time_op);
  void try_full_dot(op& o, float& best, const std::function<float(const op&)>& time_op);
  bool try_copies(op& o, const lowered_step& low, kernel_choice how, float& best, std::size_t reserve_bytes, std::size_t limit_bytes,
                  const std::function<float(const op&)>& time_op);
  /// Sets o.copies to `form` (a GEMM with copies of `low`), makes the copies' plans and sums their
  /// bytes (the copies, then the largest plan's workspace); false, and o without copies, when a plan
  /// cannot be made.
  bool prepare_copies(op& o, const lowered_step& low, gemm_with_copies form);
  /// Points the chosen copies at one scratch block as large as the largest (copies_).
  void place_copies();
  /// Each chain timed as one launch of the chain kernel against its steps as they run, kept when 3%
  /// faster (`always`: kept untimed). Compile time only: it synchronizes.
  void choose_chains();
  struct operand_span {
    const void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  struct chain_operands {  // fixed-size: enqueue_chain runs on every launch outside a graph
    operand_span x0, xm;
    operand_span small[chain_max_steps];  // S_i, in the chain's order
    std::size_t count = 0;                // steps (entries of small)
  };
  /// The operands of the chain whose last op is `o`, as its member ops hold them now.
  [[nodiscard]] chain_operands operands_of_chain(const op& o) const;
  void enqueue_chain(const op& o, cudaStream_t stream) const;
  void point_copies(op& o, void* base) const;

  engine* eng_;
  options opt_;  // the engine's, with the layout this program was compiled under
  std::vector<std::pair<layout_policy, float>> layout_times_;
  bool concurrent_ = false;
  int lanes_ = 1, critical_ops_ = 0;
  float chain_ms_ = -1, concurrent_ms_ = -1;
  std::pair<float, float> split_times_{-1.0F, -1.0F};
  int split_steps_ = 0;
  std::vector<op> ops_;
  memory_plan mplan_;
  std::vector<void*> inputs_;
  std::vector<std::size_t> input_bytes_;
  std::size_t inputs_total_ = 0;
  device::pool_block input_block_;
  device::pool_block arena_;
  device::pool_block scratch_;    // absorbed small steps' intermediates
  std::size_t scratch_bytes_ = 0;
  device::pool_block table_;      // their records and subtree offsets, then the full dots' scratch
  std::size_t table_bytes_ = 0;
  std::vector<chain_plan> chains_;           // chains of large x small steps (options::chain_steps)
  std::vector<std::vector<int>> chain_ops_;  // per chain: the ops of its steps, in order
  std::vector<int> dot_steps_;    // library steps that are full contractions (options::full_dot)
  std::vector<full_dot_record> dot_records_;  // theirs, planned with the buffers
  std::size_t dot_offset_ = 0;    // where their scratch starts in table_, one full_dot_scratch_bytes each
  fusion_plan fusion_;
  std::vector<int> op_steps_;
  int kernel_ranks_chosen_ = 0, kernel_rank_trials_ = 0;  // options::kernel_ranks
  int gemm_algo_trials_ = 0;      // options::gemm_algos
  int tiled_chosen_ = 0, tiled_rejected_ = 0, algos_changed_ = 0, gemm_candidates_ = 0, gemm_dropped_ = 0, jit_chosen_ = 0, copies_tried_ = 0;
  device::pool_block copies_;  // the scratch of the steps that run as copies and a GEMM
  std::size_t copies_bytes_ = 0;
  dtype type_ = dtype::f32;
  std::size_t workspace_bytes_ = 0;
  int gemm_workspaces_ = 0;  // GEMM steps given cuBLAS's workspace by the last plan_buffers
  std::size_t tensor_bound_bytes_ = 0;
  void* result_ = nullptr;
  std::size_t result_bytes_ = 0;
  std::vector<std::shared_ptr<device::library_plan>> plans_;  // by step, while the ops are built
  bool tiled_choice_automatic_ = false;
  graph_owner graph_;
  graph_exec_owner exec_;
  // The io graph: the gathers, the steps' graph as a child, the result's copy.
  graph_owner io_graph_;
  graph_exec_owner io_exec_;
  gather_nodes io_in_, io_out_;
  std::vector<gather_entry> io_entries_;  // the sources io_exec_ holds; reused: no allocation per run
  bool io_in_stale_ = false;              // an update of the input nodes failed half way
  void* io_out_dst_ = nullptr;            // the destination io_exec_'s output node holds
  std::uint64_t io_updates_ = 0;          // node updates launch_io made
  // Inputs read in place (launch_io): the sources of the launch before, and the graph built on
  // in_place_srcs_ (the ops as a child, then the result's copy).
  bool in_place_ok_ = true;  // false when a fused record reads an input
  // Grid runs (0 runs: none; the ops say which run where): their records, and whether one reads an
  // input (then the in-place graph, grid_paused_ while it is captured, runs every step one launch
  // each: the records hold the program's own inputs).
  device::pool_block grid_table_;
  std::size_t grid_table_bytes_ = 0;
  bool grid_reads_inputs_ = false, grid_paused_ = false;
  int grid_runs_ = 0, grid_steps_ = 0, grid_blocks_ = 0, grid_blocks_resident_ = 0;
  std::vector<const void*> last_srcs_, in_place_srcs_;
  graph_owner in_place_graph_;
  graph_exec_owner in_place_exec_;
  gather_nodes in_place_out_;
  void* in_place_out_dst_ = nullptr;
  int in_place_builds_ = 0, in_place_lanes_ = 0;
  std::uint64_t in_place_runs_ = 0;
  std::string graph_note_;
  double compile_ms_ = 0;
  // The stream of the latest work on the program's buffers, and the event a run on another stream
  // waits for.
  cudaStream_t last_stream_ = nullptr;
  event_owner switch_event_;
};

}  // namespace tnrt::cuda
