// The CUDA wing behind the library API: the engine (pool, retirement queue, workspace, plan
// cache), eager execution, and compiled programs whose runs copy the caller's inputs in with one
// gather launch and the result out after the graph.
//
// Streams. Each call's work runs on the context's own stream, bridged to the caller's by two
// events: the own stream first waits for everything already enqueued on the caller's stream, and
// the caller's stream then waits for the call's work. To the caller the work is in its stream's
// order; to the device layer (pool, workspace, retirement queue, program buffers) there is only
// the own stream, whose order it already keeps. No caller's stream handle is kept past the call,
// so a caller may destroy its stream at any time (a pool block tagged with a destroyed stream
// would be queried or waited on later: undefined behaviour in the driver, seen as a crash at
// teardown). The cost: two event records and two waits per call, and calls on different streams
// run one after another on the GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "api/gpu_backend.hpp"
#include "cuda/compiled.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/eager.hpp"
#include "cuda/engine.hpp"
#include "cuda/sliced.hpp"
#include "cuda/strided_copy.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::detail {
namespace {

using cuda::compiled_program;
using cuda::engine;

cudaStream_t stream_of(stream_handle s) noexcept { return static_cast<cudaStream_t>(s); }

bool row_major(const tensor_view& v) {
  if (v.strides.empty()) return true;
  std::int64_t expect = 1;
  for (std::size_t m = v.shape.size(); m-- > 0;) {
    if (v.shape[m] != 1 && v.strides[m] != expect) return false;
    expect *= v.shape[m];
  }
  return true;
}

std::vector<std::int64_t> strides_of(const tensor_view& v) {
  return v.strides.empty() ? row_major_strides(v.shape) : std::vector<std::int64_t>(v.strides.begin(), v.strides.end());
}

// What a compiled program holds on the device, by kind.
memory_report memory_of(const compiled_program& prog) {
  memory_report m;
  m.arena_bytes = prog.plan().arena_bytes;
  m.lower_bound_bytes = prog.plan().lower_bound_bytes;
  m.tensor_bound_bytes = prog.tensor_bound_bytes();
  m.workspace_bytes = prog.workspace_bytes();
  m.input_bytes = prog.inputs_bytes();
  m.scratch_bytes = prog.scratch_bytes();
  m.total_bytes = prog.device_bytes();
  return m;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// The two events of the bridge between a caller's stream and the context's own (see above).
class stream_bridge {
 public:
  explicit stream_bridge(cudaStream_t own) : own_(own) {
    TNRT_CUDA(cudaEventCreateWithFlags(&arrive_, cudaEventDisableTiming));
    const cudaError_t e = cudaEventCreateWithFlags(&done_, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      (void)cudaEventDestroy(arrive_);
      TNRT_CUDA(e);
    }
  }
  ~stream_bridge() {
    (void)cudaEventDestroy(arrive_);
    (void)cudaEventDestroy(done_);
  }
  stream_bridge(const stream_bridge&) = delete;
  stream_bridge& operator=(const stream_bridge&) = delete;

  [[nodiscard]] cudaStream_t own() const noexcept { return own_; }
  [[nodiscard]] std::uint64_t bridged() const noexcept { return bridged_; }

  /// One call on `caller`: the own stream waits for the caller's work so far at construction, the
  /// caller's stream waits for the own stream's at destruction (also when the call throws).
  class call {
   public:
    call(stream_bridge& b, cudaStream_t caller) : b_(b), caller_(caller) {
      if (caller_ == b_.own_) return;
      TNRT_CUDA(cudaEventRecord(b_.arrive_, caller_));
      TNRT_CUDA(cudaStreamWaitEvent(b_.own_, b_.arrive_, 0));
      ++b_.bridged_;
    }
    ~call() {
      if (caller_ == b_.own_) return;
      if (cudaEventRecord(b_.done_, b_.own_) != cudaSuccess || cudaStreamWaitEvent(caller_, b_.done_, 0) != cudaSuccess) {
        // The caller's stream cannot be ordered after the work: wait on the host instead (never a race).
        (void)cudaGetLastError();
        (void)cudaStreamSynchronize(b_.own_);
      }
    }
    call(const call&) = delete;
    call& operator=(const call&) = delete;

   private:
    stream_bridge& b_;
    cudaStream_t caller_;
  };

 private:
  cudaStream_t own_;
  cudaEvent_t arrive_ = nullptr, done_ = nullptr;
  std::uint64_t bridged_ = 0;
};

// The last use of a program's buffers: every run waits for it on its stream (so runs on
// different streams never overlap on the buffers) and records it again after its work, also when
// the call throws half way.
class last_use {
 public:
  last_use(cudaEvent_t done, cudaStream_t stream) : done_(done), stream_(stream) { TNRT_CUDA(cudaStreamWaitEvent(stream_, done_, 0)); }
  ~last_use() {
    if (cudaEventRecord(done_, stream_) != cudaSuccess) {
      // Nothing can wait for this work on the GPU: wait on the host instead (never a race).
      (void)cudaGetLastError();
      (void)cudaStreamSynchronize(stream_);
    }
  }
  last_use(const last_use&) = delete;
  last_use& operator=(const last_use&) = delete;

 private:
  cudaEvent_t done_;
  cudaStream_t stream_;
};

// Programs run on the caller's stream itself when their graph carries the copies (the io graph):
// the program's buffers are its own, never the pool's or the shared workspace's while it lives, so
// the only order to keep is between its own runs (last_use). Each run: one event wait, two node
// parameter updates, the graph launch, one event record. When the buffers go back to the pool
// (with the program), the own stream first waits for the last run. Without an io graph (capture
// failed, or graphs off) a run is bridged to the own stream like an eager call.
class cuda_program final : public gpu_program {
 public:
  cuda_program(engine& eng, const problem& p, stream_bridge& bridge)
      : owned_(compiled_program::build(eng, p)), prog_(*owned_), out_shape_(p.net.shape_of(p.net.output)), bridge_(&bridge) {
    gather_.reserve(p.net.inputs.size());
    srcs_.assign(p.net.inputs.size(), nullptr);
    cudaEvent_t e = nullptr;
    TNRT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    done_.reset(e);
    TNRT_CUDA(cudaEventRecord(done_.get(), bridge.own()));  // the compile's own work on the buffers
  }
  ~cuda_program() override { (void)cudaStreamWaitEvent(bridge_->own(), done_.get(), 0); }
  cuda_program(const cuda_program&) = delete;
  cuda_program& operator=(const cuda_program&) = delete;

  void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, bool dense) override {
    if (!prog_.has_io_graph()) {
      run_bridged(inputs, output, stream);
      return;
    }
    cudaStream_t st = stream_of(stream);
    const last_use use(done_.get(), st);
    // An input whose view is the program's own buffer (input_views) is there already: no copy.
    auto source = [&](std::size_t i) -> const void* { return inputs[i].data == prog_.input(i) ? nullptr : inputs[i].data; };
    if (dense) {
      for (std::size_t i = 0; i < inputs.size(); ++i) srcs_[i] = source(i);
      prog_.launch_io(srcs_, output.data, st);
      return;
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const tensor_view& v = inputs[i];
      if (row_major(v)) {
        srcs_[i] = source(i);
      } else {  // rare: its own strided copy, before the graph
        srcs_[i] = nullptr;
        const std::vector<std::int64_t> rows = row_major_strides(v.shape);
        cuda::launch_strided_copy(cuda::strided_copy_of(v.shape, v.strides, v.data, rows, prog_.input(i), size_of(prog_.type())), st);
      }
    }
    const bool dense_out = row_major(output);
    prog_.launch_io(srcs_, dense_out ? output.data : nullptr, st);
    if (!dense_out) copy_result_out(output, st);
  }

  [[nodiscard]] memory_report memory() const override { return memory_of(prog_); }
  [[nodiscard]] double compile_ms() const override { return prog_.compile_ms(); }
  [[nodiscard]] std::size_t launches() const override { return prog_.launches(); }
  [[nodiscard]] bool uses_graph() const override { return prog_.uses_graph(); }
  [[nodiscard]] std::string graph_note() const override { return prog_.graph_note(); }
  [[nodiscard]] std::vector<int> op_steps() const override { return prog_.op_steps(); }
  [[nodiscard]] std::vector<std::string> op_kernels() const override { return prog_.op_kernels(); }
  [[nodiscard]] int tiled_chosen() const override { return prog_.tiled_chosen(); }
  [[nodiscard]] int tiled_rejected() const override { return prog_.tiled_rejected(); }
  [[nodiscard]] int algos_changed() const override { return prog_.algos_changed(); }
  [[nodiscard]] int kernel_ranks_chosen() const override { return prog_.kernel_ranks_chosen(); }
  [[nodiscard]] int gemm_candidates() const override { return prog_.gemm_candidates(); }
  [[nodiscard]] int gemm_chosen() const override { return prog_.gemm_chosen(); }
  [[nodiscard]] int gemm_algos_chosen() const override { return prog_.gemm_algos_chosen(); }
  [[nodiscard]] int gemm_dropped() const override { return prog_.gemm_dropped(); }
  [[nodiscard]] int dots_chosen() const override { return prog_.dots_chosen(); }
  /// The intermediate layout, "+branches (L lanes, C of N ops on the longest chain)" when the
  /// program runs independent steps at once.
  [[nodiscard]] std::string layout() const override {
    std::string s = layout_name(prog_.intermediate_layout());
    if (prog_.concurrent()) {
      s += "+branches (" + std::to_string(prog_.lanes()) + " lanes, " + std::to_string(prog_.critical_ops()) + " of " +
           std::to_string(prog_.launches()) + " ops on the longest chain)";
    }
    return s;
  }
  /// Each layout timed, then the winner's concurrent variant ("LAYOUT+branches") when it was timed.
  [[nodiscard]] std::vector<std::pair<std::string, double>> layout_times() const override {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [l, ms] : prog_.layout_times()) out.emplace_back(layout_name(l), ms);
    const auto [chain_ms, concurrent_ms] = prog_.branch_times();
    if (concurrent_ms >= 0) {
      if (out.empty()) out.emplace_back(layout_name(prog_.intermediate_layout()), chain_ms);
      out.emplace_back(layout_name(prog_.intermediate_layout()) + "+branches", concurrent_ms);
    }
    return out;
  }
  static std::string layout_name(layout_policy l) { return std::string(name_of(l)); }
  [[nodiscard]] void* input_buffer(std::size_t i) const override { return prog_.input(i); }
  std::vector<float> profile_ops() override {
    const last_use use(done_.get(), bridge_->own());
    return prog_.profile_steps();
  }

