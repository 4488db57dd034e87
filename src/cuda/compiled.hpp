#pragma once
// Compiled execution: a whole tree planned once and replayed. Every step's cuTENSOR plan is built up
// front and held by the program (the plan cache's LRU cannot destroy it); intermediates get fixed
// offsets in one arena from the static memory plan; one workspace sized for the largest step.
// run() allocates nothing, looks nothing up and never synchronizes: it launches one CUDA graph
// (captured once, after every plan exists), or replays the steps on the stream when capture fails.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "core/fusion.hpp"
#include "core/skinny.hpp"
#include "core/tiled.hpp"
#include "cuda/engine.hpp"
#include "tnrt/memory_plan.hpp"
#include "tnrt/network.hpp"

namespace tnrt::cuda {

class compiled_program {
 public:
  /// Plans, memory plan, admission (throws out_of_memory naming what is needed and what is free),
  /// allocations, and the graph capture.
  compiled_program(engine& eng, const problem& p);
  ~compiled_program();
  compiled_program(const compiled_program&) = delete;
  compiled_program& operator=(const compiled_program&) = delete;

  /// Device buffer of input i (row-major, the shape of net.inputs[i]); write new data here between runs.
  [[nodiscard]] void* input(std::size_t i) const { return inputs_.at(i); }
  [[nodiscard]] std::size_t input_bytes(std::size_t i) const { return input_bytes_.at(i); }
  /// Enqueues one whole contraction on the engine's stream.
  void run();
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
  [[nodiscard]] std::size_t device_bytes() const noexcept { return mplan_.arena_bytes + inputs_total_ + scratch_bytes_ + table_bytes_; }
  [[nodiscard]] const fusion_plan& fusion() const noexcept { return fusion_; }
  /// The tree step each op runs, in order (-1: the fused launch; -2: the copy of a step-less tree).
  [[nodiscard]] const std::vector<int>& op_steps() const noexcept { return op_steps_; }
  /// What runs each op: "fused", "copy", "library", "skinny", or "tiled" with its layout (for the
  /// step profile).
  [[nodiscard]] std::vector<std::string> op_kernels() const;
  /// Skinny-eligible steps given to tnrt's kernel / left to cuTENSOR by the compile-time timing.
  [[nodiscard]] int skinny_chosen() const noexcept { return skinny_chosen_; }
  [[nodiscard]] int skinny_rejected() const noexcept { return skinny_rejected_; }
  /// Steps the tiled kernel runs (`always`: every eligible one; `automatic`: those it won), and
  /// those `automatic` gave back to the library.
  [[nodiscard]] int tiled_chosen() const noexcept { return tiled_chosen_; }
  [[nodiscard]] int tiled_rejected() const noexcept { return tiled_rejected_; }
  /// Launches per run: the fused one (if any) plus one per library step.
  [[nodiscard]] std::size_t launches() const noexcept { return ops_.size(); }
  [[nodiscard]] bool uses_graph() const noexcept { return exec_ != nullptr; }
  [[nodiscard]] const std::string& graph_note() const noexcept { return graph_note_; }

 private:
  struct op {
    std::shared_ptr<plan_entry> plan;  // null and no records: a device-to-device copy of `bytes`
    const void* a = nullptr;
    const void* b = nullptr;
    void* d = nullptr;
    void* workspace = nullptr;  // this step's cuTENSOR workspace, in the arena
    std::uint64_t workspace_bytes = 0;
    std::size_t bytes = 0;
    bool skinny = false;  // tnrt's streaming kernel instead of the plan
    skinny_record skinny_rec;
    bool tiled = false;  // tnrt's tiled streaming kernel instead of the plan
    tiled_record tiled_rec;
    /// Other plans of the same step (tiled_alternatives): `automatic` times each against tiled_rec
    /// and keeps the fastest there.
    std::vector<tiled_record> tiled_alts;
    const small_step_record* fused_records = nullptr;  // the fused launch of absorbed small steps
    const int* fused_begin = nullptr;
    int fused_subtrees = 0;
  };
  void enqueue_all();
  void enqueue_op(const op& o);
  void release_buffers() noexcept;
  void choose_kernels_by_timing();

  engine* eng_;
  std::vector<op> ops_;
  memory_plan mplan_;
  std::vector<void*> inputs_;
  std::vector<std::size_t> input_bytes_;
  std::size_t inputs_total_ = 0;
  void* input_block_ = nullptr;
  void* arena_ = nullptr;
  void* scratch_ = nullptr;       // absorbed small steps' intermediates
  std::size_t scratch_bytes_ = 0;
  void* table_ = nullptr;         // their records and subtree offsets
  std::size_t table_bytes_ = 0;
  fusion_plan fusion_;
  std::vector<int> op_steps_;
  int skinny_chosen_ = 0, skinny_rejected_ = 0, tiled_chosen_ = 0, tiled_rejected_ = 0;
  dtype type_ = dtype::f32;
  std::size_t workspace_bytes_ = 0;
  std::size_t tensor_bound_bytes_ = 0;
  void* result_ = nullptr;
  std::size_t result_bytes_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::string graph_note_;
  double compile_ms_ = 0;
};

}  // namespace tnrt::cuda
