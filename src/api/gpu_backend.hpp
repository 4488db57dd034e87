#pragma once
// The seam between the library API (src/api/context.cpp: validation, the CPU engine, ownership)
// and the CUDA wing (src/cuda/gpu_backend.cpp), without CUDA types, so the API builds and runs
// where the CUDA backend is not built. Calls arrive validated and under the context's lock.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tnrt/context.hpp"

namespace tnrt::detail {

/// A compiled program on the GPU.
class gpu_program {
 public:
  virtual ~gpu_program() = default;
  /// Inputs of the program's shapes and type (validated), the output of the result's shape;
  /// `dense`: every view is known to be row-major (no strides given).
  virtual void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, bool dense) = 0;
  [[nodiscard]] virtual memory_report memory() const = 0;
  [[nodiscard]] virtual double compile_ms() const = 0;
  [[nodiscard]] virtual std::size_t launches() const = 0;
  [[nodiscard]] virtual bool uses_graph() const = 0;
  [[nodiscard]] virtual std::string graph_note() const = 0;
  [[nodiscard]] virtual std::vector<int> op_steps() const = 0;
  [[nodiscard]] virtual std::vector<std::string> op_kernels() const = 0;
  [[nodiscard]] virtual int tiled_chosen() const = 0;
  [[nodiscard]] virtual int tiled_rejected() const = 0;
  [[nodiscard]] virtual int algos_changed() const = 0;
  [[nodiscard]] virtual int kernel_ranks_chosen() const = 0;
  [[nodiscard]] virtual int gemm_candidates() const = 0;
  [[nodiscard]] virtual int gemm_chosen() const = 0;
  [[nodiscard]] virtual int gemm_algos_chosen() const = 0;
  [[nodiscard]] virtual int gemm_dropped() const = 0;
  [[nodiscard]] virtual int dots_chosen() const = 0;
  [[nodiscard]] virtual std::string layout() const = 0;
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> layout_times() const = 0;
  virtual std::vector<float> profile_ops() = 0;
  /// The program's own buffer of input i (row-major): run() copies nothing into it when input i's
  /// view points there.
  [[nodiscard]] virtual void* input_buffer(std::size_t i) const = 0;
};

/// A compiled sliced contraction on the GPU.
class gpu_sliced {
 public:
  virtual ~gpu_sliced() = default;
  /// Slices [first, first + count) in `stream`'s order (validated views and range), added into
  /// the result, zeroed first when `zero`.
  virtual void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, std::int64_t first,
                   std::int64_t count, bool zero) = 0;
  [[nodiscard]] virtual memory_report memory() const = 0;
  [[nodiscard]] virtual bool uses_graph() const = 0;
};

class gpu_backend {
 public:
  virtual ~gpu_backend() = default;
  /// Eager, in `stream`'s order. `output` null: the result goes into a pool block returned
  /// (row-major, owned by the caller: give it back with deallocate on own_stream()); else into
  /// `output`, and null is returned.
  virtual void* contract(const problem& p, std::span<const tensor_view> inputs, const tensor_view* output, stream_handle stream) = 0;
  virtual std::unique_ptr<gpu_program> compile(const problem& p) = 0;
  /// The sliced program of p over `labels`, admitted under `limit_bytes` with `reserve_bytes` more;
  /// `parallel` one-slice programs running slices at once (memory for them checked by the caller).
  virtual std::unique_ptr<gpu_sliced> compile_sliced(const problem& p, std::span<const label_t> labels, std::size_t reserve_bytes,
                                                     std::size_t limit_bytes, int parallel) = 0;
  /// What compiling q would hold on the device, allocating nothing.
  virtual std::size_t predict_bytes(const problem& q) = 0;
  /// A sliced program's table bytes beside its program.
  virtual std::size_t slice_table_bytes(const problem& p, std::size_t sliced) = 0;
  /// The context's memory limit now (options against free memory) and the memory available (free
  /// plus the pool's cache); false when the device cannot say.
  virtual bool memory_limit(std::size_t* limit_bytes, std::size_t* available_bytes) = 0;
  /// Blocks until `stream` has run everything enqueued so far.
  virtual void wait(stream_handle stream) = 0;
  virtual void* allocate(std::size_t bytes, stream_handle stream) = 0;
  virtual void deallocate(void* ptr, stream_handle stream) noexcept = 0;
  /// Host to device, enqueued on `stream` (the host buffer must live until the stream passed it).
  virtual void upload(void* dst, const void* src, std::size_t bytes, stream_handle stream) = 0;
  /// Device to host, waiting for `stream` (blocking).
  virtual void download(void* dst, const void* src, std::size_t bytes, stream_handle stream) = 0;
  /// The context's own stream (the host-tensor conveniences run there).
  [[nodiscard]] virtual stream_handle own_stream() const = 0;
  [[nodiscard]] virtual counters stats() const = 0;
  virtual void synchronize() = 0;
  [[nodiscard]] virtual std::string device_name() const = 0;
  [[nodiscard]] virtual std::string driver_version() const = 0;
  [[nodiscard]] virtual std::string cuda_version() const = 0;
  [[nodiscard]] virtual std::string cutensor_version() const = 0;
};

/// The CUDA wing's backend for `opt.device` (throws device_error when unusable).
std::unique_ptr<gpu_backend> make_gpu_backend(const options& opt);
/// "" or why device `device` cannot run.
std::string gpu_unavailable_reason(int device);

}  // namespace tnrt::detail