 private:
  // Inputs into the program's buffers by launches of their own (dense ones batched into one gather
  // launch, strided ones one strided copy each), the graph, the result out; on the own stream.
  void run_bridged(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream) {
    const stream_bridge::call bridged(*bridge_, stream_of(stream));
    cudaStream_t st = bridge_->own();
    const last_use use(done_.get(), st);
    gather_.clear();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const tensor_view& v = inputs[i];
      if (row_major(v)) {
        gather_.push_back(cuda::gather_entry{v.data, prog_.input(i), prog_.input_bytes(i)});
      } else {
        const std::vector<std::int64_t> dense = row_major_strides(v.shape);
        cuda::launch_strided_copy(cuda::strided_copy_of(v.shape, v.strides, v.data, dense, prog_.input(i), size_of(prog_.type())), st);
      }
    }
    cuda::launch_gather(gather_, st);
    prog_.run(st);
    if (row_major(output)) {
      TNRT_CUDA(cudaMemcpyAsync(output.data, prog_.result(), prog_.result_bytes(), cudaMemcpyDeviceToDevice, st));
    } else {
      copy_result_out(output, st);
    }
  }
  void copy_result_out(const tensor_view& output, cudaStream_t st) {
    const std::vector<std::int64_t> dense = row_major_strides(out_shape_);
    cuda::launch_strided_copy(cuda::strided_copy_of(out_shape_, dense, prog_.result(), output.strides, output.data, size_of(prog_.type())), st);
  }

  std::unique_ptr<compiled_program> owned_;
  compiled_program& prog_;
  std::vector<std::int64_t> out_shape_;
  std::vector<cuda::gather_entry> gather_;  // reused: no allocation per run
  std::vector<const void*> srcs_;           // reused: the io graph's sources
  stream_bridge* bridge_;                   // the backend's (it outlives its programs)
  cuda::event_owner done_;                  // after the latest work on the program's buffers
};

