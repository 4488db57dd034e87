#pragma once
// The library API: contract device tensors on the caller's CUDA stream, eagerly or through a
// program compiled once and run many times; host-tensor overloads for a CPU-only user.
//
//   tnrt::context ctx;                                  // device 0, default options
//   tnrt::problem p = tnrt::load_file("net.json", {});  // or parse an expression + a path
//   ctx.contract(p, inputs, output, stream);            // eager: enqueues, returns at once
//   tnrt::program prog = ctx.compile(p);                // plans pinned, memory planned, graph captured
//   for (...) prog.run(inputs, output, stream);         // new pointers and values every call
//
// Streams. Every call is in the caller's stream's order and nothing here waits for the GPU: no host
// synchronization, no device allocation outside the context's caching pool. The work itself runs
// on the context's own stream, bridged by two events: it starts after everything already enqueued
// on the caller's stream, and the caller's stream waits for it before anything enqueued there
// later. So the pool, the workspace and a program's buffers only ever see the context's stream
// (memory is reused only after the work that used it, never sooner), no caller's stream is kept
// past a call (a caller may destroy its stream at any time), and calls on different streams run
// one after another on the GPU. Capturing a caller's stream into a CUDA graph around these calls
// is not supported (use compile() instead: a program is a graph already).
//
// Threads. A context may be called from any number of threads on any streams: calls are serialized
// on the host by the context's lock (each call only enqueues, so it holds the lock briefly). A
// program may be run from several threads and streams too: its runs share its arena, and the
// context's own stream orders them.
//
// Errors: typed exceptions of tnrt/errors.hpp, each with one line: shape_error / dtype_error for
// views that do not match the problem, not_supported for what tnrt cannot do (negative strides,
// an output view aliasing an input), device_error for CUDA/cuTENSOR failures and unusable devices,
// out_of_memory (checked before launch for a program).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tnrt/dtype.hpp"
#include "tnrt/network.hpp"
#include "tnrt/options.hpp"
#include "tnrt/slicing.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt {

/// A cudaStream_t, passed as an opaque pointer so this header needs no CUDA header. nullptr is
/// CUDA's legacy default stream.
using stream_handle = void*;

/// A non-owning view of a tensor: where its elements are, their type, shape and strides.
struct tensor_view {
  void* data = nullptr;
  dtype type = dtype::f32;
  std::span<const std::int64_t> shape;
  /// In elements, one per mode, any order (row-major, column-major or neither); zero strides
  /// (broadcast) are allowed for inputs only. Empty: row-major contiguous.
  std::span<const std::int64_t> strides;
  /// The CUDA device ordinal holding `data`, or cpu_device for host memory.
  int device = cpu_device;
};

/// A host tensor's row-major view (its shape and strides live in the tensor / `strides_storage`).
tensor_view view_of(const host_tensor& t);

/// What a context or program reports about its device memory, in bytes.
struct memory_report {
  std::size_t arena_bytes = 0;         // compiled: the static memory plan's arena (workspaces inside)
  std::size_t lower_bound_bytes = 0;   // compiled: the plan's lower bound, tensors and workspaces
  std::size_t tensor_bound_bytes = 0;  // compiled: the lower bound counting tensors only
  std::size_t workspace_bytes = 0;     // the largest cuTENSOR workspace of one step
  std::size_t input_bytes = 0;         // compiled: the program's own copies of the inputs
  std::size_t scratch_bytes = 0;       // compiled: fused small steps' intermediates and records
  std::size_t total_bytes = 0;         // everything the program holds on the device
};

/// The work of one contraction: real multiply-adds counted as 2 flops (complex as 8), and the
/// bytes every step reads and writes once.
struct cost_report {
  double flops = 0;
  double bytes = 0;
};

namespace detail {
struct context_state;
struct program_state;
struct sliced_state;
struct device_block;
}  // namespace detail

