#pragma once
// Sliced execution: a network contracted as the sum of its slices (include/tnrt/slicing.hpp), every
// slice a replay of one compiled program of the one-slice problem. The slice's inputs are gathered
// from the caller's tensors at the slice's offsets and its result added into the caller's result
// by kernels that read the slice number from a device table (src/cuda/slice_moves_kernels.hpp), so
// one graph (gather, the program's steps as a child graph, the accumulation, the counter's
// increment) serves every slice unchanged: a slice costs one graph launch, no node update, no
// re-planning and no host synchronization.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cuda/compiled.hpp"
#include "cuda/engine.hpp"
#include "cuda/slice_moves_kernels.hpp"
#include "tnrt/slicing.hpp"

namespace tnrt::cuda {

class sliced_program {
 public:
  /// Compiles the one-slice problem of p over `labels` (admitted against the memory limit with the
  /// table and `result_bytes` more: the result's buffer when tnrt allocates it, else 0). Throws
  /// what slice_problem and compiled_program throw.
  sliced_program(engine& eng, const problem& p, std::span<const label_t> labels, std::size_t result_bytes = 0, std::size_t limit_bytes = 0);
  sliced_program(const sliced_program&) = delete;
  sliced_program& operator=(const sliced_program&) = delete;

  /// Enqueues slices [first, first + count) on `stream`: inputs of p's shapes at `inputs` (strides
  /// per input, each empty for row-major; `input_strides` empty: all row-major), each slice's result
  /// added into `out` (p's output shape, `out_strides` or row-major), zeroed first when `zero`. The
  /// caller orders the program's runs (one stream, or events); nothing here waits.
  void run(std::span<const void* const> inputs, std::span<const std::vector<std::int64_t>> input_strides, void* out,
           std::span<const std::int64_t> out_strides, std::int64_t first, std::int64_t count, bool zero, cudaStream_t stream);

  [[nodiscard]] std::int64_t slices() const noexcept { return layout_.slices; }
  [[nodiscard]] const std::vector<label_t>& labels() const noexcept { return layout_.labels; }
  [[nodiscard]] compiled_program& program() noexcept { return *prog_; }
  [[nodiscard]] const compiled_program& program() const noexcept { return *prog_; }
  /// Device bytes held: the program's and the table's.
  [[nodiscard]] std::size_t device_bytes() const noexcept { return prog_->device_bytes() + table_bytes_; }
  [[nodiscard]] bool uses_graph() const noexcept { return exec_ != nullptr; }
  /// 0 f32, 1 f64, 2 c64, 3 c128: the kind the kernels take.
  [[nodiscard]] int elem_kind() const noexcept { return elem_kind_; }
  /// Table words written by the latest run (0 when the views were those of the run before).
  [[nodiscard]] std::size_t last_store_words() const noexcept { return last_store_words_; }
  /// The table's bytes for a problem of `inputs` operands of these ranks over `sliced` labels.
  static std::size_t table_bytes_for(const problem& p, std::size_t sliced);

 private:
  std::vector<std::int64_t> table_words(std::span<const void* const> inputs, std::span<const std::vector<std::int64_t>> input_strides,
                                        void* out, std::span<const std::int64_t> out_strides) const;
  void build_graph();
  void enqueue_slice(cudaStream_t stream);

  engine* eng_;
  problem full_;
  slice_layout layout_;  // of row-major views: the block counts and list sizes, fixed
  std::unique_ptr<compiled_program> prog_;
  device::pool_block table_;
  std::size_t table_bytes_ = 0;
  int elem_kind_ = 0;
  // Word offsets of the lists (fixed): sliced inputs, fixed inputs, the output's add, its zeroing.
  std::int64_t list_sliced_ = 0, list_fixed_ = 0, list_out_ = 0, list_zero_ = 0;
  unsigned blocks_sliced_ = 1, blocks_fixed_ = 1, blocks_out_ = 1, blocks_zero_ = 1;
  std::vector<std::int64_t> stored_;  // the table as the device holds it
  std::size_t last_store_words_ = 0;
  graph_owner graph_;
  graph_exec_owner exec_;
};

}  // namespace tnrt::cuda