// Sliced programs run on the context's own stream, bridged to the caller's like eager calls (a
// sliced run is long: two events per run are nothing beside it). With `parallel` > 1 (memory for
// that many one-slice programs was found under the limit), a run's slices are split into that
// many contiguous ranges, each run by a program of its own on a stream of its own, the first into
// the caller's output, the others into partial results of their own that the own stream then adds
// in. The side streams start after the own stream (an event) and the own stream waits for them
// before anything else: to the pool and the caller the run stays on the own stream.
class cuda_sliced final : public gpu_sliced {
 public:
  cuda_sliced(engine& eng, const problem& p, std::span<const label_t> labels, std::size_t reserve, std::size_t limit, int parallel,
              stream_bridge& bridge)
      : out_shape_(p.net.shape_of(p.net.output)), bridge_(&bridge) {
    result_bytes_ = static_cast<std::size_t>(element_count(out_shape_)) * size_of(p.type);
    for (int k = 0; k < std::max(parallel, 1); ++k) progs_.push_back(std::make_unique<cuda::sliced_program>(eng, p, labels, reserve, limit));
    for (int k = 1; k < parallel; ++k) {
      cudaStream_t st = nullptr;
      TNRT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      sides_.push_back(stream_owner(st));
      cudaEvent_t e = nullptr;
      TNRT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      joins_.emplace_back(e);
      partials_.emplace_back(eng.pool(), result_bytes_, eng.stream_handle());
    }
    cudaEvent_t e = nullptr;
    TNRT_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    fork_.reset(e);
  }