/// A result allocated from the context's pool and handed to the caller: row-major, on the
/// context's device. Back to the pool when the last copy of this handle goes; the context's next
/// call on a stream orders itself after what that stream has enqueued so far, so work reading the
/// result on the producing stream is safe; work on another stream must be complete (or ordered
/// before the next call's stream) before the handle goes. Keeps its context's memory alive.
class device_tensor {
 public:
  device_tensor() = default;
  [[nodiscard]] void* data() const noexcept;
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] const std::vector<std::int64_t>& strides() const noexcept { return strides_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] std::size_t bytes() const noexcept;
  [[nodiscard]] tensor_view view() const noexcept;
  /// Copies to the host, waiting for the producing stream (blocking; for tests and convenience).
  [[nodiscard]] host_tensor to_host() const;

 private:
  friend class context;
  std::shared_ptr<detail::device_block> block_;
  dtype type_ = dtype::f32;
  std::vector<std::int64_t> shape_, strides_;
  int device_ = cpu_device;
};

/// A problem compiled for one context: every plan built and pinned, a static memory plan, and a
/// CUDA graph. run() with new input and output pointers on every call; the inputs are copied into
/// the program's own buffers by one gather launch before the graph (docs/design.md says why and
/// what it costs), and the result into the output view after it. When the same input pointers
/// (dense, 256-byte aligned) come back on the next call, the program captures its steps on them
/// once and later calls with them read the inputs where they lie, without the gather (at most 4
/// such captures a program). Either way an input is read on `stream` during the run: keep it
/// valid and unchanged until the run's work on the stream is done, as for any stream-ordered call.
class program {
 public:
  program();
  ~program();
  program(program&&) noexcept;
  program& operator=(program&&) noexcept;
  program(const program&) = delete;
  program& operator=(const program&) = delete;

  /// Enqueues one contraction on `stream`: inputs (device views of the problem's input shapes and
  /// type, any strides) in, the result written into `output` (a device view of the output shape).
  void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream);
  /// Convenience: uploads, runs, downloads, waits (blocking).
  [[nodiscard]] host_tensor run(std::span<const host_tensor> inputs);
  /// Static inputs (the CUDA-graph habit: write the inputs in place, replay): row-major device
  /// views of the program's own input buffers, valid while the program lives. Write a run's inputs
  /// there (ordered before the run on its stream, as for any buffer) and pass these views to run():
  /// nothing is copied into the program, the gather skips them. Their contents persist between
  /// runs. Throws not_supported for a program of a CPU context (it has no device buffers).
  [[nodiscard]] std::vector<tensor_view> input_views() const;

  [[nodiscard]] memory_report memory() const;
  [[nodiscard]] cost_report cost() const;
  [[nodiscard]] double compile_ms() const;
  /// Launches per run inside the graph (the fused launch, one per library or tiled step).
  [[nodiscard]] std::size_t launches() const;
  [[nodiscard]] bool uses_graph() const;
  /// "" or why the program replays on the stream instead of a graph.
  [[nodiscard]] std::string graph_note() const;
  /// Per op: the tree step it runs (-1 the fused launch, -2 the copy of a step-less tree) and its
  /// kernel ("fused", "copy", "library", "tiled ...").
  [[nodiscard]] std::vector<int> op_steps() const;
  [[nodiscard]] std::vector<std::string> op_kernels() const;
  /// Steps the tiled kernel runs, and those compiled `automatic` timing gave back to cuTENSOR.
  [[nodiscard]] int tiled_chosen() const;
  [[nodiscard]] int tiled_rejected() const;
  /// Library steps whose timed cuTENSOR algorithm replaced the default heuristic's plan (tiled
  /// candidates among them: a timed algorithm can beat the tiled kernel that beat the default).
  [[nodiscard]] int algos_changed() const;
  /// Of those, the steps on a runner-up kernel of cuTENSOR's own ranking (options::kernel_ranks).
  [[nodiscard]] int kernel_ranks_chosen() const;
  /// Library steps that are one strided-batched GEMM, and those that run through cuBLAS
  /// (options::gemm_lowering).
  [[nodiscard]] int gemm_candidates() const;
  [[nodiscard]] int gemm_chosen() const;
  /// Of those, the steps on a cuBLASLt algorithm that timing chose (options::gemm_algos).
  [[nodiscard]] int gemm_algos_chosen() const;
  /// Steps timing put on cuBLAS one at a time that the whole-program check took back to cuTENSOR
  /// (options::gemm_check); they are no longer in gemm_chosen.
  [[nodiscard]] int gemm_dropped() const;
  /// Steps whose result is one element that run through tnrt's full-contraction kernel
  /// (options::full_dot).
  [[nodiscard]] int dots_chosen() const;
  /// The intermediate layout the program runs under ("column", "row" or "follow"; "" on the CPU),
  /// and each layout compile timed (options::time_layouts) with its replay's milliseconds.
  [[nodiscard]] std::string layout() const;
  [[nodiscard]] std::vector<std::pair<std::string, double>> layout_times() const;
  /// Diagnostic: replays once with a timing event between ops (blocking). Each op's milliseconds.
  [[nodiscard]] std::vector<float> profile_ops();
  /// The problem it was compiled from.
  [[nodiscard]] const problem& source() const;

 private:
  friend class context;
  std::unique_ptr<detail::program_state> state_;
};

/// A sliced contraction's request (include/tnrt/slicing.hpp says what slicing is).
struct slice_request {
  /// The labels to slice. Empty: the problem's own (problem::slices, from its file) when it has
  /// some, else none while the unsliced program fits the memory limit, else found by plan_slices.
  std::vector<label_t> labels;
  /// 0: the context's limit (options::memory_limit_bytes / memory_limit_fraction).
  std::size_t memory_limit_bytes = 0;
  /// Count the result's buffer and the inputs' copies against the limit (host-tensor runs
  /// allocate them from the pool; runs on a caller's device views do not).
  bool count_result = true;
  /// Slices run at once, each by a one-slice program of its own on a stream of its own (GPU, into
  /// a dense output): 0 as many as the limit leaves memory for, at most 4; 1 one at a time.
  int parallel = 0;
};

/// What a sliced contraction will take, known before anything is allocated.
struct slice_report {
  slice_plan plan;                  // labels, slice count, flops sliced and unsliced, core peak estimates
  std::size_t limit_bytes = 0;      // the limit planned under
  std::size_t predicted_bytes = 0;  // device memory tnrt will hold: the one-slice program, its table, the result and inputs if counted
  std::size_t result_bytes = 0;
  cost_report cost;                 // all slices together (flops and bytes, as program::cost)
  cost_report cost_unsliced;
  bool predicted_exactly = false;   // from the GPU's own plans (true), or the core estimate (a CPU context)
  int parallel = 1;                 // slices run at once (predicted_bytes counts every program and partial result)
};

/// A sliced contraction compiled for one context: the one-slice program, compiled once, replayed
/// for every slice with the inputs gathered at that slice's offsets and the result accumulated on
/// the device. A GPU context's runs are ordered on the caller's stream like program::run.
class sliced_program {
 public:
  sliced_program();
  ~sliced_program();
  sliced_program(sliced_program&&) noexcept;
  sliced_program& operator=(sliced_program&&) noexcept;
  sliced_program(const sliced_program&) = delete;
  sliced_program& operator=(const sliced_program&) = delete;