  void run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, std::int64_t first, std::int64_t count,
           bool zero) override {
    const stream_bridge::call bridged(*bridge_, stream_of(stream));
    ptrs_.assign(inputs.size(), nullptr);
    strides_.assign(inputs.size(), {});
    bool dense = row_major(output);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      ptrs_[i] = inputs[i].data;
      if (!row_major(inputs[i])) {
        strides_[i] = strides_of(inputs[i]);
        dense = false;
      }
    }
    const std::vector<std::int64_t> out_strides = row_major(output) ? std::vector<std::int64_t>{} : strides_of(output);
    const auto in_strides = dense ? std::span<const std::vector<std::int64_t>>() : std::span<const std::vector<std::int64_t>>(strides_);
    cudaStream_t own = bridge_->own();
    // Parallel only into a dense output (the partials are added element by element).
    const auto k = static_cast<std::int64_t>(row_major(output) ? std::min<std::size_t>(progs_.size(), static_cast<std::size_t>(std::max<std::int64_t>(count, 1))) : 1);
    if (k <= 1) {
      progs_[0]->run(ptrs_, in_strides, output.data, out_strides, first, count, zero, own);
      return;
    }
    TNRT_CUDA(cudaEventRecord(fork_.get(), own));
    const std::int64_t base = count / k, extra = count % k;
    std::int64_t at = first;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t n = base + (j < extra ? 1 : 0);
      if (j == 0) {
        progs_[0]->run(ptrs_, in_strides, output.data, out_strides, at, n, zero, own);
      } else {
        cudaStream_t side = sides_[static_cast<std::size_t>(j - 1)].get();
        TNRT_CUDA(cudaStreamWaitEvent(side, fork_.get(), 0));
        progs_[static_cast<std::size_t>(j)]->run(ptrs_, in_strides, partials_[static_cast<std::size_t>(j - 1)].get(), {}, at, n, true, side);
        TNRT_CUDA(cudaEventRecord(joins_[static_cast<std::size_t>(j - 1)].get(), side));
      }
      at += n;
    }
    const auto elems = element_count(out_shape_);
    for (std::int64_t j = 1; j < k; ++j) {
      TNRT_CUDA(cudaStreamWaitEvent(own, joins_[static_cast<std::size_t>(j - 1)].get(), 0));
      cuda::launch_add_dense(output.data, partials_[static_cast<std::size_t>(j - 1)].get(), elems, progs_[0]->elem_kind(), own);
    }
  }
  [[nodiscard]] memory_report memory() const override {
    memory_report m = memory_of(progs_[0]->program());  // one program's; its slice table counts as scratch
    m.scratch_bytes += progs_[0]->device_bytes() - progs_[0]->program().device_bytes();
    m.total_bytes = 0;
    for (const auto& sp : progs_) m.total_bytes += sp->device_bytes();
    m.total_bytes += partials_.size() * device::caching_pool::block_bytes(result_bytes_);
    return m;
  }
  [[nodiscard]] bool uses_graph() const override { return progs_[0]->uses_graph(); }
  ~cuda_sliced() override = default;  // the side streams' work was joined into the own stream by its run
  cuda_sliced(const cuda_sliced&) = delete;
  cuda_sliced& operator=(const cuda_sliced&) = delete;

 private:
  struct stream_deleter {
    void operator()(cudaStream_t s) const noexcept { (void)cudaStreamDestroy(s); }
  };
  using stream_owner = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_deleter>;

  std::vector<std::int64_t> out_shape_;
  std::size_t result_bytes_ = 0;
  stream_bridge* bridge_;
  std::vector<std::unique_ptr<cuda::sliced_program>> progs_;
  std::vector<stream_owner> sides_;
  std::vector<cuda::event_owner> joins_;
  std::vector<device::pool_block> partials_;
  cuda::event_owner fork_;
  std::vector<const void*> ptrs_;
  std::vector<std::vector<std::int64_t>> strides_;
};

class cuda_backend final : public gpu_backend {
 public:
  explicit cuda_backend(const options& opt) : eng_(opt), device_(opt.device), bridge_(eng_.stream()) {}

  void* contract(const problem& p, std::span<const tensor_view> inputs, const tensor_view* output, stream_handle stream) override {
    // Dense row-major inputs and output (the common case) take the analysis without stride lists.
    bool dense = true;
    for (const tensor_view& v : inputs) dense = dense && row_major(v);
    ptrs_.assign(inputs.size(), nullptr);
    for (std::size_t i = 0; i < inputs.size(); ++i) ptrs_[i] = inputs[i].data;
    const stream_bridge::call bridged(bridge_, stream_of(stream));
    cuda::eager_call call;
    call.inputs = ptrs_;
    call.stream = bridge_.own();
    std::vector<std::vector<std::int64_t>> in_strides;
    if (!dense) {
      in_strides.reserve(inputs.size());
      for (const tensor_view& v : inputs) in_strides.push_back(strides_of(v));
      call.input_strides = &in_strides;
    }
    std::vector<std::int64_t> out_strides;
    if (output != nullptr) {
      call.output = output->data;
      if (!row_major(*output)) {
        out_strides = strides_of(*output);
        call.output_strides = &out_strides;
      }
    }
    const cuda::device_operand r = cuda::contract_eager(eng_, p, call);
    return output != nullptr ? nullptr : r.ptr;
  }

  std::unique_ptr<gpu_program> compile(const problem& p) override {
    return std::make_unique<cuda_program>(eng_, p, bridge_);
  }

  std::unique_ptr<gpu_sliced> compile_sliced(const problem& p, std::span<const label_t> labels, std::size_t reserve_bytes,
                                             std::size_t limit_bytes, int parallel) override {
    return std::make_unique<cuda_sliced>(eng_, p, labels, reserve_bytes, limit_bytes, parallel, bridge_);
  }
  std::size_t predict_bytes(const problem& q) override { return compiled_program::predict_bytes(eng_, q); }
  std::size_t slice_table_bytes(const problem& p, std::size_t sliced) override { return cuda::sliced_program::table_bytes_for(p, sliced); }
  bool memory_limit(std::size_t* limit_bytes, std::size_t* available_bytes) override {
    return compiled_program::memory_budget(eng_, limit_bytes, available_bytes);
  }
  void wait(stream_handle stream) override { TNRT_CUDA(cudaStreamSynchronize(stream_of(stream))); }

  void* allocate(std::size_t bytes, stream_handle stream) override { return eng_.pool().allocate(bytes, stream); }
  void deallocate(void* ptr, stream_handle stream) noexcept override {
    try {
      eng_.pool().deallocate(ptr, stream);
    } catch (...) {
      // a block the pool refuses stays allocated: a leak, never a race
    }
  }
  void upload(void* dst, const void* src, std::size_t bytes, stream_handle stream) override {
    TNRT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_of(stream)));
  }
  void download(void* dst, const void* src, std::size_t bytes, stream_handle stream) override {
    TNRT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_of(stream)));
    TNRT_CUDA(cudaStreamSynchronize(stream_of(stream)));
  }
  [[nodiscard]] stream_handle own_stream() const override { return eng_.stream(); }
  [[nodiscard]] counters stats() const override {
    counters c = eng_.stats();
    c.api.bridged_calls = bridge_.bridged();
    return c;
  }
  void synchronize() override { eng_.synchronize(); }

  [[nodiscard]] std::string device_name() const override {
    cudaDeviceProp prop{};
    return cudaGetDeviceProperties(&prop, device_) == cudaSuccess ? std::string(prop.name) : std::string();
  }
  [[nodiscard]] std::string driver_version() const override {
    int v = 0;
    return cudaDriverGetVersion(&v) == cudaSuccess ? version_text(v) : std::string();
  }
  [[nodiscard]] std::string cuda_version() const override {
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? version_text(v) : std::string();
  }
  [[nodiscard]] std::string cutensor_version() const override {
    const std::size_t cv = eng_.api().version;
    return std::to_string(cv / 10000) + "." + std::to_string((cv / 100) % 100) + "." + std::to_string(cv % 100);
  }

 private:
  mutable engine eng_;
  int device_;
  stream_bridge bridge_;
  std::vector<void*> ptrs_;
};

}  // namespace

std::unique_ptr<gpu_backend> make_gpu_backend(const options& opt) { return std::make_unique<cuda_backend>(opt); }

std::string gpu_unavailable_reason(int device) {
  if (auto why = cuda::device_unavailable_reason(device); !why.empty()) return why;
  return cuda::cutensor_unavailable_reason();
}

}  // namespace tnrt::detail