  /// Enqueues slices [first, first + count) (count -1: to the last) on `stream`: inputs of the
  /// problem's shapes (device views, any strides), their results summed into `output` (zeroed
  /// first; a cut-short run leaves the partial sum). Returns without waiting.
  void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, std::int64_t first = 0,
           std::int64_t count = -1);
  /// Convenience: uploads, runs, downloads, waits (blocking), calling `progress` (slices done,
  /// total) as slices complete on the device.
  [[nodiscard]] host_tensor run(std::span<const host_tensor> inputs, const slice_progress_fn& progress = {}, std::int64_t first = 0,
                                std::int64_t count = -1);
  [[nodiscard]] const slice_report& report() const;
  [[nodiscard]] std::int64_t slices() const;
  /// Device memory held (the one-slice program's report, total_bytes with the table).
  [[nodiscard]] memory_report memory() const;
  [[nodiscard]] bool uses_graph() const;
  [[nodiscard]] const problem& source() const;

 private:
  friend class context;
  std::unique_ptr<detail::sliced_state> state_;
};

/// Owns the device, the cuTENSOR handle, the caching pool, the retirement queue, the shared
/// workspace and the plan cache (or, with options::device == cpu_device, the CPU reference engine).
class context {
 public:
  /// Throws device_error when the device is unusable (unavailable_reason says why).
  explicit context(const options& opt = {});
  ~context();
  context(context&&) noexcept;
  context& operator=(context&&) noexcept;
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  /// Eager: enqueues the whole contraction on `stream`, reading the input views in place and
  /// writing the result into `output` (its strides respected). Returns without waiting.
  void contract(const problem& p, std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream);
  /// Eager, with the result allocated from the pool and handed to the caller.
  [[nodiscard]] device_tensor contract(const problem& p, std::span<const tensor_view> inputs, stream_handle stream);
  /// Convenience on host tensors (row-major, the problem's type): the CPU engine on a CPU context;
  /// on a GPU, upload, contract, download and wait (blocking).
  [[nodiscard]] host_tensor contract(const problem& p, std::span<const host_tensor> inputs);

  /// Compiles `p` for this context (blocking: plans, timing of kernel choices, graph capture).
  /// Throws out_of_memory, before allocating, when the program would not fit. A GPU context only.
  [[nodiscard]] program compile(const problem& p);

  /// The slicing of p under the request's memory limit and what it will take, without allocating
  /// anything: the slice plan, the predicted device memory, flops and bytes. On a GPU the prediction
  /// is the one-slice program's own memory plan (its cuTENSOR plans are built, and kept in the plan
  /// cache); on a CPU context the core estimate (slice_peak_bytes). Throws out_of_memory when no
  /// slicing fits, shape_error for bad labels.
  [[nodiscard]] slice_report plan_sliced(const problem& p, const slice_request& request = {});
  /// plan_sliced, then the one-slice program compiled (blocking). Its memory never exceeds the limit.
  [[nodiscard]] sliced_program compile_sliced(const problem& p, const slice_request& request = {});

  /// Every counter: plan cache, workspace, retirement, pool, host synchronizations, API calls.
  [[nodiscard]] counters stats() const;
  /// Blocking: drains the retirement queue and waits for the context's own stream.
  void synchronize();
  [[nodiscard]] const options& opts() const noexcept;
  [[nodiscard]] bool on_cpu() const noexcept;
  /// "NVIDIA H200", driver/runtime/cuTENSOR versions ("" on the CPU).
  [[nodiscard]] std::string device_name() const;
  [[nodiscard]] std::string driver_version() const;
  [[nodiscard]] std::string cuda_version() const;
  [[nodiscard]] std::string cutensor_version() const;

 private:
  std::shared_ptr<detail::context_state> state_;
};

/// "" when CUDA device `device` and cuTENSOR are usable here; otherwise one line saying what is
/// missing (no CUDA device, driver too old, libcutensor.so.2 not found with the paths searched,
/// or a build without the CUDA backend).
std::string unavailable_reason(int device = 0);

/// Throws shape_error (count, shape) or dtype_error naming the first input that does not fit the
/// problem: the check every host-tensor call makes before any work.
void check_host_inputs(const problem& p, std::span<const host_tensor> inputs);

/// True when this build has the CUDA backend.
bool built_with_cuda() noexcept;

}  // namespace tnrt
